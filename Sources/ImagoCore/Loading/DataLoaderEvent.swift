import Foundation

/// What a loader's transfers do, for observers (metrics, logs, a network-activity indicator).
///
/// A transfer that reaches the network emits `.started`, then any number of `.retried`, then exactly one `.finished`
/// or `.failed`; a transfer cancelled while still queued emits nothing. `.coalesced` marks a request that joined a
/// transfer already in flight. URLs are given with credentials removed (`URL.redactedString`).
///
/// `.measured` carries the wire timings (DNS, connect, TLS, first byte, total, HTTP version, remote address) of an
/// attempt that ended on the wire (not one the loader ended itself, e.g. on a refused head), from a loader that can
/// see them (the libcurl loader); it comes just before that attempt's
/// `.retried`, `.finished` or `.failed`, and only to observers added with `includingMetrics: true`, so the event
/// grammar above is unchanged for the others.
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
    /// How an attempt of a transfer went on the wire (see ``TransferMetrics``); before its outcome event.
    case measured(url: String, metrics: TransferMetrics)

    /// A one-line log message.
    public var description: String {
        switch self {
        case .started(let url, let priority): "started \(url) (priority \(priority))"
        case .finished(let url, let bytes, let duration, let status):
            "finished \(url): HTTP \(status), \(bytes) bytes in \(duration)"
        case .failed(let url, let error): "failed \(url): \(error)"
        case .coalesced(let url): "coalesced \(url) into the transfer in flight"
        case .retried(let url, let attempt, let delay): "retry \(attempt) of \(url) in \(delay)"
        case .measured(let url, let metrics): "measured \(url): \(metrics)"
        }
    }

    /// Whether this event ends a transfer (`.finished` or `.failed`).
    public var isTerminal: Bool {
        switch self {
        case .finished, .failed: true
        case .started, .coalesced, .retried, .measured: false
        }
    }
}

/// A token returned when an observer is added; pass it back to remove the observer.
public struct DataLoaderObserverToken: Sendable, Hashable {
    let id: UInt64
}
