import Foundation
import ImagoTesting
import Testing

@testable import ImagoCore

@Suite struct WorkQueueIdleTests {
    @Test func waitUntilIdleReturnsAtOnceOnAnIdleQueue() async {
        let queue = WorkQueue(label: "test.idle", maxConcurrentCount: 2)
        await queue.waitUntilIdle()
    }

    @Test func waitUntilIdleWaitsForRunningPendingAndLaterQueuedWork() async {
        // Given one slot, a held closure running and four more pending
        let queue = WorkQueue(label: "test.idle", maxConcurrentCount: 1)
        let gate = HoldGate()
        gate.hold()
        let done = Locked(0)
        for _ in 0..<5 {
            queue.enqueue(priority: .normal) {
                gate.passThrough()
                done.withLock { $0 += 1 }
            }
        }
        #expect(await ImagoTesting.eventually { gate.waitingCount == 1 })
        // When someone waits, and a closure queued meanwhile enqueues one more
        let waiter = Task { await queue.waitUntilIdle() }
        queue.enqueue(priority: .low) {
            queue.enqueue(priority: .low) { done.withLock { $0 += 1 } }
            done.withLock { $0 += 1 }
        }
        gate.release()
        await waiter.value
        // Then every closure, the late one included, had run
        #expect(done.withLock { $0 } == 7)
    }

    @Test func cancellingTheLastPendingClosureOfAnIdleSlotResumesWaiters() async {
        // Given one held closure and one pending
        let queue = WorkQueue(label: "test.idle", maxConcurrentCount: 1)
        let gate = HoldGate()
        gate.hold()
        queue.enqueue(priority: .normal) { gate.passThrough() }
        let pending = queue.enqueue(priority: .normal) {}
        #expect(await ImagoTesting.eventually { gate.waitingCount == 1 })
        let waiter = Task { await queue.waitUntilIdle() }
        // When the pending one is cancelled and the held one finishes
        queue.cancel(pending)
        gate.release()
        // Then the waiter returns
        await waiter.value
        #expect(queue.pendingCount == 0)
    }
}
