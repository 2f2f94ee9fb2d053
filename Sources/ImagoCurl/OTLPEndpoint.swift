import Foundation
import ImagoCore
import ImagoZlib

/// Where one signal of OpenTelemetry's goes over OTLP, by HTTP with protobuf (a collector's `…/v1/traces`) or by
/// gRPC (its `TraceService/Export` method): the URL, the header fields each export sends (a vendor's API key), how
/// long one may take and the certificates. ``OTLPBatchExporter`` (spans, log entries) and ``OTLPMetricExporter``
/// post through it.
///
/// ```swift
/// let spans = OTLPEndpoint(collector: URL(string: "http://collector:4317")!, signal: .traces, transport: .grpc)
/// // http://collector:4317/opentelemetry.proto.collector.trace.v1.TraceService/Export, over HTTP/2
/// ```
public struct OTLPEndpoint: Sendable, Hashable, CustomStringConvertible {
    /// How exports travel (`OTEL_EXPORTER_OTLP_PROTOCOL`).
    public enum Transport: String, Sendable, Hashable {
        /// A POST of the protobuf message over HTTP/1.1 or HTTP/2 (`http/protobuf`, a collector's port 4318).
        case httpProtobuf = "http/protobuf"
        /// A unary gRPC call over HTTP/2 (`grpc`, a collector's port 4317; imgproxy's default): the message in
        /// gRPC's length-prefixed frame, the outcome in the `grpc-status` trailer.
        case grpc
    }

    /// How an export's message is compressed (`OTEL_EXPORTER_OTLP_COMPRESSION`).
    public enum Compression: String, Sendable, Hashable {
        /// Sent as it is (`none`).
        case none
        /// gzip: `Content-Encoding: gzip` over HTTP, the `gzip` message encoding over gRPC (`gzip`).
        case gzip
    }

    /// The signal's whole URL (`http://localhost:4318/v1/traces`; over gRPC the method's,
    /// `http://localhost:4317/opentelemetry.proto.collector.trace.v1.TraceService/Export`).
    public var url: URL
    /// How exports travel. Default ``Transport/httpProtobuf``.
    public var transport: Transport
    /// How each export's message is compressed. Default ``Compression/none``.
    public var compression: Compression = .none
    /// Header fields sent with each export (`OTEL_EXPORTER_OTLP_HEADERS`; gRPC's metadata). Default none.
    public var headers: [String: String]
    /// How long one export may take (`OTEL_EXPORTER_OTLP_TIMEOUT`; sent as `grpc-timeout` over gRPC). Default 10 s.
    public var timeout: Duration
    /// The certificates trusted and presented over https: a private CA (`OTEL_EXPORTER_OTLP_CERTIFICATE`), a client
    /// certificate and key for mutual TLS (`…_CLIENT_CERTIFICATE`, `…_CLIENT_KEY`). Default: the system's CAs, no
    /// client certificate.
    public var tls: CurlDataLoader.TLSOptions

    /// The endpoint `url`, by `transport` (default ``Transport/httpProtobuf``), with `headers` (default none),
    /// `timeout` (default 10 s) and `tls` (default: the system's CAs, no client certificate).
    public init(
        url: URL, transport: Transport = .httpProtobuf, headers: [String: String] = [:],
        timeout: Duration = .seconds(10), tls: CurlDataLoader.TLSOptions = CurlDataLoader.TLSOptions()
    ) {
        self.url = url
        self.transport = transport
        self.headers = headers
        self.timeout = timeout
        self.tls = tls
    }

    /// The endpoint of `signal` on the collector at `base`, as OpenTelemetry's SDKs derive it from
    /// `OTEL_EXPORTER_OTLP_ENDPOINT`: over HTTP `base` + the signal's path (`http://collector:4318/v1/traces`); over
    /// gRPC the signal's method at `base`'s scheme, host and port, whatever path `base` has. The other settings as
    /// in ``init(url:transport:headers:timeout:tls:)``.
    public init(collector base: URL, signal: OTLPSignal, transport: Transport = .httpProtobuf) {
        var components = URLComponents(url: base, resolvingAgainstBaseURL: false) ?? URLComponents()
        switch transport {
        case .httpProtobuf:
            let path = components.percentEncodedPath
            components.percentEncodedPath = (path.hasSuffix("/") ? path : path + "/") + signal.httpPath
        case .grpc:
            components.percentEncodedPath = "/" + signal.grpcMethod
        }
        components.query = nil
        components.fragment = nil
        self.init(url: components.url ?? base, transport: transport)
    }

    /// The URL, and `over gRPC` for gRPC: what `imago serve` says at its start.
    public var description: String { url.absoluteString + (transport == .grpc ? " over gRPC" : "") }

    /// What became of an export.
    package enum Outcome: Equatable {
        /// The collector took it, but for `rejected` items (spans, data points, log records) it refused, saying
        /// `message` (OTLP's partial success; 0 and empty for a whole success).
        case accepted(rejected: Int, message: String)
        /// It was not taken, for the reason given.
        case failed(String)
    }

    /// Posts `body` (an OTLP `Export…ServiceRequest`); one that fails in a way OTLP calls retryable (HTTP 429, 502,
    /// 503, 504; gRPC's `UNAVAILABLE` and the like) or without an answer is sent once more after a second. A
    /// partial success is not sent again, as OTLP says.
    func send(_ body: Data) async -> Outcome {
        var result = await post(body)
        if case .failure(let failure) = result, failure.retryable {
            try? await Task.sleep(for: .seconds(1))
            result = await post(body)
        }
        switch result {
        case .success(let answer): return Self.partialSuccess(in: answer)
        case .failure(let failure): return .failed(failure.reason)
        }
    }

    /// The partial success an `Export…ServiceResponse` carries: its field 1, a message of the count refused (field
    /// 1) and the collector's words (field 2); a whole success for an empty or unreadable answer.
    package static func partialSuccess(in answer: [UInt8]) -> Outcome {
        var rejected = 0
        var message = ""
        for field in ProtobufReader.fields(answer[...]) ?? [] where field.number == 1 {
            guard case .bytes(let partial) = field.value else { continue }
            for inner in ProtobufReader.fields(partial) ?? [] {
                switch (inner.number, inner.value) {
                case (1, .varint(let count)): rejected = Int(truncatingIfNeeded: count)
                case (2, .bytes(let text)): message = String(decoding: text.prefix(1_024), as: UTF8.self)
                default: continue
                }
            }
        }
        return .accepted(rejected: max(0, rejected), message: message)
    }

    /// Why one attempt failed, and whether OTLP sends again after it.
    private struct Failure: Error {
        var reason: String
        var retryable: Bool
    }

    /// HTTP statuses after which OTLP sends again.
    private static let retryableStatuses: Set<Int> = [429, 502, 503, 504]

    /// One attempt: the answer's message (without gRPC's frame), or why it failed.
    private func post(_ message: Data) async -> Result<[UInt8], Failure> {
        var fields = headers.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
        let compressed = compression == .gzip ? Zlib.deflate(message, format: .gzip) : nil
        if compressed != nil { fields.append(transport == .grpc ? "grpc-encoding: gzip" : "Content-Encoding: gzip") }
        let body = compressed ?? message
        var exchange: CurlExchange
        switch transport {
        case .httpProtobuf:
            exchange = CurlExchange(
                url: url, fields: ["Content-Type: application/x-protobuf"] + fields, timeout: timeout)
            exchange.bytes = body
            exchange.answerFields = ["Content-Type"]
        case .grpc:
            // gRPC's frame: compressed (1) or not (0), the length in 4 bytes big-endian, the message.
            var frame = Data([compressed == nil ? 0 : 1])
            withUnsafeBytes(of: UInt32(body.count).bigEndian) { frame.append(contentsOf: $0) }
            frame.append(body)
            exchange = CurlExchange(
                url: url,
                fields: [
                    "Content-Type: application/grpc", "TE: trailers",
                    "grpc-timeout: \(min(CurlEasy.milliseconds(timeout), 99_999_999))m",
                ] + fields, timeout: timeout)
            exchange.bytes = frame
            exchange.requiresHTTP2 = true
            exchange.answerFields = ["grpc-status", "grpc-message"]
        }
        exchange.tls = tls
        let answer: CurlExchange.Answer
        do {
            answer = try await exchange.perform()
        } catch {
            return .failure(Failure(reason: (error as? CurlExchange.Failure)?.reason ?? "\(error)", retryable: true))
        }
        guard (200..<300).contains(answer.status) else {
            return .failure(
                Failure(
                    reason: "the collector answered HTTP \(answer.status)",
                    retryable: Self.retryableStatuses.contains(answer.status)))
        }
        guard transport == .grpc else {
            let isProtobuf = answer.fields["Content-Type"]?.lowercased().contains("protobuf") == true
            return .success(isProtobuf ? Array(answer.data) : [])
        }
        guard let code = answer.fields["grpc-status"].flatMap({ Int($0) }) else {
            return .failure(Failure(reason: "the collector's answer has no grpc-status", retryable: false))
        }
        guard code != 0 else {
            // The answer's one message, unless compressed (no compression was offered): flag 0, length, message.
            let frame = Array(answer.data)
            guard frame.count >= 5, frame[0] == 0 else { return .success([]) }
            let length = frame[1..<5].reduce(0) { $0 << 8 | Int($1) }
            return .success(Array(frame.dropFirst(5).prefix(length)))
        }
        let message = answer.fields["grpc-message"].map { ": " + ($0.removingPercentEncoding ?? $0) } ?? ""
        return .failure(
            Failure(
                reason: "the collector answered gRPC status \(code) (\(GRPCStatus.name(code)))" + message,
                retryable: GRPCStatus.isRetryable(code)))
    }
}

/// gRPC's status codes, as OTLP reads them.
private enum GRPCStatus {
    /// The codes' names, by code.
    static let names = [
        "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",
        "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED",
        "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
    ]

    /// The name of `code` (`UNAVAILABLE`), or `unknown code` past the list.
    static func name(_ code: Int) -> String { names.indices.contains(code) ? names[code] : "unknown code" }

    /// Whether OTLP sends again after `code`: `CANCELLED`, `DEADLINE_EXCEEDED`, `ABORTED`, `OUT_OF_RANGE`,
    /// `UNAVAILABLE`, `DATA_LOSS` (`RESOURCE_EXHAUSTED` only with a retry delay in its details, which Imago does
    /// not read).
    static func isRetryable(_ code: Int) -> Bool { [1, 4, 10, 11, 14, 15].contains(code) }
}

extension ProtobufWriter {
    /// The one entry of an OTLP export request (its field 1: `ResourceSpans`, `ResourceMetrics` or `ResourceLogs`,
    /// which are alike): the resource of `attributes`, and one instrumentation scope (`scope`, default `imago`, and
    /// Imago's version) whose items (spans, metrics, log records, each its field 2) `items` writes.
    mutating func otlpResource(
        _ attributes: [TraceSpan.Attribute], scope scopeName: String = "imago", items: (inout ProtobufWriter) -> Void
    ) {
        message(1) { resource in
            resource.message(1) { resource in
                for attribute in attributes { resource.message(1) { attribute.write(to: &$0) } }
            }
            resource.message(2) { scope in
                scope.message(1) { scope in
                    scope.string(1, scopeName)
                    scope.string(2, ImagoVersion.current)
                }
                items(&scope)
            }
        }
    }
}
