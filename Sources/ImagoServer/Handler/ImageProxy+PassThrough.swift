import Foundation
import Imago

extension ImageProxy {
    /// What `skip_processing` decided for a source.
    enum PassThrough {
        /// The source's bytes are the output.
        case passed(RenderedOutput)
        /// The source is to be rendered from these bytes, its own.
        case render(ImageDataResponse)
    }

    /// The source's bytes through the pipeline's ``ImagePipeline/data(for:)`` (its disk cache, coalescing and
    /// origin policy), with what its response said (``ImageDataResponse/metadata``). With
    /// ``Configuration/passesSourceCacheControl``, a stale original is revalidated before it is rendered
    /// (``ImageRequest/Options/revalidatesBeforeDelivery``), so an output records the freshness it really has.
    /// With the client's `cookie` (``Configuration/cookiePassthrough``), sent along, the bytes are fetched for
    /// this request alone (``sourceRequest(_:cookie:traceFields:)``); `traceFields` (the request's trace context)
    /// are sent too.
    func sourceData(
        _ source: URL, cookie: String? = nil, traceFields: [String: String] = [:]
    ) async throws(ProxyError) -> ImageDataResponse {
        let options: ImageRequest.Options = configuration.passesSourceCacheControl ? [.revalidatesBeforeDelivery] : []
        do {
            return try await pipeline.data(
                for: Self.sourceRequest(
                    ImageRequest(url: source, options: options), cookie: cookie, traceFields: traceFields))
        } catch {
            throw Self.proxyError(for: error)
        }
    }

    /// `request` sending `cookie`, the client's, when there is one: then loaded for itself alone, in no cache of
    /// the pipeline (memory, disk, shared tier or failures) and with no other request's work. `traceFields`
    /// (``RequestTracing/propagatesToSources``: `traceparent` and the like) are sent too: the pipeline shares a
    /// download only between requests with the same fields, so a load in one trace is not shared with another's
    /// (the caches are, as ever).
    static func sourceRequest(
        _ request: ImageRequest, cookie: String?, traceFields: [String: String] = [:]
    ) -> ImageRequest {
        var request = request
        request.headers.merge(traceFields) { _, field in field }
        guard let cookie else { return request }
        request.headers["Cookie"] = cookie
        request.options.formUnion([
            .skipsMemoryCacheReads, .skipsMemoryCacheWrites, .skipsDiskCacheReads, .skipsDiskCacheWrites,
            .skipsFailureCacheReads, .skipsFailureCacheWrites, .disablesCoalescing,
        ])
        return request
    }

    /// `rendition` with the source facts of `original` that the configuration passes on: its `Last-Modified`
    /// (``Configuration/usesLastModified``) and when it stops being fresh
    /// (``Configuration/passesSourceCacheControl``; a fetched source without metadata said `no-store`, and is
    /// taken as stale at once).
    func recordingSource(_ original: ImageDataResponse?, in rendition: Rendition) -> Rendition {
        guard let original else { return rendition }
        var recorded = rendition
        if configuration.sendsDebugHeaders { recorded.facts.sourceByteCount = original.data.count }
        guard let metadata = original.metadata else {
            if configuration.passesSourceCacheControl, original.source == .network { recorded.sourceExpiresAt = Date() }
            return recorded
        }
        if configuration.usesLastModified { recorded.sourceLastModified = metadata.validators.lastModified }
        if configuration.passesSourceCacheControl {
            recorded.sourceExpiresAt = metadata.expiresAt
            recorded.facts.sourceValidators = metadata.validators.isEmpty ? nil : metadata.validators
        }
        return recorded
    }

    /// The source's own bytes, `original`, as the output for `key` (imgproxy's `skip_processing`), or those bytes
    /// to render when their format is not among the options' ``ProcessingOptions/skippedFormats`` or the URL
    /// names another output format (`queued`: how long the render waited for a worker; `started`: when it got one
    /// and began fetching).
    ///
    /// A source that is rendered after all is rendered from `original`, not fetched twice. Before the bytes are
    /// passed on, the first frame is decoded at the smallest size its codec offers: a source that is not an image
    /// of its format is a 415, and one over the pixel limit a 422, as for a render. Nothing is resized or
    /// re-encoded, and no `Accept` negotiation applies.
    ///
    /// An SVG source is not decoded but sanitized (``SVGSanitizer``): its output is the document made safe, and
    /// the size it declares is held to the pixel limit.
    func passThrough(
        _ key: OutputKey, original: ImageDataResponse, queued: Duration, started: ContinuousClock.Instant
    ) async throws(ProxyError) -> PassThrough {
        guard key.options.skippedFormats.contains(original.format) else { return .render(original) }
        if case .explicit(let format) = key.format, !Self.sameSourceFormat(format, original.format) {
            return .render(original)
        }
        let fetched = ContinuousClock.now
        var options = pipeline.configuration.decodingOptions
        options.pixelLimit = min(options.pixelLimit, key.options.security.maxSourcePixels ?? .max)
        options.targetSize = PixelSize(width: 1, height: 1)
        options.decodesFirstFrameOnly = true
        options.appliesOrientation = false
        options.colorPolicy = .ignore
        let checkOptions = options
        let decoders = configuration.decoders
        let checked = await cpuQueue.value(priority: .normal) {
            Result { () throws(CodecError) -> (data: Data, size: PixelSize?) in
                guard original.format == .svg else {
                    return (
                        original.data,
                        try Self.checkedSize(of: original.data, decoders: decoders, options: checkOptions)
                    )
                }
                let sanitized = try SVGSanitizer().sanitize(original.data)
                return (sanitized.data, sanitized.size)
            }
        }
        let decoded = ContinuousClock.now
        let output: Data
        switch checked {
        case .failure(let error): throw Self.proxyError(for: error)
        case .success(let result):
            if let size = result.size, size.width * size.height > checkOptions.pixelLimit {
                throw .imageTooLarge(
                    "\(size.width)x\(size.height) pixels is over the limit of \(checkOptions.pixelLimit)")
            }
            output = result.data
        }
        // The same bytes whatever `Accept` said and whatever qualities the server encodes at: one ETag for every
        // negotiated variant of the key.
        var sameForEveryAccept = key
        if case .negotiated = key.format { sameForEveryAccept.format = .sourceDerived }
        sameForEveryAccept.settings = nil
        var rendition = recordingSource(
            original, in: Rendition(data: output, format: original.format, key: sameForEveryAccept))
        if configuration.sendsDebugHeaders, case .success(let result) = checked, let size = result.size {
            rendition.facts.sourceSize = size
            rendition.facts.resultSize = size
        }
        configuration.outputCache.store(rendition, for: key)
        metrics.sourcePassedThrough()
        var timings = original.metrics
        timings.decode = decoded - fetched
        let stages = RenderStages(
            timings: timings, queued: queued, pipeline: decoded - started, encodeWait: .zero, encode: .zero,
            store: .now - decoded)
        return .passed(
            RenderedOutput(rendition: rendition, tier: Self.tier(rendering: original.source), stages: stages))
    }

    /// Whether an output asked for in `requested` is the source's own `format` (a PNG request takes an APNG, a
    /// HEIC request any HEIF).
    static func sameSourceFormat(_ requested: ImageFormat, _ format: ImageFormat) -> Bool {
        requested == format || (requested == .png && format == .apng) || (requested == .heic && format == .heif)
    }

    /// The full pixel size of `data`'s image, from a decode of its first frame with `options`.
    ///
    /// - Throws: ``CodecError`` (the decoder's, or ``CodecError/unsupportedFormat(_:)``).
    static func checkedSize(
        of data: Data, decoders: ImageDecoderRegistry, options: DecodingOptions
    ) throws(CodecError) -> PixelSize {
        do {
            return try decoders.decode(data, options: options).originalSize
        } catch let error as CodecError {
            throw error
        } catch {
            throw .corrupt(format: decoders.format(of: data), reason: "\(error)")
        }
    }
}
