import Foundation
import ImagoTesting
import Testing

@testable import ImagoCore

@Suite struct WorkQueueYieldTests {
    @Test(.timeLimit(.minutes(1)))
    func aQueueThatYieldsStillRunsEveryClosureMostUrgentFirst() async {
        // Given a yielding queue with one slot, held by a first closure, and closures of three priorities pending
        let queue = WorkQueue(label: "test.yield", maxConcurrentCount: 1, givesWayToOtherThreads: true)
        let gate = HoldGate()
        gate.hold()
        let order = Locked<[String]>([])
        queue.enqueue(priority: .normal) { gate.passThrough() }
        #expect(await ImagoTesting.eventually { gate.waitingCount == 1 })
        for (name, priority) in [("low", RequestPriority.low), ("normal", .normal), ("high", .high)] {
            for i in 0..<3 { queue.enqueue(priority: priority) { order.withLock { $0.append("\(name)\(i)") } } }
        }
        // When the slot is given back
        gate.release()
        await queue.waitUntilIdle()
        // Then they ran one at a time, highest priority first, in arrival order within a priority
        #expect(
            order.withLock { $0 } == [
                "high0", "high1", "high2", "normal0", "normal1", "normal2", "low0", "low1", "low2",
            ])
    }
}

#if canImport(Glibc)
    import Glibc

    extension WorkQueueYieldTests {
        /// The calling thread's SCHED_FIFO priority, or -1 under another policy.
        static func fifoPriority() -> Int32 {
            var policy: Int32 = 0
            var param = sched_param()
            pthread_getschedparam(pthread_self(), &policy, &param)
            return policy == SCHED_FIFO ? param.sched_priority : -1
        }

        @Test(.timeLimit(.minutes(1)))
        func underSCHEDFIFOAClosureRunsOnePriorityStepBelowItsThread() async throws {
            let queue = WorkQueue(label: "test.way", maxConcurrentCount: 1, givesWayToOtherThreads: true)
            // (before, during the closure, after) on a thread at SCHED_FIFO 20; nil where that is not permitted
            let seen = Locked<(Int32, Int32, Int32)?>(nil)
            let done = DispatchSemaphore(value: 0)
            let thread = Thread {
                defer { done.signal() }
                var param = sched_param(sched_priority: 20)
                guard pthread_setschedparam(pthread_self(), SCHED_FIFO, &param) == 0 else { return }
                let during = Locked<Int32>(0)
                queue.runOneStepBelowThreadPriority { during.withLock { $0 = Self.fifoPriority() } }
                seen.withLock { $0 = (20, during.value, Self.fifoPriority()) }
            }
            thread.start()
            await withCheckedContinuation { continuation in
                DispatchQueue.global().async {
                    done.wait()
                    continuation.resume()
                }
            }
            // Where real-time priorities may be set (as root, or with CAP_SYS_NICE): 19 during, 20 again after
            guard let (before, during, after) = seen.value else { return }
            #expect(before == 20 && during == 19 && after == 20)
        }
    }
#endif
