import Foundation
import ImagoCore
import ImagoTesting
import Testing

@Suite struct LoadQueueTests {
    /// Records the order items start in.
    final class StartLog: Sendable {
        private let state = Locked<[UInt64]>([])
        func append(_ id: UInt64) { state.withLock { $0.append(id) } }
        var ids: [UInt64] { state.value }
    }

    @Test func runsAtMostTheLimitAtOnce() {
        // Given a queue of 3 slots
        let queue = LoadQueue(maximumConcurrentCount: 3)
        let log = StartLog()
        // When 10 items are enqueued and none finishes
        for id in 1...10 as ClosedRange<UInt64> { queue.enqueue(id: id, priority: .normal) { log.append(id) } }
        // Then 3 run and 7 wait
        #expect(log.ids == [1, 2, 3])
        #expect(queue.runningCount == 3)
        #expect(queue.queuedCount == 7)
        // When one finishes, the next starts
        queue.finish(2)
        #expect(log.ids == [1, 2, 3, 4])
        #expect(queue.maximumObservedRunningCount == 3)
    }

    @Test func startsHigherPriorityFirstThenFIFO() {
        // Given a suspended queue of 1 slot with items of mixed priorities
        let queue = LoadQueue(maximumConcurrentCount: 1)
        let log = StartLog()
        queue.suspend()
        queue.enqueue(id: 1, priority: .low) { log.append(1) }
        queue.enqueue(id: 2, priority: .normal) { log.append(2) }
        queue.enqueue(id: 3, priority: .high) { log.append(3) }
        queue.enqueue(id: 4, priority: .normal) { log.append(4) }
        #expect(log.ids.isEmpty)
        // When resumed and each item finishes in turn
        queue.resume()
        for id in [3, 2, 4, 1] as [UInt64] { queue.finish(id) }
        // Then priority decides first, then arrival order
        #expect(log.ids == [3, 2, 4, 1])
    }

    @Test func lifoStartsNewestFirstWithinPriority() {
        let queue = LoadQueue(maximumConcurrentCount: 1, order: .lifo)
        let log = StartLog()
        queue.suspend()
        for id in 1...4 as ClosedRange<UInt64> { queue.enqueue(id: id, priority: .normal) { log.append(id) } }
        queue.enqueue(id: 5, priority: .low) { log.append(5) }
        queue.resume()
        for id in [4, 3, 2, 1, 5] as [UInt64] { queue.finish(id) }
        #expect(log.ids == [4, 3, 2, 1, 5])
    }

    @Test func raisingPriorityOfQueuedItemMovesItAhead() {
        // Given three waiting low-priority items
        let queue = LoadQueue(maximumConcurrentCount: 1)
        let log = StartLog()
        queue.suspend()
        for id in 1...3 as ClosedRange<UInt64> { queue.enqueue(id: id, priority: .low) { log.append(id) } }
        // When the last is raised, lowered back and raised again (stale entries must be skipped)
        queue.setPriority(.high, for: 3)
        queue.setPriority(.low, for: 3)
        queue.setPriority(.veryHigh, for: 3)
        queue.resume()
        for id in [3, 1, 2] as [UInt64] { queue.finish(id) }
        // Then it starts first and exactly once
        #expect(log.ids == [3, 1, 2])
    }

    @Test func suspendedQueueStartsNothingButRunningItemsContinue() {
        let queue = LoadQueue(maximumConcurrentCount: 2)
        let log = StartLog()
        queue.enqueue(id: 1, priority: .normal) { log.append(1) }
        queue.suspend()
        queue.enqueue(id: 2, priority: .normal) { log.append(2) }
        queue.finish(1)
        #expect(log.ids == [1])
        #expect(queue.runningCount == 0)
        #expect(queue.queuedCount == 1)
        queue.resume()
        #expect(log.ids == [1, 2])
    }

    @Test func finishingQueuedItemRemovesItAndIsIdempotent() {
        let queue = LoadQueue(maximumConcurrentCount: 1)
        let log = StartLog()
        queue.enqueue(id: 1, priority: .normal) { log.append(1) }
        queue.enqueue(id: 2, priority: .normal) { log.append(2) }
        queue.enqueue(id: 3, priority: .normal) { log.append(3) }
        #expect(queue.finish(2) == true)  // was waiting
        #expect(queue.finish(2) == false)
        queue.finish(1)
        queue.finish(1)  // a second finish must not free a second slot
        #expect(log.ids == [1, 3])
        #expect(queue.runningCount == 1)
    }

    @Test func cancelAllCancelsQueuedAndRunningItems() {
        let queue = LoadQueue(maximumConcurrentCount: 1)
        let cancelled = StartLog()
        let started = StartLog()
        for id in 1...3 as ClosedRange<UInt64> {
            queue.enqueue(id: id, priority: .normal, onCancel: { cancelled.append(id) }) { started.append(id) }
        }
        queue.cancelAll()
        #expect(started.ids == [1])
        #expect(cancelled.ids.sorted() == [1, 2, 3])
        #expect(queue.runningCount == 0 && queue.queuedCount == 0)
        // A later item starts at once: no slot leaked
        queue.enqueue(id: 4, priority: .normal) { started.append(4) }
        #expect(started.ids == [1, 4])
    }

    @Test func concurrentUseNeverExceedsLimit() async {
        // Given a queue of 4 slots and 400 items finished from many tasks
        let queue = LoadQueue(maximumConcurrentCount: 4)
        let running = Locked((now: 0, peak: 0, done: 0))
        await withTaskGroup(of: Void.self) { group in
            for id in 1...400 as ClosedRange<UInt64> {
                group.addTask {
                    queue.enqueue(id: id, priority: RequestPriority(rawValue: Int(id % 5)) ?? .normal) {
                        running.withLock { $0.now += 1; $0.peak = max($0.peak, $0.now) }
                        Task {
                            running.withLock { $0.now -= 1; $0.done += 1 }
                            queue.finish(id)
                        }
                    }
                }
            }
        }
        #expect(await ImagoTesting.eventually { running.value.done == 400 })
        #expect(running.value.peak <= 4)
        #expect(queue.maximumObservedRunningCount == 4)
    }
}
