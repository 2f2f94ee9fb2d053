import Foundation
import ImagoTesting
import Testing

@testable import ImagoCore

@Suite struct WorkQueueYieldTests {
    @Test(.timeLimit(.minutes(1)))
    func aQueueThatYieldsStillRunsEveryClosureMostUrgentFirst() async {
        // Given a yielding queue with one slot, held by a first closure, and closures of three priorities pending
        let queue = WorkQueue(label: "test.yield", maxConcurrentCount: 1, yieldsAfterEachClosure: true)
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

    @Test func onlyARealTimeThreadYields() async throws {
        // Given this thread's policy as the kernel reports it
        let kernelPolicy = sched_getscheduler(0)
        // Then the queue's check agrees with it
        #expect(WorkQueue.runsUnderRealTimePolicy() == (kernelPolicy == SCHED_FIFO || kernelPolicy == SCHED_RR))

        // When a thread of its own is switched to SCHED_FIFO (where the process may do so)
        let seen = Locked<(set: Bool, realTime: Bool)?>(nil)
        let thread = Thread {
            var parameters = sched_param()
            parameters.sched_priority = 1
            let set = pthread_setschedparam(pthread_self(), SCHED_FIFO, &parameters) == 0
            seen.withLock { $0 = (set, WorkQueue.runsUnderRealTimePolicy()) }
        }
        thread.start()
        #expect(await ImagoTesting.eventually { seen.withLock { $0 } != nil })
        // Then the check sees the real-time policy
        let result = try #require(seen.withLock { $0 })
        try #require(result.set, "this process may not use SCHED_FIFO")
        #expect(result.realTime)
    }
}
