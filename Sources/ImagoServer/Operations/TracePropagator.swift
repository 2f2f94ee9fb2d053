import Foundation
import ImagoCurl

/// A format in which a trace's context travels between services: OpenTelemetry's propagators, by the names
/// `OTEL_PROPAGATORS` gives them (imgproxy takes the same list). A request's caller's context is read in each
/// format listed, the last one found winning (as OpenTelemetry's composite propagator does); a source's fetch
/// (``RequestTracing/propagatesToSources``) carries the request's context in all of them.
///
/// ```swift
/// configuration.tracing = RequestTracing(propagators: [.traceContext, .b3Multi])  // Zipkin's X-B3-* fields too
/// ```
public enum TracePropagator: String, Sendable, Hashable, CaseIterable {
    /// W3C Trace Context: `traceparent` and `tracestate` (`tracecontext`; a default).
    case traceContext = "tracecontext"
    /// W3C Baggage: the caller's `baggage` field passed on to sources as it came, at most 8,192 bytes (a default).
    case baggage
    /// Zipkin's B3 in one field, `b3: TRACE-SPAN-SAMPLED` (`b3`); reads the `X-B3-*` fields too.
    case b3
    /// Zipkin's B3 in several fields: `X-B3-TraceId`, `X-B3-SpanId`, `X-B3-Sampled` (`b3multi`); reads `b3` too.
    case b3Multi = "b3multi"
    /// Jaeger's `uber-trace-id: TRACE:SPAN:0:FLAGS` (`jaeger`).
    case jaeger
    /// AWS X-Ray's `X-Amzn-Trace-Id: Root=1-EPOCH-RANDOM;Parent=SPAN;Sampled=1` (`xray`).
    case xray
    /// OpenTracing's `ot-tracer-traceid`, `ot-tracer-spanid` and `ot-tracer-sampled` (`ottrace`); the trace ID
    /// goes out as its last 16 digits, as OpenTelemetry's SDKs send it.
    case otTrace = "ottrace"

    /// The longest `baggage` field passed on (W3C Baggage's limit).
    static let maximumBaggageLength = 8_192

    /// The caller's context this format finds in `headers` (names lowercase), or `nil`. The baggage propagator
    /// finds no context: its field is read by ``RequestTracing``.
    func parent(in headers: [String: String]) -> TraceContext.Parent? {
        switch self {
        case .traceContext:
            guard var parent = headers["traceparent"].flatMap(TraceContext.Parent.init(traceparent:)) else {
                return nil
            }
            parent.traceState = headers["tracestate"].map { String($0.prefix(512)) } ?? ""
            return parent
        case .baggage: return nil
        case .b3, .b3Multi: return Self.b3Single(headers["b3"]) ?? Self.b3Multiple(headers)
        case .jaeger: return headers["uber-trace-id"].flatMap(Self.jaeger)
        case .xray: return headers["x-amzn-trace-id"].flatMap(Self.xray)
        case .otTrace:
            guard let traceID = headers["ot-tracer-traceid"].flatMap({ Self.traceID($0, lengths: [16, 32]) }),
                let spanID = headers["ot-tracer-spanid"].flatMap({ Self.spanID($0, lengths: [16]) })
            else { return nil }
            return TraceContext.Parent(
                traceID: traceID, spanID: spanID, isSampled: headers["ot-tracer-sampled"].flatMap(Self.flag))
        }
    }

    /// The header fields that carry `context` in this format, its span the parent.
    func fields(for context: TraceContext) -> [(name: String, value: String)] {
        let sampled = context.isSampled ? "1" : "0"
        switch self {
        case .traceContext:
            return [("traceparent", context.traceparent)]
                + (context.traceState.isEmpty ? [] : [("tracestate", context.traceState)])
        case .baggage: return context.baggage.isEmpty ? [] : [("baggage", context.baggage)]
        case .b3: return [("b3", "\(context.traceID)-\(context.spanID)-\(sampled)")]
        case .b3Multi:
            return [
                ("X-B3-TraceId", context.traceID.description), ("X-B3-SpanId", context.spanID.description),
                ("X-B3-Sampled", sampled),
            ]
        case .jaeger: return [("uber-trace-id", "\(context.traceID):\(context.spanID):0:\(sampled)")]
        case .xray:
            let trace = context.traceID.description
            return [
                (
                    "X-Amzn-Trace-Id",
                    "Root=1-\(trace.prefix(8))-\(trace.dropFirst(8));Parent=\(context.spanID);Sampled=\(sampled)"
                )
            ]
        case .otTrace:
            return [
                ("ot-tracer-traceid", String(context.traceID.description.suffix(16))),
                ("ot-tracer-spanid", context.spanID.description),
                ("ot-tracer-sampled", context.isSampled ? "true" : "false"),
            ]
        }
    }

    /// `b3: TRACE-SPAN[-SAMPLED[-PARENT]]`; a field of the sampling state alone carries no context.
    private static func b3Single(_ value: String?) -> TraceContext.Parent? {
        guard let parts = value?.trimmingCharacters(in: .whitespaces).split(separator: "-"),
            (2...4).contains(parts.count), let traceID = traceID(parts[0], lengths: [16, 32]),
            let spanID = spanID(parts[1], lengths: [16])
        else { return nil }
        var sampled: Bool?
        if parts.count >= 3 {
            switch parts[2] {
            case "1", "d": sampled = true
            case "0": sampled = false
            default: return nil
            }
        }
        if parts.count == 4, Self.spanID(parts[3], lengths: [16]) == nil { return nil }
        return TraceContext.Parent(traceID: traceID, spanID: spanID, isSampled: sampled)
    }

    /// `X-B3-TraceId`, `X-B3-SpanId`, `X-B3-Sampled` (`1`/`0`, `true`/`false`) and `X-B3-Flags: 1` (debug:
    /// sampled).
    private static func b3Multiple(_ headers: [String: String]) -> TraceContext.Parent? {
        guard let traceID = headers["x-b3-traceid"].flatMap({ traceID($0, lengths: [16, 32]) }),
            let spanID = headers["x-b3-spanid"].flatMap({ spanID($0, lengths: [16]) })
        else { return nil }
        let sampled = headers["x-b3-flags"] == "1" ? true : headers["x-b3-sampled"].flatMap(flag)
        return TraceContext.Parent(traceID: traceID, spanID: spanID, isSampled: sampled)
    }

    /// `uber-trace-id: TRACE:SPAN:PARENT:FLAGS`, percent-encoded or not; IDs of fewer digits padded with zeros,
    /// flags in hex (1: sampled, 2: debug, which samples).
    private static func jaeger(_ value: String) -> TraceContext.Parent? {
        let text = (value.removingPercentEncoding ?? value).trimmingCharacters(in: .whitespaces).lowercased()
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 4, let traceID = traceID(parts[0], lengths: Array(1...32)),
            let spanID = spanID(parts[1], lengths: Array(1...16)), parts[3].utf8.count <= 2,
            let flags = TraceSpan.hexNumber(parts[3])
        else { return nil }
        return TraceContext.Parent(traceID: traceID, spanID: spanID, isSampled: flags & 0b11 != 0)
    }

    /// `X-Amzn-Trace-Id: Root=1-EPOCH-RANDOM;Parent=SPAN;Sampled=1|0|?`, other keys ignored; without `Sampled`
    /// (or `?`) the decision is left to this service.
    private static func xray(_ value: String) -> TraceContext.Parent? {
        var root: TraceSpan.TraceID?
        var parent: TraceSpan.SpanID?
        var sampled: Bool?
        for part in value.split(separator: ";") {
            let pair = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2 else { continue }
            switch pair[0] {
            case "Root":
                let pieces = pair[1].split(separator: "-", omittingEmptySubsequences: false)
                guard pieces.count == 3, pieces[0] == "1", pieces[1].utf8.count == 8, pieces[2].utf8.count == 24
                else { return nil }
                root = TraceSpan.TraceID(hex: pieces[1].lowercased() + pieces[2].lowercased())
            case "Parent": parent = spanID(pair[1].lowercased(), lengths: [16])
            case "Sampled": sampled = pair[1] == "1" ? true : pair[1] == "0" ? false : nil
            default: continue
            }
        }
        guard let root, let parent else { return nil }
        return TraceContext.Parent(traceID: root, spanID: parent, isSampled: sampled)
    }

    /// A trace ID of one of `lengths` lowercase hex digits, padded on the left to 32.
    private static func traceID(_ text: some StringProtocol, lengths: [Int]) -> TraceSpan.TraceID? {
        guard lengths.contains(text.utf8.count) else { return nil }
        return TraceSpan.TraceID(hex: String(repeating: "0", count: 32 - text.utf8.count) + text)
    }

    /// A span ID of one of `lengths` lowercase hex digits, padded on the left to 16.
    private static func spanID(_ text: some StringProtocol, lengths: [Int]) -> TraceSpan.SpanID? {
        guard lengths.contains(text.utf8.count) else { return nil }
        return TraceSpan.SpanID(hex: String(repeating: "0", count: 16 - text.utf8.count) + text)
    }

    /// `1`/`true` or `0`/`false`; `nil` for anything else.
    private static func flag(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "1", "true": true
        case "0", "false": false
        default: nil
        }
    }
}
