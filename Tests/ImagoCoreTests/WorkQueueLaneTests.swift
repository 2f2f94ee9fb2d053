import Foundation
import ImagoTesting
import Testing

@testable import ImagoCore

@Suite struct WorkQueueLaneTests {
    @Test(.timeLimit(.minutes(1)))
    func closuresKeepingEveryCoreBusyLeaveSwiftsExecutorFree() async {
        // Given a queue with twice as many slots as cores, every slot held by a closure that keeps a core busy until
        // the test's task tells it to stop, or gives up after 5 s
        let closures = 2 * ProcessInfo.processInfo.activeProcessorCount
        let queue = WorkQueue(label: "test.lanes", maxConcurrentCount: closures)
        let stop = Locked(false)
        let ended = Locked<(started: Int, stopped: Int, gaveUp: Int)>((0, 0, 0))
        for _ in 0..<closures {
            queue.enqueue(priority: .normal) {
                ended.withLock { $0.started += 1 }
                let deadline = ContinuousClock.now + .seconds(5)
                while !stop.withLock({ $0 }), ContinuousClock.now < deadline {}
                let stopped = stop.withLock { $0 }
                ended.withLock { stopped ? ($0.stopped += 1) : ($0.gaveUp += 1) }
            }
        }
        // When they have all started, and then this task (on Swift's global executor) tells them to stop
        #expect(await ImagoTesting.eventually { ended.withLock { $0.started } == closures })
        stop.withLock { $0 = true }
        await queue.waitUntilIdle()
        // Then this task ran while they were busy: each was stopped by it, none gave up. When the closures ran on
        // the executor's own threads (Dispatch's global concurrent queue, one thread per core) the task could not
        // run until they gave up.
        let result = ended.withLock { $0 }
        #expect(result.stopped == closures)
        #expect(result.gaveUp == 0)
    }
}
