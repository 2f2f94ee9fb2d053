import Foundation
import ImagoCurl

/// How the proxy traces its image requests for OpenTelemetry (imgproxy's `IMGPROXY_OPEN_TELEMETRY_*`): each one
/// gets a trace context, the caller's when its `traceparent` field (W3C Trace Context, or another of
/// ``propagators``' formats) carries one, else a new trace; the access record carries it (``AccessLogRecord/trace``, `trace_id` and `span_id` in the JSON line), and
/// ``AccessLogRecord/spans`` turns a sampled record into spans for ``OTLPTraceExporter``.
///
/// ```swift
/// configuration.tracing = RequestTracing(sampler: .parentBased(root: .ratio(0.1)))
/// ```
public struct RequestTracing: Sendable, Hashable {
    /// Which traces are recorded (OpenTelemetry's `OTEL_TRACES_SAMPLER`).
    public indirect enum Sampler: Sendable, Hashable {
        /// Every trace (`always_on`).
        case always
        /// None (`always_off`): the contexts are still made and logged, and passed on unsampled.
        case never
        /// A fraction of traces, 0 to 1, chosen by trace ID so that every service agrees (`traceidratio`).
        case ratio(Double)
        /// As the caller's context says (`traceparent`'s `sampled` flag), and by `root` for requests without one
        /// or whose caller left the decision to this service (`parentbased_*`).
        case parentBased(root: Sampler)

        /// Whether a trace of `traceID` is recorded, under a caller's context whose flag says `parentSampled`
        /// (`nil`: no caller's context).
        func samples(_ traceID: TraceSpan.TraceID, parentSampled: Bool?) -> Bool {
            switch self {
            case .always: return true
            case .never: return false
            case .ratio(let fraction):
                // As OpenTelemetry's SDKs: the trace ID's last 8 bytes, less the top bit, against the fraction of 2^63.
                guard fraction < 1 else { return true }
                guard fraction > 0 else { return false }
                return traceID.low >> 1 < UInt64(fraction * 0x1p63)
            case .parentBased(let root):
                return parentSampled ?? root.samples(traceID, parentSampled: nil)
            }
        }
    }

    /// Which traces are recorded. Default `.parentBased(root: .always)` (OpenTelemetry's default).
    public var sampler: Sampler
    /// Whether new trace IDs begin with the time, as AWS X-Ray requires (imgproxy's default generator, `xray`);
    /// `false`: all random (`random`). Default `true`.
    public var timestampedTraceIDs: Bool
    /// Whether a source's fetch from an HTTP origin carries the request's context in each of ``propagators``' formats
    /// (its span the parent), so that the origin's spans join the trace (imgproxy's
    /// `IMGPROXY_OPEN_TELEMETRY_PROPAGATE_EXTERNAL`). A download is then shared only within one trace. Default
    /// `false`.
    public var propagatesToSources: Bool
    /// The formats a caller's context is read in, the last one found winning, and a source's fetch carries it in
    /// (OpenTelemetry's `OTEL_PROPAGATORS`); empty (`none`): every request starts a trace of its own. Default
    /// Trace Context and Baggage, OpenTelemetry's default.
    public var propagators: [TracePropagator]

    /// Tracing with `sampler` (default: the caller's decision, else every trace), `timestampedTraceIDs`
    /// (default `true`), `propagatesToSources` (default `false`) and `propagators` (default Trace Context and
    /// Baggage).
    public init(
        sampler: Sampler = .parentBased(root: .always), timestampedTraceIDs: Bool = true,
        propagatesToSources: Bool = false, propagators: [TracePropagator] = [.traceContext, .baggage]
    ) {
        self.sampler = sampler
        self.timestampedTraceIDs = timestampedTraceIDs
        self.propagatesToSources = propagatesToSources
        self.propagators = propagators
    }

    /// The context of `request`, its span's ID new: in the caller's trace when one of ``propagators`` finds it
    /// (the last one listed that does), else in a new one; the caller's `baggage` kept when ``propagators`` has
    /// ``TracePropagator/baggage``.
    func context(for request: ServerRequest, at date: Date) -> TraceContext {
        let spanID = TraceSpan.SpanID.random()
        let baggage =
            propagators.contains(.baggage)
            ? request.headers["baggage"].map { $0.utf8.count <= TracePropagator.maximumBaggageLength ? $0 : "" } ?? ""
            : ""
        if let parent = propagators.reversed().lazy.compactMap({ $0.parent(in: request.headers) }).first {
            return TraceContext(
                traceID: parent.traceID, spanID: spanID, parentSpanID: parent.spanID, traceState: parent.traceState,
                isSampled: sampler.samples(parent.traceID, parentSampled: parent.isSampled), baggage: baggage)
        }
        let traceID = TraceSpan.TraceID.random(timestamped: timestampedTraceIDs, at: date)
        return TraceContext(
            traceID: traceID, spanID: spanID, parentSpanID: nil, traceState: "",
            isSampled: sampler.samples(traceID, parentSampled: nil), baggage: baggage)
    }

    /// The header fields a source's fetch carries for `context`: each of ``propagators``' (none unless
    /// ``propagatesToSources``).
    func sourceFields(for context: TraceContext?) -> [String: String] {
        guard propagatesToSources, let context else { return [:] }
        var fields: [String: String] = [:]
        for propagator in propagators {
            for (name, value) in propagator.fields(for: context) { fields[name] = value }
        }
        return fields
    }
}
