import Foundation

/// Where an OTLP exporter's records go and how they are batched, as OpenTelemetry's batch processors do
/// (`OTEL_BSP_*` for spans, `OTEL_BLRP_*` for log records): ``OTLPTraceExporter`` and ``OTLPLogExporter`` take it.
public struct OTLPBatchConfiguration: Sendable, Hashable {
    /// The signal's endpoint (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, or `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`;
    /// `/v1/logs` for logs).
    public var endpoint: OTLPEndpoint
    /// What the records come from: `service.name` and the like (`OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`).
    /// Default `service.name` = `imago`.
    public var resource: [TraceSpan.Attribute]
    /// The longest a record waits to be sent (`OTEL_BSP_SCHEDULE_DELAY`; `OTEL_BLRP_SCHEDULE_DELAY`, whose
    /// default is 1 s). Default 5 s.
    public var scheduleDelay: Duration
    /// The instrumentation scope the records are sent under (imgproxy's `IMGPROXY_OPEN_TELEMETRY_LOGGER_NAME` for
    /// log records). Default `imago`.
    public var scopeName = "imago"
    /// The most records held (`OTEL_BSP_MAX_QUEUE_SIZE`, `OTEL_BLRP_MAX_QUEUE_SIZE`). Default 2,048.
    public var maximumQueueSize: Int
    /// The most records in one export (`OTEL_BSP_MAX_EXPORT_BATCH_SIZE`, `OTEL_BLRP_MAX_EXPORT_BATCH_SIZE`), at most
    /// the queue's size. Default 512.
    public var maximumBatchSize: Int

    /// Settings for `endpoint`, see the properties for the others' defaults.
    public init(
        endpoint: OTLPEndpoint, resource: [TraceSpan.Attribute] = [.init("service.name", .string("imago"))],
        scheduleDelay: Duration = .seconds(5), maximumQueueSize: Int = 2_048, maximumBatchSize: Int = 512
    ) {
        self.endpoint = endpoint
        self.resource = resource
        self.scheduleDelay = scheduleDelay
        self.maximumQueueSize = max(1, maximumQueueSize)
        self.maximumBatchSize = max(1, min(maximumBatchSize, self.maximumQueueSize))
    }
}
