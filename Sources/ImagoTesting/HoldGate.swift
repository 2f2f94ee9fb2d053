import Dispatch
import ImagoCore

/// A switch that makes the work of a test double wait while it is held, so a test can set up a race on
/// purpose: hold, start work, check what is in flight, release.
public final class HoldGate: Sendable {
    private struct State {
        var isHeld = false
        var waiting: [DispatchSemaphore] = []
    }
    private let state = Locked(State())

    /// A gate that is open (not held).
    public init() {}

    /// Makes later callers of ``passThrough()`` wait until ``release()``.
    public func hold() { state.withLock { $0.isHeld = true } }

    /// Lets waiting and later callers through.
    public func release() {
        let waiting = state.withLock { s -> [DispatchSemaphore] in
            s.isHeld = false
            defer { s.waiting = [] }
            return s.waiting
        }
        for semaphore in waiting { semaphore.signal() }
    }

    /// How many callers wait now.
    public var waitingCount: Int { state.withLock { $0.waiting.count } }

    /// Returns at once when open; blocks the calling thread while held.
    public func passThrough() {
        let semaphore = state.withLock { s -> DispatchSemaphore? in
            guard s.isHeld else { return nil }
            let semaphore = DispatchSemaphore(value: 0)
            s.waiting.append(semaphore)
            return semaphore
        }
        semaphore?.wait()
    }
}
