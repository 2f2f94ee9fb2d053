/// Sends spans to an OpenTelemetry collector: `ExportTraceServiceRequest` batches to the traces endpoint
/// (`…/v1/traces`), as the SDKs' batch span processor does (``OTLPBatchExporter``). Spans not sampled are not sent.
public typealias OTLPTraceExporter = OTLPBatchExporter<TraceSpan>

extension OTLPBatchExporter where Item == TraceSpan {
    /// An exporter of spans with `configuration`; `onFailure` (default: nothing) hears of an export that failed
    /// for good, once until one succeeds again, off any lock.
    public convenience init(
        configuration: OTLPBatchConfiguration, onFailure: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.init(configuration: configuration, noun: "span(s)", isIncluded: \.isSampled, onFailure: onFailure) {
            spans, scope in
            for span in spans { scope.message(2) { span.write(to: &$0) } }
        }
    }
}
