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
    /// Runs every decode, processor run and encode of a render (see `init`).
    let cpuQueue: WorkQueue
    /// Paths that passed every check, by the raw path (bounded: 8 MiB, 50,000 paths).
    let verifiedPaths = Locked(LRUCache<String, VerifiedPath>(costLimit: 8 << 20, countLimit: 50_000))
    /// The SHA-256 of `Bearer ` and ``Configuration/secret``, when there is one: digests of equal length are
    /// compared in constant time.
    let secretDigest: SHA256Digest?
    /// Renders in flight, by output, so that identical requests share one.
    let renders = Locked<[OutputKey: Task<Result<RenderedOutput, ProxyError>, Never>]>([:])
    /// The qualities and preferred formats outputs are made with (from the configuration).
    let outputSettings: OutputSettings
    /// The formats `Accept` may pick for a URL that names none: the detected and the enforced ones.
    let negotiableFormats: Set<ImageFormat>
    /// What every `ETag` ends with before its closing quote: `-` and a digest of ``Configuration/etagBuster``, or
    /// nothing when it is empty.
    let etagSuffix: String
    /// Gives each request its `X-Request-ID`.
    let identity = RequestIdentity()

    /// Renders running now (at most ``Configuration/workers``).
    public var rendersInProgress: Int { limiter.running }

    /// A proxy made of `configuration`.
    public init(configuration: Configuration) {
        var configuration = configuration
        // A copy: keys name the encoders' settings as they are now, and the encoders that make outputs must stay them.
        configuration.encoders = ImageEncoderRegistry(copying: configuration.encoders)
        self.configuration = configuration
        outputSettings = OutputSettings(configuration)
        negotiableFormats = configuration.detectedFormats.union(configuration.enforcedFormats)
        etagSuffix =
            configuration.etagBuster.isEmpty ? "" : "-" + SHA256.hash(configuration.etagBuster).hex.prefix(16)
        secretDigest = configuration.secret.map { SHA256.hash("Bearer \($0)") }
        let limiter = RenderLimiter(workers: configuration.workers, queueLimit: configuration.queueLimit)
        let shared = configuration.sharedCache
        let metrics = ServerMetrics(
            namespace: configuration.metricsNamespace, queueLength: { limiter.queueLength },
            sharedTier: { shared?.metrics }, droppedLogRecords: configuration.droppedLogRecords)
        self.limiter = limiter
        self.metrics = metrics
        // Decodes, resizes and encodes share one queue with a slot per core, encodes first: at most one CPU-bound
        // job per core (a queue per stage ran up to three per core, time-sliced), and a render that reached its
        // encode finishes before a newer one starts decoding, so renders complete in the order they started. Under a
        // real-time policy each closure gives its core up when done: under SCHED_FIFO the queue's threads are never
        // preempted by threads of their own priority, and kept both cores while work waited, libmicrohttpd's and the
        // loader's threads with them (BENCHMARKS.md, branch serve6).
        cpuQueue = WorkQueue(
            label: "imago.serve.cpu",
            maxConcurrentCount: min(configuration.workers, ProcessorQuota.cores),
            yieldsAfterEachClosure: true)
        let remote: any DataLoading =
            configuration.objectStores.isEmpty
            ? configuration.dataLoader
            : ObjectStoreLoader(stores: configuration.objectStores, remote: configuration.dataLoader)
        let sources: any DataLoading =
            configuration.localRoot.map { LocalSourceLoader(root: $0, remote: remote) } ?? remote
        let loader = CountingDataLoader(base: sources) { metrics.originFetched(bytes: $0) }
        var pipelineConfiguration = ImagePipeline.Configuration(
            dataLoader: loader,
            imageCache: MemoryCache(
                configuration: MemoryCache.Configuration(costLimit: configuration.imageMemoryLimit)),
            dataCache: configuration.originalCache)
        // The disk cache holds originals, as its name says: with the pipeline's default policy
        // (`storeEncodedImages`) every cold render also JPEG-encoded its 256-px intermediate and wrote that instead,
        // an encode per image nobody reads back (the output cache holds the outputs), and a lossy copy a render in
        // another format would then start from.
        pipelineConfiguration.dataCachePolicy = .storeOriginalData
        pipelineConfiguration.cpuQueue = cpuQueue
        pipelineConfiguration.decoders = configuration.decoders
        pipelineConfiguration.encoders = configuration.encoders
        pipelineConfiguration.decodingOptions.pixelLimit = configuration.pixelLimit
        // SVG sources are drawn at the size asked for, larger than their own too, as imgproxy draws vectors.
        pipelineConfiguration.decodingOptions.enlargesVectors = true
        // Metadata is read always (a walk the decoders make anyway): outputs keep the copyright by default.
        pipelineConfiguration.decodingOptions.readsMetadata = true
        // The failure cache would turn a 404 or an oversized body into one "failed recently" answer; the proxy
        // reports each failure with its own status instead.
        pipelineConfiguration.failureCache = nil
        pipelineConfiguration.sharedCache = configuration.sharedCache
        pipeline = ImagePipeline(configuration: pipelineConfiguration)
    }

    /// Waits until every cache write queued so far has reached the caches (originals, and outputs sent to a shared
    /// tier), then puts the ``DiskCache``s used as ``Configuration/originalCache`` and by the
    /// ``Configuration/outputCache`` on disk (``DiskCache/flush()``). Originals and shared copies are stored after
    /// the response is sent, so call it once the server has stopped taking requests and before the caches are
    /// closed, as `imago serve` does on SIGTERM; requests answered later queue writes of their own.
    public func flushCaches() async {
        await pipeline.flushCaches()
        await configuration.outputCache.flush()
    }

    /// Counts in `/metrics` (`requests_total`, by status; not the latency histogram) a request the HTTP server
    /// answered itself before ``respond(to:)`` could see it, such as ``MicroHTTPServer``'s 414 and 431 (its
    /// `rejected` parameter).
    public func countRejection(status: Int) { metrics.requestRejected(status: status) }

    /// Answers `request`. Never throws: every failure is a JSON error response with its status.
    public func respond(to request: ServerRequest) async -> ServerResponse {
        let start = ContinuousClock.now
        metrics.requestStarted()
        var record = AccessLogRecord(time: "", method: request.method, route: "image", status: 0, bytes: 0, ms: 0)
        var tier: ServerMetrics.CacheTier?
        let response: ServerResponse
        do throws(ProxyError) {
            switch try answerWithoutWaiting(request, record: &record) {
            case .answered(let answer, let answeredBy):
                response = answer
                tier = answeredBy
            case .needsRender(let verified, let key):
                // The context from here, so that a source's fetch can carry the request's span as its parent.
                record.trace = configuration.tracing?.context(for: request, at: Date())
                let traceFields = configuration.tracing?.sourceFields(for: record.trace) ?? [:]
                do throws(ProxyError) {
                    let rendered = try await output(for: key, source: verified.path.source, traceFields: traceFields)
                    response = imageResponse(
                        rendered.rendition, verified: verified, request: request, isPrivate: key.cookie != nil)
                    tier = rendered.tier
                    if let stages = rendered.stages {
                        metrics.renderObserved(stages)
                        if configuration.accessLog != nil { record.stages = stages }
                    }
                    record.colorWarning = rendered.colorWarning
                } catch let failure {
                    guard let fallback = configuration.fallbackImage, FallbackImage.replaces(failure) else {
                        throw failure
                    }
                    (response, tier) = try await fallbackResponse(
                        fallback, for: verified, key: key, failure: failure, request: request)
                    record.error = "\(failure.logDescription) (answered with the fallback image)"
                    metrics.fallbackSent()
                }
            }
        } catch {
            response = errorResponse(error)
            record.error = error.logDescription
        }
        return finish(request, response, tier: tier, start: start, record: &record)
    }

    /// Answers `request` at once when that needs no waiting and no I/O (an output in the memory cache, an error in
    /// the URL, `/healthz`, `/metrics`), else returns `nil` and ``respond(to:)`` must answer it. A server calls this
    /// on its event thread first, so a cached output is sent without a hop to the concurrency pool; both calls
    /// count the request in the metrics and the access log once.
    public func immediateResponse(to request: ServerRequest) -> ServerResponse? {
        let start = ContinuousClock.now
        var record = AccessLogRecord(time: "", method: request.method, route: "image", status: 0, bytes: 0, ms: 0)
        var tier: ServerMetrics.CacheTier?
        let response: ServerResponse
        // In flight from here, so that a /metrics answered here counts itself as the async path's does.
        metrics.requestStarted()
        do {
            guard case .answered(let answer, let answeredBy) = try answerWithoutWaiting(request, record: &record)
            else {
                metrics.requestHandedOver()
                return nil
            }
            response = answer
            tier = answeredBy
        } catch {
            response = errorResponse(error)
            record.error = error.logDescription
        }
        return finish(request, response, tier: tier, start: start, record: &record)
    }

    /// Whether `authorization` is `Bearer` and the secret whose digest is `digest` (compared in constant time).
    static func authorizes(_ authorization: String?, digest: SHA256Digest) -> Bool {
        guard let authorization else { return false }
        let given = SHA256.hash(authorization)
        return (given.w0 ^ digest.w0) | (given.w1 ^ digest.w1) | (given.w2 ^ digest.w2) | (given.w3 ^ digest.w3) == 0
    }

    /// `response` with the CORS headers of ``Configuration/allowedOrigin``, when there is one.
    /// `response` with its `X-Request-ID` and, with ``Configuration/allowedOrigin``, the CORS fields.
    private func decorated(_ response: ServerResponse, requestID: String) -> ServerResponse {
        var response = response
        response.headers.append(ServerResponse.Header("X-Request-ID", requestID))
        guard let origin = configuration.allowedOrigin else { return response }
        response.headers.append(ServerResponse.Header("Access-Control-Allow-Origin", origin))
        response.headers.append(ServerResponse.Header("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS"))
        if origin != "*" { response.headers.append(ServerResponse.Header("Vary", "Origin")) }
        return response
    }

    /// `path` without ``Configuration/pathPrefix``; `nil` when it does not start with it (whole segments only).
    private func unprefixed(_ path: String) -> String? {
        let prefix = configuration.pathPrefix
        guard !prefix.isEmpty else { return path }
        guard path.hasPrefix(prefix) else { return nil }
        let rest = path.dropFirst(prefix.count)
        return rest.hasPrefix("/") ? String(rest) : nil
    }

    /// What the synchronous part of a request came to.
    private enum FirstAnswer {
        /// The response (and the tier that produced it, for images).
        case answered(ServerResponse, ServerMetrics.CacheTier?)
        /// The output must be rendered or read from disk.
        case needsRender(VerifiedPath, OutputKey)
    }

    /// Routes, parses and checks `request`, and answers it when the output is in the memory cache.
    private func answerWithoutWaiting(
        _ request: ServerRequest, record: inout AccessLogRecord
    ) throws(ProxyError) -> FirstAnswer {
        if request.method == "OPTIONS", configuration.allowedOrigin != nil {
            record.route = "preflight"
            return .answered(
                ServerResponse(
                    status: 204, headers: [.init("Access-Control-Max-Age", "86400")], body: Data()),
                nil)
        }
        guard request.method == "GET" || request.method == "HEAD" else {
            throw ProxyError.methodNotAllowed(request.method)
        }
        let routed = unprefixed(request.path)
        let route = routed ?? request.path
        let isHealthCheck = route == "/healthz" || route == "/health" || route == configuration.healthCheckPath
        if let secretDigest, !isHealthCheck, !Self.authorizes(request.headers["authorization"], digest: secretDigest) {
            throw ProxyError.unauthorized
        }
        if isHealthCheck {
            record.route = "healthz"
            return .answered(Self.plain(200, "application/json", Data("{\"status\":\"ok\"}\n".utf8)), nil)
        }
        switch route {
        case "/metrics" where configuration.servesMetrics:
            record.route = "metrics"
            return .answered(metricsResponse(), nil)
        case "/metrics":
            throw ProxyError.notFound("the metrics are served on a listener of their own")
        default:
            guard let routed else { throw ProxyError.notFound("no image URL outside \(configuration.pathPrefix)/") }
            let verified = try verifiedPath(routed)
            let path = verified.path
            if let expires = path.options.expires, Date().timeIntervalSince1970 > Double(expires) {
                throw ProxyError.notFound("the URL expired")
            }
            if configuration.accessLog != nil {
                record.source = path.source.redactedString
                record.options = path.options.canonicalDescription
            }
            let choice: FormatChoice
            if let explicit = verified.explicitChoice {
                // An enforced format the client accepts wins over the URL's (imgproxy's IMGPROXY_ENFORCE_AVIF/WEBP).
                choice =
                    FormatNegotiation.negotiated(
                        request.headers["accept"], among: configuration.enforcedFormats,
                        encoders: configuration.encoders) ?? explicit
            } else {
                choice = try FormatNegotiation.choice(
                    explicit: nil, accept: request.headers["accept"], encoders: configuration.encoders,
                    detected: negotiableFormats)
            }
            var options =
                configuration.usesClientHints
                ? ClientHints(headers: request.headers).applied(to: path.options, set: path.hintedFieldsSet)
                : path.options
            if let option = options.security.firstSetOption, !configuration.allowsSecurityOptions {
                throw ProxyError.invalidOption(
                    name: option, reason: "security options are not allowed on this server (--allow-security-options)")
            }
            options.maxResultDimension =
                SecurityLimits.tighter(configuration.resultDimensionLimit, options.security.maxResultDimension) ?? 0
            options.resizesInLinearLight = configuration.usesLinearColorspace
            options.disablesShrinkOnLoad = !configuration.shrinksOnLoad
            // The server's formats are the URL's too, so that a URL naming them shares their outputs.
            options.skippedFormats.formUnion(configuration.skippedFormats)
            // An SVG source is answered as SVG, sanitized, when the URL asks for svg or, unless the server
            // rasterises SVGs, for no format (imgproxy's rule): `skip_processing`'s way, which fetches the source
            // first to see its format.
            let namesNoFormat = verified.explicitChoice == nil
            if verified.explicitChoice == .explicit(.svg) || (namesNoFormat && !configuration.rasterizesSVG) {
                options.skippedFormats.insert(.svg)
            }
            // Resolved here so that the server's default and a URL's eth:1 share keys (eth:0 and unset too).
            options.enforcesThumbnail = (options.enforcesThumbnail ?? configuration.enforcesThumbnail) ? true : nil
            options.keepsColorProfile = (options.keepsColorProfile ?? configuration.keepsColorProfile) ? true : nil
            options.keepsMetadata = (options.keepsMetadata ?? !configuration.stripsMetadata) ? true : nil
            options.keepsCopyright = (options.keepsCopyright ?? configuration.keepsCopyright) ? nil : false
            var key = OutputKey(
                source: verified.source, options: options, format: choice,
                watermark: options.watermark == nil ? nil : configuration.watermark?.id)
            if configuration.maxAnimationFrames > 1 {
                key.animation = OutputKey.Animation(
                    frames: min(configuration.maxAnimationFrames, options.security.maxAnimationFrames ?? .max),
                    format: FormatNegotiation.animatedFormat(
                        for: choice, accept: request.headers["accept"], encoders: configuration.encoders,
                        preferred: outputSettings.preferred),
                    framePixels: SecurityLimits.tighter(
                        configuration.framePixelLimit, options.security.maxAnimationFramePixels))
            }
            // Resolved into the key's animation (or moot without one): a URL's limit that the server's matches or
            // undercuts keys the same output as no limit at all.
            key.options.security.maxAnimationFrames = nil
            key.options.security.maxAnimationFramePixels = nil
            key.options.security.maxResultDimension = nil
            key.settings = outputSettings.keyText(
                for: choice, options: options, animatedFormat: key.animation?.format)
            // The client's own output when its cookies go to the origin: the output cache neither keeps nor answers it.
            key.cookie = configuration.cookiePassthrough?.cookie(for: request, source: path.source)
            guard let rendition = configuration.outputCache.memoryRendition(for: key), !isOutdated(rendition) else {
                return .needsRender(verified, key)
            }
            return .answered(
                imageResponse(rendition, verified: verified, request: request, isPrivate: key.cookie != nil),
                .outputMemory)
        }
    }

    /// `response` as sent (``decorated(_:requestID:)`` with the request's ID), counted in the metrics and written
    /// to the access log.
    private func finish(
        _ request: ServerRequest, _ response: ServerResponse, tier: ServerMetrics.CacheTier?,
        start: ContinuousClock.Instant, record: inout AccessLogRecord
    ) -> ServerResponse {
        let requestID = identity.requestID(for: request)
        let response = decorated(response, requestID: requestID)
        let elapsed = ContinuousClock.now - start
        let seconds = elapsed.timeInterval
        let sent = request.method == "HEAD" ? 0 : response.body.count
        metrics.requestFinished(status: response.status, seconds: seconds, tier: tier, bytesOut: sent)
        if let log = configuration.accessLog {
            let now = Date()
            record.time = now.formatted(.iso8601)
            record.finishedAt = now
            if record.route == "image", record.trace == nil, let tracing = configuration.tracing {
                record.trace = tracing.context(for: request, at: now)
            }
            record.status = response.status
            record.bytes = sent
            record.ms = AccessLogRecord.milliseconds(elapsed)
            record.cache = tier?.rawValue
            record.requestID = requestID
            record.clientIP = RequestIdentity.clientIP(of: request)
            log(record)
        }
        return response
    }

    /// `rawPath` parsed and checked (signature, source policy, an explicit format's encoder): from the cache of
    /// paths that passed, else checked now and remembered. The checks depend on the path alone (the signature is
    /// part of it) and on the configuration, which does not change, so a repeated URL is neither parsed nor
    /// signature-checked again; a path that fails is not remembered.
    private func verifiedPath(_ rawPath: String) throws(ProxyError) -> VerifiedPath {
        if let hit = verifiedPaths.withLock({ $0.value(for: rawPath, now: { .zero }) }) { return hit }
        let path = try ProxyPath(
            parsing: rawPath, presets: configuration.presets, replacements: configuration.urlReplacements,
            baseURL: configuration.baseURL,
            onlyPresets: configuration.onlyPresets, allowsLocal: configuration.localRoot != nil,
            objectStoreSchemes: Set(configuration.objectStores.map(\.scheme)),
            allowedOptions: configuration.allowedProcessingOptions,
            base64IncludesFilename: configuration.base64URLIncludesFilename,
            argumentsSeparator: configuration.argumentsSeparator, querySeparator: configuration.sourceQuerySeparator)
        if path.isUnsigned {
            guard configuration.allowsUnsigned else { throw .unsignedURL }
        } else if !configuration.trustedSignatures.contains(path.signature) {
            guard let signer = configuration.signer, signer.isValid(signature: path.signature, for: path.signedPart)
            else { throw .badSignature }
        }
        if path.options.watermark != nil, configuration.watermark == nil {
            throw .invalidOption(name: "watermark", reason: "this server has no watermark image (--watermark FILE)")
        }
        try configuration.sourcePolicy.check(path.source)
        let explicitChoice: FormatChoice? =
            if let format = path.options.format {
                try FormatNegotiation.choice(explicit: format, accept: nil, encoders: configuration.encoders)
            } else {
                nil
            }
        let source = path.source.absoluteString
        let scheme = path.source.scheme?.lowercased()
        let verified = VerifiedPath(
            path: path, source: source, explicitChoice: explicitChoice,
            disposition: ContentDisposition(path, attachmentByDefault: configuration.returnsAttachment),
            canonicalLink: configuration.setsCanonicalHeader && (scheme == "http" || scheme == "https")
                ? "<\(source)>; rel=\"canonical\"" : nil)
        let released = verifiedPaths.withLock {
            $0.setValue(verified, for: rawPath, cost: rawPath.utf8.count + verified.source.utf8.count + 512)
        }
        _ = released  // let go here, outside the lock
        return verified
    }

    /// The fallback image rendered for `key`'s options and format, in place of the source that failed with
    /// `failure`: with the fallback's status (or the failure's) and `Cache-Control`; a 304 for a matching
    /// `If-None-Match` only when the status is 200. Throws `failure` when the fallback cannot be rendered.
    private func fallbackResponse(
        _ fallback: FallbackImage, for verified: VerifiedPath, key: OutputKey, failure: ProxyError,
        request: ServerRequest
    ) async throws(ProxyError) -> (ServerResponse, ServerMetrics.CacheTier?) {
        var fallbackKey = key
        fallbackKey.source = fallback.sourceURL.absoluteString
        // The fallback's pixels owe nothing to the client's cookies: one render, cached, for everyone. Its answer
        // to a request with cookies stays private, since the failure it stands for may be that client's own.
        fallbackKey.cookie = nil
        let isPrivate = key.cookie != nil
        let rendered: RenderedOutput
        do {
            rendered = try await output(for: fallbackKey, source: fallback.sourceURL, original: fallback.data)
        } catch {
            throw failure
        }
        let status = fallback.status ?? failure.status
        var conditional = request
        if status != 200 { conditional.headers["if-none-match"] = nil }
        var response = imageResponse(
            rendered.rendition, verified: verified, request: conditional, isPrivate: isPrivate)
        if response.status == 200 { response.status = status }
        if let maxAge = fallback.maxAge, let index = response.headers.firstIndex(where: { $0.name == "Cache-Control" })
        {
            response.headers[index] = ServerResponse.Header(
                "Cache-Control", Self.maxAge(Int(maxAge.timeInterval), isPrivate: isPrivate))
        }
        // A fresh render of the fallback fetched nothing: no tier to count.
        return (response, rendered.tier == .origin ? nil : rendered.tier)
    }

    /// The image response for `rendition`: its headers, or a 304 for a matching `If-None-Match` (or, without one,
    /// an `If-Modified-Since` not older than the source's `Last-Modified` it carries).
    /// With `isPrivate` (an output made with the client's cookies, ``OutputKey/cookie``), `Cache-Control` is
    /// `private`.
    private func imageResponse(
        _ rendition: Rendition, verified: VerifiedPath, request: ServerRequest, isPrivate: Bool
    ) -> ServerResponse {
        let path = verified.path
        let vary = varyValue(
            negotiatesFormat: path.options.format == nil && !negotiableFormats.isEmpty)
        let etag = etagSuffix.isEmpty ? rendition.etag : String(rendition.etag.dropLast()) + etagSuffix + "\""
        var headers = [
            ServerResponse.Header("ETag", etag),
            ServerResponse.Header("Cache-Control", cacheControl(for: rendition, isPrivate: isPrivate)),
        ]
        let lastModified = configuration.usesLastModified ? busted(rendition.sourceLastModified) : nil
        if let lastModified { headers.append(ServerResponse.Header("Last-Modified", lastModified)) }
        if let vary { headers.append(ServerResponse.Header("Vary", vary)) }
        if configuration.sendsDebugHeaders { headers += Self.debugHeaders(rendition.facts) }
        // A 304 names the length the 200 would have (RFC 9110 allows that length and no other: a cache that took
        // a `Content-Length: 0` from it could store the image as empty).
        let length = ServerResponse.Header("Content-Length", "\(rendition.data.count)")
        if let match = request.headers["if-none-match"] {
            if Self.matches(match, etag: etag) {
                return ServerResponse(status: 304, headers: headers + [length], body: Data())
            }
        } else if let lastModified, let since = request.headers["if-modified-since"],
            let modified = HTTPDateParser.date(from: lastModified), let sinceDate = HTTPDateParser.date(from: since),
            modified <= sinceDate
        {
            return ServerResponse(status: 304, headers: headers + [length], body: Data())
        }
        headers.append(
            ServerResponse.Header(
                "Content-Disposition", verified.disposition.value(for: rendition.format)))
        if let link = verified.canonicalLink { headers.append(ServerResponse.Header("Link", link)) }
        headers.insert(
            ServerResponse.Header(
                "Content-Type", rendition.format.mimeType),
            at: 0)
        headers.insert(length, at: 1)
        headers.append(ServerResponse.Header("Content-Security-Policy", Self.contentSecurityPolicy))
        return ServerResponse(status: 200, headers: headers, body: rendition.data)
    }

    /// The `Content-Security-Policy` of every image response, imgproxy's: an output opened as a document (an SVG
    /// above all) runs no script, loads nothing but `data:` images and is sandboxed.
    static let contentSecurityPolicy = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox"

    /// The `Vary` of an image response, if any: `Accept` when the format is negotiated (`negotiatesFormat`: the URL
    /// names none) or may be enforced, and the client-hint fields when they are read.
    func varyValue(negotiatesFormat: Bool) -> String? {
        let accept = negotiatesFormat || !configuration.enforcedFormats.isEmpty
        let hints = configuration.usesClientHints
        switch (accept, hints) {
        case (false, false): return nil
        case (true, false): return "Accept"
        case (false, true): return ClientHints.varyFields.joined(separator: ", ")
        case (true, true): return (["Accept"] + ClientHints.varyFields).joined(separator: ", ")
        }
    }

    /// imgproxy's debug headers for `facts`, each when known (``Configuration/sendsDebugHeaders``).
    static func debugHeaders(_ facts: RenditionFacts) -> [ServerResponse.Header] {
        var headers: [ServerResponse.Header] = []
        if let count = facts.sourceByteCount { headers.append(.init("X-Origin-Content-Length", "\(count)")) }
        if let size = facts.sourceSize {
            headers.append(.init("X-Origin-Width", "\(size.width)"))
            headers.append(.init("X-Origin-Height", "\(size.height)"))
        }
        if let size = facts.resultSize {
            headers.append(.init("X-Result-Width", "\(size.width)"))
            headers.append(.init("X-Result-Height", "\(size.height)"))
        }
        return headers
    }

    /// `Cache-Control` for `rendition`: the configured one, or with ``Configuration/passesSourceCacheControl`` and a
    /// source that said when it stops being fresh, the seconds left until then (0 once past); `private` instead of
    /// `public` with `isPrivate` (an output made with the client's cookies).
    func cacheControl(for rendition: Rendition, isPrivate: Bool = false, now: Date = Date()) -> String {
        var seconds = Int(configuration.maxAge.timeInterval)
        if configuration.passesSourceCacheControl, let expiresAt = rendition.sourceExpiresAt {
            seconds = Int(min(max(0, expiresAt.timeIntervalSince(now).rounded(.down)), Double(Int32.max)))
        }
        return Self.maxAge(seconds, isPrivate: isPrivate)
    }

    /// A source's `Last-Modified` as sent: ``Configuration/lastModifiedBuster`` instead when the source's is
    /// earlier; `nil` for none, or one that is not an HTTP date (as imgproxy, which does not pass such values on
    /// once a buster is set).
    func busted(_ lastModified: String?) -> String? {
        guard let lastModified, let buster = configuration.lastModifiedBuster else { return lastModified }
        guard let date = HTTPDateParser.date(from: lastModified) else { return nil }
        return date < buster ? HTTPDateParser.imfFixdate(from: buster) : lastModified
    }

    /// The `Cache-Control` value that lets any cache keep a response for `seconds`, or with `isPrivate` (an output
    /// made with the client's cookies) only the client's.
    static func maxAge(_ seconds: Int, isPrivate: Bool = false) -> String {
        "\(isPrivate ? "private" : "public"), max-age=\(seconds)"
    }

    /// Whether an `If-None-Match` value matches `etag` (weak comparison, as RFC 9110 asks for this header).
    static func matches(_ header: String, etag: String) -> Bool {
        let bare = etag.hasPrefix("W/") ? String(etag.dropFirst(2)) : etag
        return header.split(separator: ",").contains { candidate in
            let tag = candidate.trimmingCharacters(in: .whitespaces)
            return tag == "*" || tag == bare || tag == "W/" + bare
        }
    }

    /// The answer of a listener that serves only the metrics (`imago serve --metrics-listen`, imgproxy's
    /// `IMGPROXY_PROMETHEUS_BIND`): `/metrics` in the Prometheus text format, anything else a 404.
    public func metricsListenerResponse(to request: ServerRequest) -> ServerResponse {
        guard request.path == "/metrics" else {
            return Self.plain(404, "application/json", Data("{\"error\":\"not found: only /metrics here\"}\n".utf8))
        }
        return metricsResponse()
    }

    /// `/metrics`: the counters in the Prometheus text format.
    func metricsResponse() -> ServerResponse {
        Self.plain(200, "text/plain; version=0.0.4; charset=utf-8", Data(metrics.prometheusText().utf8))
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

    /// ``error(_:retryAfter:detailed:allowedMethods:)`` with this proxy's settings: its `Retry-After`, its
    /// detailed errors, and `OPTIONS` among the methods a 405 names when it answers preflights.
    private func errorResponse(_ error: ProxyError) -> ServerResponse {
        Self.error(
            error, retryAfter: configuration.retryAfterSeconds, detailed: configuration.sendsDetailedErrors,
            allowedMethods: configuration.allowedOrigin == nil ? "GET, HEAD" : "GET, HEAD, OPTIONS")
    }

    /// `{"error": …}` with the error's status (and `Retry-After` for a 503, `Allow: allowedMethods` for a 405, as
    /// RFC 9110 asks); with `detailed`, the sentence the access log gets (``ProxyError/logDescription``: why a
    /// store's credentials failed, too).
    static func error(
        _ error: ProxyError, retryAfter: Int, detailed: Bool = false, allowedMethods: String = "GET, HEAD"
    ) -> ServerResponse {
        let text = detailed ? error.logDescription : error.description
        let body =
            (try? JSONSerialization.data(withJSONObject: ["error": text], options: [.sortedKeys]))
            ?? Data("{\"error\":\"error\"}".utf8)
        var response = plain(error.status, "application/json", body + Data("\n".utf8))
        switch error {
        case .overloaded(let seconds): response.headers.append(.init("Retry-After", "\(seconds)"))
        case .requestTimedOut: response.headers.append(.init("Retry-After", "\(retryAfter)"))
        case .methodNotAllowed: response.headers.append(.init("Allow", allowedMethods))
        default: break
        }
        return response
    }
}

/// A request path that parsed and passed the signature and source checks.
struct VerifiedPath: Sendable {
    var path: ProxyPath
    /// `path.source` as text (the output key's source), made once.
    var source: String
    /// The format choice when the path names one (it does not depend on `Accept`).
    var explicitChoice: FormatChoice?
    /// The `Content-Disposition` of its responses.
    var disposition: ContentDisposition
    /// The `Link` of its responses naming the source canonical (``ImageProxy/Configuration/setsCanonicalHeader``,
    /// for `http` and `https` sources), if any.
    var canonicalLink: String?
}
