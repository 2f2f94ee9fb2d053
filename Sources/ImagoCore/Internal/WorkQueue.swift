import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A bounded, priority-ordered queue of synchronous closures run on Dispatch's global pool: at most
/// `maxConcurrentCount` at once, the most urgent pending one starting next (first come, first served within a
/// priority).
///
/// Decoding, processing, encoding and disk I/O each get one, sized to the cores, so that a burst of requests
/// never floods the machine with threads.
///
/// The ordering and the slots are ``LoadQueue``'s (the one priority queue of the project): a closure's slot is taken
/// from it and given back when the closure returns. This type adds what closures need and transfers do not: the
/// Dispatch queue they run on, cancellation by item, and ``waitUntilIdle()``.
/// Not a coalescer: it runs every closure it is given. Sharing identical work between requests is
/// ``WorkGraph``'s job, which decides what runs; this queue decides when it runs.
package final class WorkQueue: Sendable {
    /// A pending or running closure; cancel it or change its priority through the queue.
    package final class Item: Sendable {
        fileprivate let id: UInt64

        fileprivate init(id: UInt64) { self.id = id }
    }

    private struct State {
        /// The closures not yet begun, by item id.
        var pending: [UInt64: @Sendable () -> Void] = [:]
        var running = 0
        var nextID: UInt64 = 0
        /// Callers of ``waitUntilIdle()`` to resume once nothing is pending or running.
        var idleWaiters: [CheckedContinuation<Void, Never>] = []

        var isIdle: Bool { running == 0 && pending.isEmpty }

        /// The waiters to resume when the queue just became idle (taken out of the state).
        mutating func takeIdleWaiters() -> [CheckedContinuation<Void, Never>] {
            guard isIdle, !idleWaiters.isEmpty else { return [] }
            defer { idleWaiters = [] }
            return idleWaiters
        }
    }

    private let state = Locked(State())
    private let slots: LoadQueue
    private let dispatchQueue: DispatchQueue
    private let givesWayToOtherThreads: Bool
    /// Set once the thread's own real-time priority could not be given back after a closure (see
    /// `runOneStepBelowThreadPriority`); from then on closures run at the thread's priority.
    private let priorityRestoreRefused = Atomic(false)

    /// A queue running at most `maxConcurrentCount` (≥ 1) closures at once.
    ///
    /// With `givesWayToOtherThreads` (default `false`) each closure leaves room for the process's other threads:
    /// under a real-time policy (`SCHED_FIFO`, `SCHED_RR`) it runs one priority step below its thread's own, and
    /// after each closure the thread yields its core (`sched_yield`). Under a real-time policy a busy thread is never
    /// preempted by threads of its own priority, so a queue that always has closures waiting kept its cores until it
    /// ran dry, and an event loop or a loader's thread waited that long. Under the default policy the kernel
    /// time-slices anyway and this costs a syscall or two per closure.
    package init(label: String, maxConcurrentCount: Int, givesWayToOtherThreads: Bool = false) {
        slots = LoadQueue(maximumConcurrentCount: maxConcurrentCount)
        dispatchQueue = DispatchQueue(label: label, attributes: .concurrent)
        self.givesWayToOtherThreads = givesWayToOtherThreads
    }

    /// Queues `work`; it runs when a slot is free and nothing more urgent waits.
    @discardableResult
    package func enqueue(priority: RequestPriority, _ work: @escaping @Sendable () -> Void) -> Item {
        let id = state.withLock { s -> UInt64 in
            s.nextID += 1
            s.pending[s.nextID] = work
            return s.nextID
        }
        slots.enqueue(id: id, priority: priority) { [self] in dispatchQueue.async { self.run(id) } }
        return Item(id: id)
    }

    /// Runs the closure of `id` in the slot it was given (nothing when it was cancelled meanwhile).
    private func run(_ id: UInt64) {
        guard
            let work = state.withLock({ s -> (@Sendable () -> Void)? in
                guard let work = s.pending.removeValue(forKey: id) else { return nil }
                s.running += 1
                return work
            })
        else { return }  // cancelled after its slot was granted: the cancel gave the slot back
        if givesWayToOtherThreads { runOneStepBelowThreadPriority(work) } else { work() }
        let idleWaiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.running -= 1
            return s.takeIdleWaiters()
        }
        slots.finish(id)
        for waiter in idleWaiters { waiter.resume() }
        if givesWayToOtherThreads { sched_yield() }
    }

    /// Runs `work` one real-time priority step below the thread's own when the thread runs under `SCHED_FIFO` or
    /// `SCHED_RR` (the process's other threads at that priority then preempt it), and gives the priority back after.
    /// Under any other policy, at the lowest real-time priority, or once giving a priority back was refused (a
    /// process without `CAP_SYS_NICE` whose real-time priority was set by its parent), `work` runs as it is.
    func runOneStepBelowThreadPriority(_ work: @Sendable () -> Void) {
        var policy: Int32 = 0
        var own = sched_param()
        let thread = pthread_self()
        guard !priorityRestoreRefused.load(ordering: .relaxed),
            pthread_getschedparam(thread, &policy, &own) == 0, policy == SCHED_FIFO || policy == SCHED_RR,
            own.sched_priority > sched_get_priority_min(policy)
        else { return work() }
        var lower = own
        lower.sched_priority -= 1
        guard pthread_setschedparam(thread, policy, &lower) == 0 else { return work() }
        work()
        if pthread_setschedparam(thread, policy, &own) != 0 { priorityRestoreRefused.store(true, ordering: .relaxed) }
    }

    /// Drops `item` if it has not started; a running closure finishes.
    package func cancel(_ item: Item) {
        let (wasPending, idleWaiters) = state.withLock { s -> (Bool, [CheckedContinuation<Void, Never>]) in
            guard s.pending.removeValue(forKey: item.id) != nil else { return (false, []) }
            return (true, s.takeIdleWaiters())
        }
        if wasPending { slots.finish(item.id) }
        for waiter in idleWaiters { waiter.resume() }
    }

    /// Whether nothing is pending or running right now.
    package var isIdle: Bool { state.withLock { $0.isIdle } }

    /// How many callers of ``waitUntilIdle()`` are waiting now (for tests that must know a waiter is parked).
    package var idleWaiterCount: Int { state.withLock { $0.idleWaiters.count } }

    /// Changes the priority of a pending `item`.
    package func setPriority(_ item: Item, _ priority: RequestPriority) {
        slots.setPriority(priority, for: item.id)
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
}
