import Foundation
import ImagoCurl

/// How the proxy traces its image requests for OpenTelemetry (imgproxy's `IMGPROXY_OPEN_TELEMETRY_*`): each one
/// gets a trace context, the caller's when its `traceparent` field (W3C Trace Context) carries one, else a new
/// trace; the access record carries it (``AccessLogRecord/trace``, `trace_id` and `span_id` in the JSON line), and
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
        /// As the caller's `traceparent` says (its `sampled` flag), and by `root` for requests without one
        /// (`parentbased_*`).
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
    /// Whether a source's fetch from an HTTP origin carries the request's `traceparent` (its span the parent), so
    /// that the origin's spans join the trace (imgproxy's `IMGPROXY_OPEN_TELEMETRY_PROPAGATE_EXTERNAL`). A
    /// download is then shared only within one trace. Default `false`.
    public var propagatesToSources: Bool
    /// Whether a caller's `traceparent` and `tracestate` are read (OpenTelemetry's `tracecontext` propagator);
    /// `false` (`OTEL_PROPAGATORS=none`): every request starts a trace of its own. Default `true`.
    public var readsCallerContext: Bool

    /// Tracing with `sampler` (default: the caller's decision, else every trace), `timestampedTraceIDs`
    /// (default `true`), `propagatesToSources` (default `false`) and `readsCallerContext` (default `true`).
    public init(
        sampler: Sampler = .parentBased(root: .always), timestampedTraceIDs: Bool = true,
        propagatesToSources: Bool = false, readsCallerContext: Bool = true
    ) {
        self.sampler = sampler
        self.timestampedTraceIDs = timestampedTraceIDs
        self.propagatesToSources = propagatesToSources
        self.readsCallerContext = readsCallerContext
    }

    /// The context of `request`, its span's ID new: in the caller's trace when its `traceparent` is valid
    /// (its `tracestate` kept) and ``readsCallerContext``, else in a new one.
    func context(for request: ServerRequest, at date: Date) -> TraceContext {
        let spanID = TraceSpan.SpanID.random()
        if readsCallerContext,
            let parent = request.headers["traceparent"].flatMap(TraceContext.Parent.init(traceparent:))
        {
            return TraceContext(
                traceID: parent.traceID, spanID: spanID, parentSpanID: parent.spanID,
                traceState: request.headers["tracestate"].map { String($0.prefix(512)) } ?? "",
                isSampled: sampler.samples(parent.traceID, parentSampled: parent.isSampled))
        }
        let traceID = TraceSpan.TraceID.random(timestamped: timestampedTraceIDs, at: date)
        return TraceContext(
            traceID: traceID, spanID: spanID, parentSpanID: nil, traceState: "",
            isSampled: sampler.samples(traceID, parentSampled: nil))
    }
}
