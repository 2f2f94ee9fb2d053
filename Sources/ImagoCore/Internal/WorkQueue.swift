import Dispatch

/// A bounded, priority-ordered queue: at most `maxConcurrentCount` closures run at once on Dispatch's global pool,
/// the most urgent pending one starting next (first come, first served within a priority).
///
/// Decoding, processing, encoding and disk I/O each get one, sized to the cores, so that a burst of requests
/// never floods the machine with threads.
///
/// Not a coalescer: it runs every closure it is given. Sharing identical work between requests is
/// ``WorkGraph``'s job, which decides what runs; this queue decides when it runs.
package final class WorkQueue: Sendable {
    /// A pending or running closure; cancel it or change its priority through the queue.
    package final class Item: @unchecked Sendable {
        // @unchecked Sendable: `priority` and `work` are only touched under the owning queue's lock.
        fileprivate var priority: RequestPriority
        fileprivate let sequence: Int
        fileprivate var work: (@Sendable () -> Void)?

        fileprivate init(priority: RequestPriority, sequence: Int, work: @escaping @Sendable () -> Void) {
            self.priority = priority
            self.sequence = sequence
            self.work = work
        }
    }

    private struct State {
        var pending: [Item] = []
        var running = 0
        var sequence = 0
        var limit: Int
        /// Callers of ``waitUntilIdle()`` to resume once nothing is pending or running.
        var idleWaiters: [CheckedContinuation<Void, Never>] = []

        var isIdle: Bool { running == 0 && pending.allSatisfy { $0.work == nil } }
    }

    private let state: Locked<State>
    private let dispatchQueue: DispatchQueue

    /// A queue running at most `maxConcurrentCount` (≥ 1) closures at once.
    package init(label: String, maxConcurrentCount: Int) {
        state = Locked(State(limit: max(1, maxConcurrentCount)))
        dispatchQueue = DispatchQueue(label: label, attributes: .concurrent)
    }

    /// Queues `work`; it runs when a slot is free and nothing more urgent waits.
    @discardableResult
    package func enqueue(priority: RequestPriority, _ work: @escaping @Sendable () -> Void) -> Item {
        let (item, next) = state.withLock { s -> (Item, [@Sendable () -> Void]) in
            s.sequence += 1
            let item = Item(priority: priority, sequence: s.sequence, work: work)
            s.pending.append(item)
            return (item, Self._dequeue(&s))
        }
        start(next)
        return item
    }

    /// Drops `item` if it has not started; a running closure finishes.
    package func cancel(_ item: Item) {
        let idleWaiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            guard item.work != nil else { return [] }
            item.work = nil
            s.pending.removeAll { $0 === item }
            guard s.isIdle else { return [] }
            defer { s.idleWaiters = [] }
            return s.idleWaiters
        }
        for waiter in idleWaiters { waiter.resume() }
    }

    /// Whether nothing is pending or running right now.
    package var isIdle: Bool { state.withLock { $0.isIdle } }

    /// How many callers of ``waitUntilIdle()`` are waiting now (for tests that must know a waiter is parked).
    package var idleWaiterCount: Int { state.withLock { $0.idleWaiters.count } }

    /// Changes the priority of a pending `item`.
    package func setPriority(_ item: Item, _ priority: RequestPriority) {
        state.withLock { _ in item.priority = priority }
    }

    /// How many closures are waiting.
    package var pendingCount: Int { state.withLock { $0.pending.count } }

    /// Returns once no closure is pending or running (at once when the queue is idle). Closures queued while
    /// waiting are waited for too. For shutdown paths: flushing what was handed to the queue.
    package func waitUntilIdle() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let isIdle = state.withLock { s -> Bool in
                if s.isIdle { return true }
                s.idleWaiters.append(continuation)
                return false
            }
            if isIdle { continuation.resume() }
        }
    }

    private func start(_ works: [@Sendable () -> Void]) {
        for work in works {
            dispatchQueue.async { [self] in
                work()
                let (next, idleWaiters) = state.withLock {
                    s -> ([@Sendable () -> Void], [CheckedContinuation<Void, Never>]) in
                    s.running -= 1
                    let next = Self._dequeue(&s)
                    guard next.isEmpty, s.isIdle else { return (next, []) }
                    defer { s.idleWaiters = [] }
                    return (next, s.idleWaiters)
                }
                start(next)
                for waiter in idleWaiters { waiter.resume() }
            }
        }
    }

    /// Takes the most urgent pending items while slots are free (lock held).
    private static func _dequeue(_ s: inout State) -> [@Sendable () -> Void] {
        var taken: [@Sendable () -> Void] = []
        while s.running < s.limit, !s.pending.isEmpty {
            var best = 0
            for i in s.pending.indices.dropFirst() {
                let a = s.pending[i]
                let b = s.pending[best]
                if a.priority > b.priority || (a.priority == b.priority && a.sequence < b.sequence) { best = i }
            }
            let item = s.pending.remove(at: best)
            guard let work = item.work else { continue }
            item.work = nil
            s.running += 1
            taken.append(work)
        }
        return taken
    }
}
