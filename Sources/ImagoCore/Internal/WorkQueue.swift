import Dispatch

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A bounded, priority-ordered queue of synchronous closures: at most `maxConcurrentCount` at once, the most urgent
/// pending one starting next (first come, first served within a priority), each on a serial Dispatch queue of its
/// own (a lane), never on the threads of Swift's global executor.
///
/// Decoding, processing, encoding and disk I/O each get one, sized to the cores, so that a burst of requests
/// never floods the machine with threads.
///
/// The ordering and the slots are ``LoadQueue``'s (the one priority queue of the project): a closure's slot is taken
/// from it and given back when the closure returns. This type adds what closures need and transfers do not: the
/// lanes they run on, cancellation by item, and ``waitUntilIdle()``.
///
/// Why lanes: on Linux Swift's global executor runs tasks on Dispatch's global concurrent queue, one thread per
/// core, and a concurrent Dispatch queue runs its closures on those same threads. A closure of milliseconds (a
/// decode, an encode) held one of them, so every task step behind it (a fetch's completion, a response, the next
/// request's start) waited for the closure to end. A serial queue runs on Dispatch's overcommitting pool, which
/// gives it a thread of its own when the others are busy: the kernel then time-slices the closures with the tasks,
/// which are short (BENCHMARKS.md, stop 46).
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
    /// Serial queues not running a closure now: one is taken when a closure starts and given back when it ends.
    /// A queue has at most as many closures running as slots, so `maxConcurrentCount` lanes are made at the start;
    /// one more is made only when a closure cancelled after its slot was granted still holds its lane.
    private let idleLanes: Locked<[DispatchQueue]>
    private let label: String
    private let yieldsAfterEachClosure: Bool

    /// The process's queue for work that waits rather than computes (a file load, a credential command, a disk
    /// cache's flush): 4 at once. Dispatch's global queue is no place for it: on Linux it is the pool Swift's
    /// executor runs tasks on, and while its threads wait every task waits, until Dispatch adds a thread seconds
    /// later.
    package static let blocking = WorkQueue(label: "imago.blocking", maxConcurrentCount: 4)

    /// A queue running at most `maxConcurrentCount` (≥ 1) closures at once.
    ///
    /// With `yieldsAfterEachClosure` (default `false`) a thread running under a real-time policy (`SCHED_FIFO`,
    /// `SCHED_RR`) gives up its core (`sched_yield`) after each closure, so that threads waiting for a core run
    /// before the next closure starts. Under a real-time policy a busy thread is never preempted by threads of its
    /// own priority: a queue that always has closures waiting would otherwise keep its cores until it runs dry, and
    /// an event loop or a loader's thread would wait that long. Under the default policy the kernel time-slices
    /// anyway, so the thread does not yield: the call would cost a syscall and a context switch for nothing.
    package init(label: String, maxConcurrentCount: Int, yieldsAfterEachClosure: Bool = false) {
        slots = LoadQueue(maximumConcurrentCount: maxConcurrentCount)
        idleLanes = Locked((0..<max(1, maxConcurrentCount)).map { DispatchQueue(label: "\(label).\($0)") })
        self.label = label
        self.yieldsAfterEachClosure = yieldsAfterEachClosure
    }

    /// Queues `work`; it runs when a slot is free and nothing more urgent waits.
    @discardableResult
    package func enqueue(priority: RequestPriority, _ work: @escaping @Sendable () -> Void) -> Item {
        let id = state.withLock { s -> UInt64 in
            s.nextID += 1
            s.pending[s.nextID] = work
            return s.nextID
        }
        slots.enqueue(id: id, priority: priority) { [self] in
            let lane = idleLanes.withLock { $0.popLast() } ?? DispatchQueue(label: "\(label).extra")
            lane.async { self.run(id, on: lane) }
        }
        return Item(id: id)
    }

    /// Runs `work` as ``enqueue(priority:_:)`` does and returns its result to the awaiting task, whose thread is
    /// free meanwhile. Not cancellable: the task waits for `work` to end.
    package func value<T: Sendable>(priority: RequestPriority, _ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            enqueue(priority: priority) { continuation.resume(returning: work()) }
        }
    }

    /// Runs the closure of `id` in the slot it was given (nothing when it was cancelled meanwhile), then gives
    /// `lane` back before the slot, so that the closure the slot goes to next finds it idle.
    private func run(_ id: UInt64, on lane: DispatchQueue) {
        guard
            let work = state.withLock({ s -> (@Sendable () -> Void)? in
                guard let work = s.pending.removeValue(forKey: id) else { return nil }
                s.running += 1
                return work
            })
        else {  // cancelled after its slot was granted: the cancel gave the slot back
            idleLanes.withLock { $0.append(lane) }
            return
        }
        work()
        let idleWaiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.running -= 1
            return s.takeIdleWaiters()
        }
        idleLanes.withLock { $0.append(lane) }
        slots.finish(id)
        for waiter in idleWaiters { waiter.resume() }
        if yieldsAfterEachClosure && Self.runsUnderRealTimePolicy() { sched_yield() }
    }

    /// Whether the calling thread's scheduling policy is real-time (`SCHED_FIFO` or `SCHED_RR`). glibc keeps the
    /// policy in the thread's descriptor after the first call, so this costs no syscall per closure.
    package static func runsUnderRealTimePolicy() -> Bool {
        var policy: Int32 = 0
        var parameters = sched_param()
        guard pthread_getschedparam(pthread_self(), &policy, &parameters) == 0 else { return false }
        return policy == SCHED_FIFO || policy == SCHED_RR
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
