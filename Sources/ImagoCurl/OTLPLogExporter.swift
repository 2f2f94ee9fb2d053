import Foundation

/// Sends log entries to an OpenTelemetry collector (imgproxy's `IMGPROXY_OPEN_TELEMETRY_ENABLE_LOGS`):
/// `ExportLogsServiceRequest` batches to the logs endpoint (`…/v1/logs`), as the SDKs' batch log record processor
/// does (``OTLPBatchExporter``; its schedule delay is 1 s by default, `OTEL_BLRP_SCHEDULE_DELAY`).
public typealias OTLPLogExporter = OTLPBatchExporter<LogEntry>

extension OTLPBatchExporter where Item == LogEntry {
    /// An exporter of log entries with `configuration`; `onFailure` (default: nothing) hears of an export that
    /// failed for good, once until one succeeds again, off any lock.
    public convenience init(
        configuration: OTLPBatchConfiguration, onFailure: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.init(configuration: configuration, noun: "log record(s)", isIncluded: { _ in true }, onFailure: onFailure)
        {
            entries, scope in
            let observed = Date()
            for entry in entries { scope.message(2) { entry.write(to: &$0, observed: observed) } }
        }
    }
}
