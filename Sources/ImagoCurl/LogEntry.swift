import Foundation

/// One log record as OpenTelemetry describes it: when, how severe, what happened, and the trace it belongs to.
/// ``OTLPLogExporter`` sends entries to a collector.
///
/// ```swift
/// let entry = LogEntry(time: Date(), severity: .warn, body: "GET 404 /rs:fit:32:32/plain/…")
/// ```
public struct LogEntry: Sendable, Hashable {
    /// How severe an entry is, as OpenTelemetry's `SeverityNumber` ranks them.
    public enum Severity: Int, Sendable, Hashable {
        /// Detail for debugging (`DEBUG`, 5).
        case debug = 5
        /// Something that happened as it should (`INFO`, 9).
        case info = 9
        /// Something to look at (`WARN`, 13).
        case warn = 13
        /// A failure (`ERROR`, 17).
        case error = 17

        /// Its text (`INFO`).
        public var text: String {
            switch self {
            case .debug: "DEBUG"
            case .info: "INFO"
            case .warn: "WARN"
            case .error: "ERROR"
            }
        }
    }

    /// When it happened.
    public var time: Date
    /// How severe it is.
    public var severity: Severity
    /// What happened, in words.
    public var body: String
    /// What describes it, by name. Default none.
    public var attributes: [TraceSpan.Attribute]
    /// The trace it belongs to, when there is one. Default `nil`.
    public var traceID: TraceSpan.TraceID?
    /// The span it belongs to, when there is one. Default `nil`.
    public var spanID: TraceSpan.SpanID?
    /// Whether that trace is sampled (W3C's flag). Default `false`.
    public var isTraceSampled: Bool

    /// An entry from its parts (see the properties for the defaults).
    public init(
        time: Date, severity: Severity, body: String, attributes: [TraceSpan.Attribute] = [],
        traceID: TraceSpan.TraceID? = nil, spanID: TraceSpan.SpanID? = nil, isTraceSampled: Bool = false
    ) {
        self.time = time
        self.severity = severity
        self.body = body
        self.attributes = attributes
        self.traceID = traceID
        self.spanID = spanID
        self.isTraceSampled = isTraceSampled
    }

    /// The entry as OTLP's `LogRecord` message (opentelemetry/proto/logs/v1/logs.proto), into `writer`, observed
    /// at `observed`.
    func write(to writer: inout ProtobufWriter, observed: Date) {
        writer.fixed64(1, TraceSpan.nanoseconds(time))
        writer.unsigned(2, UInt64(severity.rawValue))
        writer.string(3, severity.text)
        writer.message(5) { $0.string(1, body) }
        for attribute in attributes { writer.message(6) { attribute.write(to: &$0) } }
        if let traceID {
            writer.fixed32(8, isTraceSampled ? 0x01 : 0x00)
            writer.data(9, traceID.bytes)
            if let spanID { writer.data(10, spanID.bytes) }
        }
        writer.fixed64(11, TraceSpan.nanoseconds(observed))
    }
}
