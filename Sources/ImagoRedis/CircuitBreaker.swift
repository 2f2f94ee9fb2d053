import Foundation
import ImagoCore

/// Stops calling a node that keeps failing: closed (calls go through) → open after `failureThreshold`
/// consecutive failures (no calls for the back-off) → one probe call → closed again on success, open for twice
/// the back-off (up to `maximumBackoff`) on failure. Thread-safe.
final class CircuitBreaker: Sendable {
    /// Where the breaker stands.
    enum Phase: Sendable, Equatable {
        case closed(consecutiveFailures: Int)
        case open(until: ContinuousClock.Instant, backoff: Duration)
        case probing(backoff: Duration)
    }

    private let threshold: Int
    private let initialBackoff: Duration
    private let maximumBackoff: Duration
    private let state = Locked<(phase: Phase, opens: Int)>((.closed(consecutiveFailures: 0), 0))

    init(failureThreshold: Int, backoff: Duration, maximumBackoff: Duration) {
        threshold = max(1, failureThreshold)
        initialBackoff = backoff
        self.maximumBackoff = max(backoff, maximumBackoff)
    }

    /// Whether a call may go ahead now (the first call after the back-off becomes the probe).
    func admits(now: ContinuousClock.Instant = .now) -> Bool {
        state.withLock { s in
            switch s.phase {
            case .closed: return true
            case .probing: return false
            case .open(let until, let backoff):
                guard now >= until else { return false }
                s.phase = .probing(backoff: backoff)
                return true
            }
        }
    }

    /// Records a call's outcome; returns `true` when this failure opened the breaker.
    @discardableResult
    func record(success: Bool, now: ContinuousClock.Instant = .now) -> Bool {
        state.withLock { s in
            if success {
                s.phase = .closed(consecutiveFailures: 0)
                return false
            }
            switch s.phase {
            case .closed(let failures):
                guard failures + 1 >= threshold else {
                    s.phase = .closed(consecutiveFailures: failures + 1)
                    return false
                }
                s.phase = .open(until: now + initialBackoff, backoff: initialBackoff)
            case .probing(let backoff):
                let next = min(backoff * 2, maximumBackoff)
                s.phase = .open(until: now + next, backoff: next)
            case .open:
                return false  // a call admitted before the breaker opened
            }
            s.opens += 1
            return true
        }
    }

    /// Whether calls are being refused now (open or probing).
    var isOpen: Bool {
        state.withLock { if case .closed = $0.phase { false } else { true } }
    }

    /// How many times the breaker has opened.
    var openCount: Int { state.withLock { $0.opens } }
}
