import Foundation
import Synchronization
import Testing

@testable import ImagoCore

@Suite struct LockedTests {
    @Test func contendedIncrementsAreNeverLost() {
        // Given a plain (non-atomic) counter and a list behind one lock
        let locked = Locked((count: 0, order: [Int]()))
        let threads = 4
        let increments = 50_000
        // When 4 threads each add 50,000 times, every 1,000th time holding the lock across a 200 µs sleep, so the
        // others exhaust their spinning and park
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for index in 0..<increments {
                locked.withLock { state in
                    let before = state.count
                    if index % 1000 == 0 {
                        usleep(200)
                        state.order.append(thread)
                    }
                    state.count = before + 1
                }
            }
        }
        // Then no increment was lost across the read-sleep-write windows
        let state = locked.value
        #expect(state.count == threads * increments)
        #expect(state.order.count == threads * increments / 1000)
    }

    @Test func waitersParkBehindALongHolderAndAllGetTheLock() {
        // Given a lock held for 100 ms (far beyond the spin budget of tens of microseconds)
        let locked = Locked(0)
        let parksBefore = ParkingLot.parkCount.load(ordering: .relaxed)
        let holding = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        Thread {
            locked.withLock { value in
                holding.signal()
                usleep(100_000)
                value += 1
            }
            finished.signal()
        }.start()
        holding.wait()
        // When three more threads ask for it (threads of their own: a dispatch queue would not start more workers
        // than cores while one sleeps)
        for _ in 0..<3 {
            Thread {
                locked.withLock { $0 += 1 }
                finished.signal()
            }.start()
        }
        // Then they park rather than spin the whole time, are woken by the release, and each gets the lock
        for _ in 0..<4 { #expect(finished.wait(timeout: .now() + 10) == .success) }
        #expect(locked.value == 4)
        #expect(ParkingLot.parkCount.load(ordering: .relaxed) > parksBefore)
    }
}
