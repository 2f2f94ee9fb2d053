import Foundation
import Imago

/// An image proxy in imgproxy's URL format, independent of any HTTP server: give it a ``ServerRequest``, send the
/// ``ServerResponse`` it returns. ``MicroHTTPServer`` mounts it on libmicrohttpd; any other Swift server can too.
///
/// Routes: `GET`/`HEAD` `/{signature}/{options…}/{source}` (see ``ProxyPath``), `/healthz`, `/metrics`.
/// Thread-safe; answers many requests at once, sharing identical work (one fetch, decode and encode per output).
///
/// ```swift
/// let proxy = ImageProxy(configuration: configuration)
/// let response = await proxy.respond(to: ServerRequest(method: "GET", path: "/_/rs:fit:256:256/plain/https://…"))
/// ```
public final class ImageProxy: Sendable {
    /// What the proxy was made with.
    public let configuration: Configuration
    /// The counters behind `/metrics`.
    public let metrics: ServerMetrics
    let pipeline: ImagePipeline
    let limiter: RenderLimiter
    let encodeQueue: WorkQueue
    /// Renders in flight, by output, so that identical requests share one.
    let renders = Locked<[OutputKey: Task<Result<(Rendition, ServerMetrics.CacheTier), ProxyError>, Never>]>([:])

    /// A proxy made of `configuration`.
    public init(configuration: Configuration) {
        self.configuration = configuration
        let limiter = RenderLimiter(workers: configuration.workers, queueLimit: configuration.queueLimit)
        let shared = configuration.sharedCache
        let metrics = ServerMetrics(queueLength: { limiter.queueLength }, sharedTier: { shared?.metrics })
        self.limiter = limiter
        self.metrics = metrics
        encodeQueue = WorkQueue(
            label: "imago.serve.encode",
            maxConcurrentCount: min(configuration.workers, ProcessInfo.processInfo.activeProcessorCount))
        let loader = CountingDataLoader(base: configuration.dataLoader) { metrics.originFetched(bytes: $0) }
        var pipelineConfiguration = ImagePipeline.Configuration(
            dataLoader: loader,
            imageCache: MemoryCache(
                configuration: MemoryCache.Configuration(costLimit: configuration.imageMemoryLimit)),
            dataCache: configuration.originalCache)
        pipelineConfiguration.decoders = configuration.decoders
        pipelineConfiguration.encoders = configuration.encoders
        pipelineConfiguration.decodingOptions.pixelLimit = configuration.pixelLimit
        // The failure cache would turn a 404 or an oversized body into one "failed recently" answer; the proxy
        // reports each failure with its own status instead.
        pipelineConfiguration.failureCache = nil
        pipelineConfiguration.sharedCache = configuration.sharedCache
        pipeline = ImagePipeline(configuration: pipelineConfiguration)
    }

    /// Answers `request`. Never throws: every failure is a JSON error response with its status.
    public func respond(to request: ServerRequest) async -> ServerResponse {
        let start = ContinuousClock.now
        metrics.requestStarted()
        var record = AccessLogRecord(
            time: "", method: request.method, route: "image", status: 0, bytes: 0, ms: 0)
        var tier: ServerMetrics.CacheTier?
        let response: ServerResponse
        do {
            guard request.method == "GET" || request.method == "HEAD" else {
                throw ProxyError.methodNotAllowed(request.method)
            }
            switch request.path {
            case "/healthz":
                record.route = "healthz"
                response = Self.plain(200, "application/json", Data("{\"status\":\"ok\"}\n".utf8))
            case "/metrics":
                record.route = "metrics"
                response = Self.plain(
                    200, "text/plain; version=0.0.4; charset=utf-8", Data(metrics.prometheusText().utf8))
            default:
                let path = try ProxyPath(parsing: request.path)
                record.source = path.source.redactedString
                record.options = path.options.canonicalDescription
                let (answer, answeredBy) = try await image(for: path, request: request)
                response = answer
                tier = answeredBy
            }
        } catch let error as ProxyError {
            response = Self.error(error, retryAfter: configuration.retryAfterSeconds)
            record.error = error.description
        } catch {
            response = Self.error(.internalFailure("\(error)"), retryAfter: configuration.retryAfterSeconds)
        }
        let seconds = (ContinuousClock.now - start).seconds
        let sent = request.method == "HEAD" ? 0 : response.body.count
        metrics.requestFinished(status: response.status, seconds: seconds, tier: tier, bytesOut: sent)
        if let log = configuration.accessLog {
            record.time = Date().formatted(.iso8601)
            record.status = response.status
            record.bytes = sent
            record.ms = (seconds * 10_000).rounded() / 10
            record.cache = tier?.rawValue
            log(record)
        }
        return response
    }

    /// The image response for a parsed path: checks, negotiation, the output (cached or rendered), 304.
    private func image(
        for path: ProxyPath, request: ServerRequest
    ) async throws(ProxyError) -> (ServerResponse, ServerMetrics.CacheTier) {
        if path.isUnsigned {
            guard configuration.allowsUnsigned else { throw .unsignedURL }
        } else {
            guard let signer = configuration.signer, signer.isValid(signature: path.signature, for: path.signedPart)
            else { throw .badSignature }
        }
        try configuration.sourcePolicy.check(path.source)
        let choice = try FormatNegotiation.choice(
            explicit: path.options.format, accept: request.headers["accept"], encoders: configuration.encoders)
        let key = OutputKey(source: path.source.absoluteString, options: path.options, format: choice)
        let (rendition, tier) = try await output(for: key, source: path.source)

        var headers = [
            ServerResponse.Header("ETag", rendition.etag),
            ServerResponse.Header("Cache-Control", "public, max-age=\(Int(configuration.maxAge.seconds))"),
        ]
        if path.options.format == nil { headers.append(ServerResponse.Header("Vary", "Accept")) }
        if let match = request.headers["if-none-match"], Self.matches(match, etag: rendition.etag) {
            return (ServerResponse(status: 304, headers: headers, body: Data()), tier)
        }
        headers.insert(
            ServerResponse.Header(
                "Content-Type", FormatNegotiation.mediaTypes[rendition.format] ?? "application/octet-stream"),
            at: 0)
        headers.insert(ServerResponse.Header("Content-Length", "\(rendition.data.count)"), at: 1)
        return (ServerResponse(status: 200, headers: headers, body: rendition.data), tier)
    }

    /// Whether an `If-None-Match` value matches `etag` (weak comparison, as RFC 9110 asks for this header).
    static func matches(_ header: String, etag: String) -> Bool {
        let bare = etag.hasPrefix("W/") ? String(etag.dropFirst(2)) : etag
        return header.split(separator: ",").contains { candidate in
            let tag = candidate.trimmingCharacters(in: .whitespaces)
            return tag == "*" || tag == bare || tag == "W/" + bare
        }
    }

    static func plain(_ status: Int, _ type: String, _ body: Data) -> ServerResponse {
        ServerResponse(
            status: status,
            headers: [
                .init("Content-Type", type), .init("Content-Length", "\(body.count)"),
                .init("Cache-Control", "no-store"),
            ],
            body: body)
    }

    /// `{"error": …}` with the error's status (and `Retry-After` for a 503).
    static func error(_ error: ProxyError, retryAfter: Int) -> ServerResponse {
        let body =
            (try? JSONSerialization.data(withJSONObject: ["error": error.description], options: [.sortedKeys]))
            ?? Data("{\"error\":\"error\"}".utf8)
        var response = plain(error.status, "application/json", body + Data("\n".utf8))
        if case .overloaded(let seconds) = error { response.headers.append(.init("Retry-After", "\(seconds)")) }
        return response
    }
}

extension Duration {
    /// The duration in seconds, with its fraction.
    var seconds: Double {
        let (s, attoseconds) = components
        return Double(s) + Double(attoseconds) / 1e18
    }
}
