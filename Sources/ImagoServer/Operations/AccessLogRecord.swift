import Foundation
import ImagoCore

/// Where a render's time went, in milliseconds, in the order the stages run: the request that rendered the
/// output has them in its access-log record (``AccessLogRecord/stages``); requests that joined its render or read
/// its output from a cache have none.
public struct RenderStages: Sendable, Hashable, Encodable {
    /// Waiting for a render slot (`--workers`).
    public var queue: Double
    /// Fetching the original from the origin (`nil` when it came from a cache).
    public var fetch: Double?
    /// Reading the original from the disk cache (`nil` when it did not).
    public var disk: Double?
    /// Decoding (`nil` when a cached decoded image was used).
    public var decode: Double?
    /// The processors (resize, rotate, blur) together (`nil` when there were none).
    public var process: Double?
    /// The rest of the pipeline's time: waiting for the CPU queue and the hops between stages.
    public var pipelineWait: Double
    /// Waiting for a CPU slot for the encode.
    public var encodeWait: Double
    /// Encoding.
    public var encode: Double
    /// Storing the output in the output cache (memory and disk).
    public var store: Double

    /// Stages from their durations (see the properties).
    public init(
        queue: Double, fetch: Double? = nil, disk: Double? = nil, decode: Double? = nil, process: Double? = nil,
        pipelineWait: Double, encodeWait: Double, encode: Double, store: Double
    ) {
        self.queue = queue
        self.fetch = fetch
        self.disk = disk
        self.decode = decode
        self.process = process
        self.pipelineWait = pipelineWait
        self.encodeWait = encodeWait
        self.encode = encode
        self.store = store
    }
}

/// One line of the access log: a request, its answer and its cost, the source URL redacted.
public struct AccessLogRecord: Sendable, Hashable, Encodable {
    /// How much a record matters to an operator, least first (imgproxy's `IMGPROXY_LOG_LEVEL` names).
    public enum Level: String, Sendable, Hashable, CaseIterable, Comparable, Encodable {
        /// Detail for debugging (no record is this low today; the level shows everything).
        case debug
        /// A request answered (a status below 400).
        case info
        /// A request refused for the client's fault or a source's absence (4xx).
        case warn
        /// A request that failed on the server or at the origin (5xx).
        case error

        /// Whether `a` matters less than `b` (comes before it in the list above).
        public static func < (a: Level, b: Level) -> Bool {
            allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
        }
    }

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
    /// Where a rendered request's time went, in milliseconds (`nil` for every other request: answered from a
    /// cache, joined to another request's render, or refused before rendering).
    public var stages: RenderStages?
    /// For the request that rendered the output: why the source's colour declaration was not used, so the
    /// pixels were taken as sRGB (``ImageContainer/colorWarning``); written as `color_warning`. Default `nil`.
    public var colorWarning: String?
    /// The request's ID, as its `X-Request-ID` response field says (the client's own, or a new one). Default `nil`.
    public var requestID: String?
    /// The client's address: `CF-Connecting-IP`, `X-Forwarded-For`'s first entry or `X-Real-IP` when set, else
    /// the connection's. Default `nil`.
    public var clientIP: String?
    /// The request's trace context, for an image request while tracing is on (``ImageProxy/Configuration/tracing``):
    /// written as `trace_id` and `span_id`, to find a log line's trace. Default `nil`.
    public var trace: TraceContext?
    /// When the request finished: the moment ``time`` writes (spans end there). Default `nil`.
    public var finishedAt: Date?

    /// The record's level by its status, as imgproxy's: ``Level-swift.enum/error`` for 5xx,
    /// ``Level-swift.enum/warn`` for 4xx, else ``Level-swift.enum/info``. Written to the JSON line as `level`.
    public var level: Level { status >= 500 ? .error : status >= 400 ? .warn : .info }

    private enum CodingKeys: String, CodingKey {
        case time, level, method, route, source, options, status, bytes, ms, cache, error, stages
        case colorWarning = "color_warning"
        case requestID = "request_id"
        case clientIP = "client_ip"
        case traceID = "trace_id"
        case spanID = "span_id"
    }

    /// Encodes the stored properties (the optional ones when present) and ``level``.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(time, forKey: .time)
        try container.encode(level, forKey: .level)
        try container.encode(method, forKey: .method)
        try container.encode(route, forKey: .route)
        try container.encodeIfPresent(source, forKey: .source)
        try container.encodeIfPresent(options, forKey: .options)
        try container.encode(status, forKey: .status)
        try container.encode(bytes, forKey: .bytes)
        try container.encode(ms, forKey: .ms)
        try container.encodeIfPresent(cache, forKey: .cache)
        try container.encodeIfPresent(error, forKey: .error)
        try container.encodeIfPresent(stages, forKey: .stages)
        try container.encodeIfPresent(colorWarning, forKey: .colorWarning)
        try container.encodeIfPresent(requestID, forKey: .requestID)
        try container.encodeIfPresent(clientIP, forKey: .clientIP)
        try container.encodeIfPresent(trace?.traceID.description, forKey: .traceID)
        try container.encodeIfPresent(trace?.spanID.description, forKey: .spanID)
    }

    /// `duration` in milliseconds, to 0.1 ms: the unit of ``ms`` and of every stage.
    static func milliseconds(_ duration: Duration) -> Double { (duration.timeInterval * 10_000).rounded() / 10 }

    /// The record as one JSON object on one line, its keys sorted, ``level`` among them.
    public var jsonLine: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    /// The record as a line of text: time, method, status, ms, bytes, cache tier, source, error, colour warning (no
    /// stages). The error and the warning are quoted, with `"`, `\` and control characters escaped as in JSON: they
    /// may hold text from a file (a profile's description, a decoder's sentence about a box), which must not end
    /// the line or the quotes.
    public var textLine: String {
        var line = "\(time) \(method) \(status) \(String(format: "%.1f", ms))ms \(bytes)B \(cache ?? "-") "
        line += source ?? route
        if let error { line += " error=" + JSONStringLiteral.quoted(error) }
        if let colorWarning { line += " color_warning=" + JSONStringLiteral.quoted(colorWarning) }
        return line
    }
}
