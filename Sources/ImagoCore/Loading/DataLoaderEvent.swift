import Foundation

/// What a loader's transfers do, for observers (metrics, logs, a network-activity indicator).
///
/// A transfer that reaches the network emits `.started`, then any number of `.retried`, then exactly one `.finished`
/// or `.failed`; a transfer cancelled while still queued emits nothing. `.coalesced` marks a request that joined a
/// transfer already in flight. URLs are given with credentials removed (``URL/redactedString``).
public enum DataLoaderEvent: Sendable, Hashable, CustomStringConvertible {
    /// A transfer began its first attempt.
    case started(url: String, priority: RequestPriority)
    /// A transfer completed with `bytes` of body after `duration` (from start, including retries).
    case finished(url: String, bytes: Int, duration: Duration, status: Int)
    /// A started transfer failed or was cancelled.
    case failed(url: String, error: DataLoadingError)
    /// A request joined a transfer already in flight instead of starting its own.
    case coalesced(url: String)
    /// A transfer failed transiently and retries (`attempt` 1 for the first retry) after `delay`.
    case retried(url: String, attempt: Int, delay: Duration)

    /// A one-line log message.
    public var description: String {
        switch self {
        case .started(let url, let priority): "started \(url) (priority \(priority))"
        case .finished(let url, let bytes, let duration, let status):
            "finished \(url): HTTP \(status), \(bytes) bytes in \(duration)"
        case .failed(let url, let error): "failed \(url): \(error)"
        case .coalesced(let url): "coalesced \(url) into the transfer in flight"
        case .retried(let url, let attempt, let delay): "retry \(attempt) of \(url) in \(delay)"
        }
    }

    /// Whether this event ends a transfer (`.finished` or `.failed`).
    public var isTerminal: Bool {
        switch self {
        case .finished, .failed: true
        case .started, .coalesced, .retried: false
        }
    }
}

/// A token returned when an observer is added; pass it back to remove the observer.
public struct DataLoaderObserverToken: Sendable, Hashable {
    let id: UInt64
}

/// A list of event observers, called outside any lock in the order they were added.
package final class DataLoaderObservers: Sendable {
    private let state = Locked<(next: UInt64, observers: [(UInt64, @Sendable (DataLoaderEvent) -> Void)])>(
        (0, []))

    package init() {}

    /// Adds `observer`; returns its token.
    package func add(_ observer: @escaping @Sendable (DataLoaderEvent) -> Void) -> DataLoaderObserverToken {
        state.withLock { s in
            s.next += 1
            s.observers.append((s.next, observer))
            return DataLoaderObserverToken(id: s.next)
        }
    }

    /// Removes the observer added with `token` (no effect if already removed).
    package func remove(_ token: DataLoaderObserverToken) {
        state.withLock { s in s.observers.removeAll { $0.0 == token.id } }
    }

    /// Whether anyone listens (so events need not be built).
    package var isEmpty: Bool { state.withLock { $0.observers.isEmpty } }

    /// Calls every observer with each event, in order.
    package func emit(_ events: [DataLoaderEvent]) {
        guard !events.isEmpty else { return }
        let observers = state.withLock { $0.observers }
        for event in events {
            for (_, observer) in observers { observer(event) }
        }
    }
}
