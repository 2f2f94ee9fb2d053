import Foundation
import ImagoCurl

/// A request's place in a trace: its trace, its own span and the caller's span, if any, as the caller's
/// ``TracePropagator`` formats carried them (W3C Trace Context by default).
public struct TraceContext: Sendable, Hashable {
    /// The trace.
    public var traceID: TraceSpan.TraceID
    /// The request's own span (the root of its spans).
    public var spanID: TraceSpan.SpanID
    /// The caller's span, from its `traceparent`; `nil` when the request started the trace.
    public var parentSpanID: TraceSpan.SpanID?
    /// The caller's `tracestate`, passed on as received (at most 512 characters). Empty when none.
    public var traceState: String
    /// Whether the trace is recorded (sent to the collector).
    public var isSampled: Bool
    /// The caller's W3C `baggage`, passed on as received (``TracePropagator/baggage``). Default empty.
    public var baggage: String

    /// A context from its parts (`baggage` default empty).
    public init(
        traceID: TraceSpan.TraceID, spanID: TraceSpan.SpanID, parentSpanID: TraceSpan.SpanID?, traceState: String,
        isSampled: Bool, baggage: String = ""
    ) {
        self.traceID = traceID
        self.spanID = spanID
        self.parentSpanID = parentSpanID
        self.traceState = traceState
        self.isSampled = isSampled
        self.baggage = baggage
    }

    /// The `traceparent` value that makes this request's span the parent: `00-TRACE-SPAN-FLAGS`.
    public var traceparent: String { "00-\(traceID)-\(spanID)-\(isSampled ? "01" : "00")" }

    /// A caller's context, as one of its propagators' fields says it.
    struct Parent: Hashable {
        var traceID: TraceSpan.TraceID
        var spanID: TraceSpan.SpanID
        /// The caller's sampling decision; `nil` when it left it to this service (B3's and X-Ray's deferred).
        var isSampled: Bool?
        /// The caller's `tracestate` (Trace Context only), else empty.
        var traceState = ""

        init(traceID: TraceSpan.TraceID, spanID: TraceSpan.SpanID, isSampled: Bool?) {
            self.traceID = traceID
            self.spanID = spanID
            self.isSampled = isSampled
        }

        /// The context `traceparent` gives (`VERSION-TRACE-SPAN-FLAGS`, lowercase hex); `nil` when it is not one:
        /// a length other than version 00's (longer only for a later version, whose first four fields are read),
        /// version `ff`, an all-zero ID.
        init?(traceparent: String) {
            let text = traceparent.trimmingCharacters(in: .whitespaces)
            let fields = text.split(separator: "-", omittingEmptySubsequences: false)
            guard fields.count >= 4, fields[0].utf8.count == 2, fields[3].utf8.count == 2,
                let version = TraceSpan.hexNumber(fields[0]), version != 0xFF,
                version == 0 ? fields.count == 4 : text.utf8.count >= 55,
                let traceID = TraceSpan.TraceID(hex: fields[1]), let spanID = TraceSpan.SpanID(hex: fields[2]),
                let flags = TraceSpan.hexNumber(fields[3])
            else { return nil }
            self.traceID = traceID
            self.spanID = spanID
            isSampled = flags & 1 == 1
        }
    }
}
