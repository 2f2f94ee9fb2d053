import Foundation

/// The network half of a loader: moves one attempt's bytes (URLSession in ``HTTPDataLoader``, libcurl in
/// `ImagoCurl`'s loader). Everything above the wire — priorities, limits, coalescing, validation, retries, resume,
/// progress and events — is the ``LoadCoordinator``'s, the same for every transport.
///
/// A transport makes a handle for an attempt, starts it when asked, and reports back through the attempt's
/// callbacks (``LoadAttempt/didReceiveHead(_:)``, ``LoadAttempt/didReceive(_:)``, ``LoadAttempt/didFinish(_:)``),
/// from any one thread at a time per attempt.
package protocol LoadTransporting: AnyObject, Sendable {
    /// A handle for `attempt` (not started yet), or `nil` when the transport cannot make one.
    func makeHandle(for attempt: LoadAttempt) -> (any LoadTransportHandle)?

    /// Releases the transport after the coordinator cancelled every handle (the loader is going away).
    func close()
}

/// One attempt on the wire.
package protocol LoadTransportHandle: AnyObject, Sendable {
    /// Puts the attempt on the network.
    func start()

    /// Ends the attempt at once (the server sees the connection or stream closed); no callback follows, or late
    /// ones are ignored. Idempotent.
    func cancel()
}

/// A final response head (not a 1xx, not a redirect that is followed), as a transport saw it.
package struct LoadResponseHead: Sendable {
    /// The status code.
    package let status: Int
    /// Names lowercased; repeated fields joined with ", ".
    package let headers: [String: String]
    /// `Content-Length`, or -1 when not sent.
    package let contentLength: Int64
    /// The URL that answered (after redirects), when known.
    package let url: URL?

    package init(status: Int, headers: [String: String], contentLength: Int64, url: URL?) {
        self.status = status
        self.headers = headers
        self.contentLength = contentLength
        self.url = url
    }
}

/// How an attempt ended on the wire.
package enum LoadTransportResult: Sendable {
    /// The body is complete, as far as the transport knows (the coordinator still checks its length).
    case completed(finalURL: URL?, metrics: TransferMetrics?)
    /// A definite error (cancelled, timed out, too many redirects, refused address …).
    case failed(DataLoadingError, metrics: TransferMetrics?)
    /// The connection broke for `reason`; the coordinator reports `.truncated` when the body was short, else
    /// `.connectionFailed` with the reason.
    case broken(reason: String, metrics: TransferMetrics?)

    var metrics: TransferMetrics? {
        switch self {
        case .completed(_, let metrics), .failed(_, let metrics), .broken(_, let metrics): metrics
        }
    }
}

/// One attempt of one transfer, as handed to a ``LoadTransporting``: the request to send (with any `Range` a resume
/// added) and the callbacks that report to the coordinator. Callbacks for an attempt that is no longer current
/// (cancelled, timed out, superseded by a retry) are ignored and return `false`.
package final class LoadAttempt: Sendable {
    /// The request to send, after request modifiers and resume headers.
    package let request: DataRequest
    let transferID: UInt64
    let number: Int
    private weak let coordinator: LoadCoordinator?

    init(request: DataRequest, transferID: UInt64, number: Int, coordinator: LoadCoordinator) {
        self.request = request
        self.transferID = transferID
        self.number = number
        self.coordinator = coordinator
    }

    /// The final head arrived; `false` means stop (the coordinator has already ended the attempt).
    package func didReceiveHead(_ head: LoadResponseHead) -> Bool {
        coordinator?.attempt(self, didReceiveHead: head) ?? false
    }

    /// Body bytes arrived (decoded); `false` means stop.
    package func didReceive(_ bytes: UnsafeRawBufferPointer) -> Bool {
        coordinator?.attempt(self, didReceive: bytes) ?? false
    }

    /// The attempt ended.
    package func didFinish(_ result: LoadTransportResult) {
        coordinator?.attempt(self, didFinish: result)
    }
}
