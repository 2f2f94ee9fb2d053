import Foundation

/// One of OpenTelemetry's signals, as OTLP addresses it: where a collector takes it over HTTP (`v1/traces`) and
/// over gRPC (`TraceService/Export`), and the part of the `OTEL_EXPORTER_OTLP_*` variables that name it.
public enum OTLPSignal: String, Sendable, Hashable, CaseIterable {
    /// Spans (`ExportTraceServiceRequest`).
    case traces
    /// Metrics (`ExportMetricsServiceRequest`).
    case metrics
    /// Log records (`ExportLogsServiceRequest`).
    case logs

    /// The path a collector takes it at over OTLP/HTTP, after its base URL: `v1/traces`, `v1/metrics`, `v1/logs`.
    public var httpPath: String { "v1/" + rawValue }

    /// The gRPC method a collector takes it by, as a path: `opentelemetry.proto.collector.trace.v1.TraceService/Export`
    /// (`metrics.v1.MetricsService`, `logs.v1.LogsService`).
    public var grpcMethod: String {
        let (package, service) =
            switch self {
            case .traces: ("trace", "TraceService")
            case .metrics: ("metrics", "MetricsService")
            case .logs: ("logs", "LogsService")
            }
        return "opentelemetry.proto.collector.\(package).v1.\(service)/Export"
    }

    /// The signal's part of the exporter's variables: `TRACES` in `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`.
    public var variablePart: String { rawValue.uppercased() }
}
