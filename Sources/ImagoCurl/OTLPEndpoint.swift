import Foundation
import ImagoCore

/// Where one signal of OpenTelemetry's goes over OTLP/HTTP with protobuf: a collector's URL for it
/// (`…/v1/traces`, `…/v1/metrics`, `…/v1/logs`), the header fields each export sends (a vendor's API key), how
/// long one may take and the certificates. ``OTLPBatchExporter`` (spans, log entries) and ``OTLPMetricExporter``
/// post through it.
public struct OTLPEndpoint: Sendable, Hashable {
    /// The signal's whole URL (`http://localhost:4318/v1/traces`).
    public var url: URL
    /// Header fields sent with each export (`OTEL_EXPORTER_OTLP_HEADERS`). Default none.
    public var headers: [String: String]
    /// How long one export may take (`OTEL_EXPORTER_OTLP_TIMEOUT`). Default 10 s.
    public var timeout: Duration
    /// The certificates trusted and presented over https: a private CA (`OTEL_EXPORTER_OTLP_CERTIFICATE`), a client
    /// certificate and key for mutual TLS (`…_CLIENT_CERTIFICATE`, `…_CLIENT_KEY`). Default: the system's CAs, no
    /// client certificate.
    public var tls: CurlDataLoader.TLSOptions

    /// The endpoint `url`, with `headers` (default none), `timeout` (default 10 s) and `tls` (default: the system's
    /// CAs, no client certificate).
    public init(
        url: URL, headers: [String: String] = [:], timeout: Duration = .seconds(10),
        tls: CurlDataLoader.TLSOptions = CurlDataLoader.TLSOptions()
    ) {
        self.url = url
        self.headers = headers
        self.timeout = timeout
        self.tls = tls
    }

    /// Posts `body` (an OTLP `Export…ServiceRequest`); one that fails with a status OTLP calls retryable (429,
    /// 502, 503, 504) or without an answer is sent once more after a second. Returns why it failed, or `nil`.
    func send(_ body: Data) async -> String? {
        var problem = await post(body)
        if let (_, retryable) = problem, retryable {
            try? await Task.sleep(for: .seconds(1))
            problem = await post(body)
        }
        return problem?.reason
    }

    private func post(_ body: Data) async -> (reason: String, retryable: Bool)? {
        var exchange = CurlExchange(
            url: url,
            fields: ["Content-Type: application/x-protobuf"]
                + headers.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" },
            timeout: timeout)
        exchange.bytes = body
        exchange.tls = tls
        do {
            let answer = try await exchange.perform()
            if (200..<300).contains(answer.status) { return nil }
            return ("the collector answered HTTP \(answer.status)", [429, 502, 503, 504].contains(answer.status))
        } catch {
            return ((error as? CurlExchange.Failure)?.reason ?? "\(error)", true)
        }
    }
}

extension ProtobufWriter {
    /// The one entry of an OTLP export request (its field 1: `ResourceSpans`, `ResourceMetrics` or `ResourceLogs`,
    /// which are alike): the resource of `attributes`, and one instrumentation scope (`imago` and its version) whose
    /// items (spans, metrics, log records, each its field 2) `items` writes.
    mutating func otlpResource(
        _ attributes: [TraceSpan.Attribute], items: (inout ProtobufWriter) -> Void
    ) {
        message(1) { resource in
            resource.message(1) { resource in
                for attribute in attributes { resource.message(1) { attribute.write(to: &$0) } }
            }
            resource.message(2) { scope in
                scope.message(1) { scope in
                    scope.string(1, "imago")
                    scope.string(2, ImagoVersion.current)
                }
                items(&scope)
            }
        }
    }
}
