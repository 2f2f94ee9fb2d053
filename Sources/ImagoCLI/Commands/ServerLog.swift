import Foundation
import Imago
import ImagoServer

/// `imago serve`'s own lines, not access records (where it listens, where its telemetry goes, its stop, a failing
/// exporter or CloudWatch put): each on standard error and, with `--otel-logs`, as a log entry too, as imgproxy
/// sends its own log lines to OpenTelemetry. Entries below the logs' least level are not sent; they carry
/// `imago.log` = `server`, which access records do not.
struct ServerLog: Sendable {
    /// Where the lines are written.
    let console: Console
    /// Where the entries go, and the least level sent; `nil` without `--otel-logs`.
    let logs: (exporter: OTLPLogExporter, least: AccessLogRecord.Level)?

    /// Says `text` (after `imago serve: `) at `level` (default info).
    func say(_ text: String, level: AccessLogRecord.Level = .info) {
        let line = "imago serve: " + text
        console.printError(line)
        guard let logs, level >= logs.least else { return }
        logs.exporter.submit([
            LogEntry(
                time: Date(), severity: level.severity, body: line, attributes: [.init("imago.log", .string("server"))])
        ])
    }
}
