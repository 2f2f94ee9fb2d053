/// Work started in tasks of their own, counted until each ends, so a caller can wait until none runs (writes sent
/// to a shared cache tier after the response, which a stop must not drop).
package final class BackgroundTasks: Sendable {
    private struct State {
        var running = 0
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Locked(State())

    /// No work running.
    package init() {}

    /// Runs `work` in a detached task, counted until it ends.
    package func run(_ work: @escaping @Sendable () async -> Void) {
        state.withLock { $0.running += 1 }
        Task.detached { [self] in
            await work()
            let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
                s.running -= 1
                guard s.running == 0 else { return [] }
                defer { s.idleWaiters = [] }
                return s.idleWaiters
            }
            for waiter in waiters { waiter.resume() }
        }
    }

    /// Returns once no work started with ``run(_:)`` runs.
    package func waitUntilIdle() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let isIdle = state.withLock { s -> Bool in
                if s.running == 0 { return true }
                s.idleWaiters.append(continuation)
                return false
            }
            if isIdle { continuation.resume() }
        }
    }
}
