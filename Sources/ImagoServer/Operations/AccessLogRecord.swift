import Foundation

/// One line of the access log: a request, its answer and its cost, the source URL redacted.
public struct AccessLogRecord: Sendable, Hashable, Encodable {
    /// When the request finished (ISO 8601).
    public var time: String
    /// The HTTP method.
    public var method: String
    /// The route: `image`, `healthz`, `metrics` or `other`.
    public var route: String
    /// The source URL with credentials and secret query values removed (`nil` when the URL did not parse).
    public var source: String?
    /// The processing options, canonical (`nil` when the URL did not parse).
    public var options: String?
    /// The HTTP status.
    public var status: Int
    /// Body bytes sent.
    public var bytes: Int
    /// Milliseconds from request to response.
    public var ms: Double
    /// The tier that produced the image, when one did.
    public var cache: String?
    /// The error sentence, for an error response.
    public var error: String?

    /// The record as one JSON object on one line.
    public var jsonLine: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    /// The record as a line of text: time, method, status, ms, bytes, cache tier, source, error.
    public var textLine: String {
        var line = "\(time) \(method) \(status) \(String(format: "%.1f", ms))ms \(bytes)B \(cache ?? "-") "
        line += source ?? route
        if let error { line += " error=\"\(error)\"" }
        return line
    }
}
