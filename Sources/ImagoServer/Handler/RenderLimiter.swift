import ImagoCore

/// Bounds the renders (load, decode, process, encode) in progress to `workers`, with at most `queueLimit` more
/// waiting; past that a render is refused at once so the server can answer 503 instead of piling up work.
final class RenderLimiter: Sendable {
    private struct State {
        var running = 0
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Locked(State())
    private let workers: Int
    private let queueLimit: Int

    init(workers: Int, queueLimit: Int) {
        self.workers = max(1, workers)
        self.queueLimit = max(0, queueLimit)
    }

    /// Renders waiting for a worker.
    var queueLength: Int { state.withLock { $0.waiting.count } }

    /// Renders running.
    var running: Int { state.withLock { $0.running } }

    /// Waits for a worker; `false` when the queue is full (nothing was taken).
    func acquire() async -> Bool {
        enum Decision { case run, wait, refuse }
        let decision = state.withLock { s -> Decision in
            if s.running < workers {
                s.running += 1
                return .run
            }
            return s.waiting.count < queueLimit ? .wait : .refuse
        }
        switch decision {
        case .run: return true
        case .refuse: return false
        case .wait:
            await withCheckedContinuation { continuation in
                let runsNow = state.withLock { s -> Bool in
                    if s.running < workers {
                        s.running += 1
                        return true
                    }
                    s.waiting.append(continuation)
                    return false
                }
                if runsNow { continuation.resume() }
            }
            return true
        }
    }

    /// Gives the worker back; the longest waiter takes it over.
    func release() {
        let next = state.withLock { s -> CheckedContinuation<Void, Never>? in
            if s.waiting.isEmpty {
                s.running -= 1
                return nil
            }
            return s.waiting.removeFirst()
        }
        next?.resume()
    }
}
