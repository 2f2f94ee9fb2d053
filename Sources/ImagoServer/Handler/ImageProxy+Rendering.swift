import Foundation
import Imago

/// An output and how it was had: the tier that answered and, for the request that rendered it, where the time went.
struct RenderedOutput: Sendable {
    var rendition: Rendition
    var tier: ServerMetrics.CacheTier
    var stages: RenderStages?
    /// For the request that rendered it: why the source's colour declaration was not used
    /// (``ImageContainer/colorWarning``), if so.
    var colorWarning: String?
    /// For a cached output past its source's freshness, what became of it (a render's own output: rendered).
    var renewal = ServerMetrics.Renewal.rendered
}

extension RenderStages {
    /// A render's stages from the pipeline's `timings` and the spans the proxy measured around it.
    init(
        timings: ImageResponse.Metrics, queued: Duration, pipeline: Duration, encodeWait: Duration,
        encode: Duration, store: Duration
    ) {
        let ran = [timings.load, timings.diskRead, timings.decode, timings.process].reduce(Duration.zero) {
            $0 + ($1 ?? .zero)
        }
        self.init(
            queue: AccessLogRecord.milliseconds(queued), fetch: timings.load.map(AccessLogRecord.milliseconds),
            disk: timings.diskRead.map(AccessLogRecord.milliseconds),
            decode: timings.decode.map(AccessLogRecord.milliseconds),
            process: timings.process.map(AccessLogRecord.milliseconds),
            pipelineWait: AccessLogRecord.milliseconds(max(.zero, pipeline - ran)),
            encodeWait: AccessLogRecord.milliseconds(encodeWait),
            encode: AccessLogRecord.milliseconds(encode), store: AccessLogRecord.milliseconds(store))
    }
}

extension ImageProxy {
    /// The output for `key`: from the output cache, else from the render in flight for it, else rendered now
    /// (one fetch, decode and encode however many requests ask at once); from `original` when given, the source's
    /// bytes, without fetching.
    ///
    /// With `traceFields` (``RequestTracing/propagatesToSources``), a render this request starts sends them to the
    /// origin; a request that joins another's render is in that request's trace at the origin.
    func output(
        for key: OutputKey, source: URL, original: Data? = nil, traceFields: [String: String] = [:]
    ) async throws(ProxyError) -> RenderedOutput {
        var outdated: RenderedOutput?
        if let (rendition, tier) = await configuration.outputCache.rendition(for: key, diskQueue: pipeline.diskQueue) {
            let cached = RenderedOutput(rendition: rendition, tier: tier == .memory ? .outputMemory : .outputDisk)
            guard isOutdated(rendition) else { return cached }
            outdated = cached
        }
        let (task, isLeader) = renders.withLock { renders in
            if let task = renders[key] { return (task, false) }
            let task = Task { [outdated] in
                let result = await self.render(
                    key, source: source, original: original, outdated: outdated, traceFields: traceFields)
                // The render removes its own entry once its output is in the cache, whether or not anyone still
                // waits for it. It cannot get here before the entry is inserted: that happens under this lock.
                self.renders.withLock { _ = $0.removeValue(forKey: key) }
                return result
            }
            renders[key] = task
            return (task, true)
        }
        let result: Result<RenderedOutput, ProxyError>
        if let timeout = configuration.requestTimeout {
            // Given up on, the render goes on for the other requests and the cache.
            guard let value = await TaskDeadline.value(of: task, within: timeout) else {
                throw .requestTimedOut(after: timeout)
            }
            result = value
        } else {
            result = await task.value
        }
        if isLeader, outdated != nil, case .success(let output) = result { metrics.outputRenewed(output.renewal) }
        switch result {
        case .success(let output):
            return isLeader ? output : RenderedOutput(rendition: output.rendition, tier: .coalesced)
        case .failure(let error): throw error
        }
    }

    /// `outdated`, answered as it was because its origin could not be asked: stored again as fresh for
    /// ``Configuration/staleRetryInterval``, doubled for each failure in a row before this one (at most
    /// ``Configuration/maximumStaleRetryInterval``), so the next requests are answered at once and the origin is
    /// asked again only after that.
    private func answeredStale(_ outdated: RenderedOutput, for key: OutputKey) -> RenderedOutput {
        var answered = outdated
        answered.renewal = .stale
        let failures = answered.rendition.facts.staleAnswers ?? 0
        answered.rendition.facts.staleAnswers = failures + 1
        let base = configuration.staleRetryInterval.timeInterval
        let interval = min(
            base * Double(1 << min(failures, 30)), max(base, configuration.maximumStaleRetryInterval.timeInterval))
        answered.rendition.sourceExpiresAt = Date().addingTimeInterval(interval)
        configuration.outputCache.store(answered.rendition, for: key)
        return answered
    }

    /// Whether the cached `rendition` must be rendered again before it is served: with
    /// ``Configuration/passesSourceCacheControl``, once its source's freshness has run out.
    func isOutdated(_ rendition: Rendition, now: Date = Date()) -> Bool {
        guard configuration.passesSourceCacheControl, let expiresAt = rendition.sourceExpiresAt else { return false }
        return now >= expiresAt
    }

    /// Loads (or takes `original`, the source's bytes), decodes and processes through the pipeline, then encodes
    /// and stores the output. `outdated` is the cached output whose source's freshness ran out, if any: it is
    /// answered instead when the origin cannot be asked about the source (stale-if-error).
    private func render(
        _ key: OutputKey, source: URL, original given: Data?, outdated: RenderedOutput? = nil,
        traceFields: [String: String] = [:]
    ) async -> Result<RenderedOutput, ProxyError> {
        // Checked again: a render of this key may have finished between the caller's miss and its lock. That
        // render stored its output in memory before it ended, so the memory tier is enough here: the caller has
        // just missed the disk tier, and a second look there is one more failed open(2) per cold image.
        if let rendition = configuration.outputCache.memoryRendition(for: key), !isOutdated(rendition) {
            return .success(RenderedOutput(rendition: rendition, tier: .outputMemory))
        }
        if let rendition = await configuration.outputCache.sharedRendition(for: key), !isOutdated(rendition) {
            return .success(RenderedOutput(rendition: rendition, tier: .outputShared))
        }
        let queued = ContinuousClock.now
        guard await limiter.acquire() else {
            return .failure(.overloaded(retryAfterSeconds: configuration.retryAfterSeconds))
        }
        defer { limiter.release() }
        let started = ContinuousClock.now
        // With skip_processing, the source's bytes are fetched first to see their format, and with the source's
        // Last-Modified or freshness passed on, to read them: a render then decodes those bytes rather than asking
        // the pipeline to load them again.
        var original: ImageDataResponse?
        // Frames are kept only when the output's format can hold them and no processor would cut each frame
        // differently; an animation over the limits is rendered again from its first frame.
        let keptFrames =
            key.animation.flatMap { $0.format != nil && Self.keepsFrames(key.options) ? $0.frames : nil } ?? 1
        func request(frames: Int) -> ImageRequest {
            // Bytes just fetched, or an output being renewed: the pipeline's memory may hold this source's older
            // pixels.
            let isNewSource = outdated != nil || original?.source == .network
            var request = Self.imageRequest(
                for: key.options, source: source, original: given ?? original?.data,
                decoding: pipeline.configuration.decodingOptions, watermark: configuration.watermark,
                animationFrames: frames, framePixelLimit: key.animation?.framePixels,
                sumsFramePixels: configuration.framePixelLimit == nil)
            if isNewSource || hasOwnDecodingLimits(key) { request.options.insert(.skipsMemoryCacheReads) }
            return Self.sourceRequest(request, cookie: key.cookie, traceFields: traceFields)
        }
        var skips = !key.options.skippedFormats.isEmpty
        // When only SVG sources would pass through (the default for URLs naming no format), an image the
        // pipeline's memory holds for this request shows the source's format without a fetch.
        if key.options.skippedFormats == [.svg], key.format != .explicit(.svg), given == nil,
            let cached = pipeline.cachedImage(for: request(frames: keptFrames)), cached.format != .svg
        {
            skips = false
        }
        let byteLimit = key.options.security.maxSourceBytes
        if given == nil,
            skips || configuration.usesLastModified || configuration.passesSourceCacheControl
                || configuration.sendsDebugHeaders || byteLimit != nil
        {
            do throws(ProxyError) {
                let fetched = try await sourceData(source, cookie: key.cookie, traceFields: traceFields)
                if let byteLimit, fetched.data.count > byteLimit {
                    throw ProxyError.sourceTooLarge(limit: Int64(byteLimit))
                }
                if var outdated {
                    // The origin could not be asked: the output as it was, not one of stale bytes.
                    if fetched.isStale { return .success(answeredStale(outdated, for: key)) }
                    if let validators = outdated.rendition.facts.sourceValidators,
                        validators == fetched.metadata?.validators
                    {
                        // The source the output was made from, fresh again: the output too, without a render.
                        outdated.rendition = recordingSource(fetched, in: outdated.rendition)
                        outdated.rendition.facts.staleAnswers = nil  // the origin answered
                        configuration.outputCache.store(outdated.rendition, for: key)
                        outdated.renewal = .unchanged
                        return .success(outdated)
                    }
                }
                if skips,
                    case .passed(let output) = try await passThrough(
                        key, original: fetched, queued: started - queued, started: started)
                {
                    return .success(output)
                }
                original = fetched
            } catch {
                // The origin failed, timed out or is limiting this server (not a 404, 403 or 410): the output as it
                // was, when there is one.
                if let outdated, [502, 504, 429].contains(error.status) {
                    return .success(answeredStale(outdated, for: key))
                }
                return .failure(error)
            }
        }
        // svg is answered only from an SVG source, passed through above.
        if key.format == .explicit(.svg) {
            return .failure(.outputFormatUnavailable(.svg, source: original?.format ?? .unknown))
        }
        // A JPEG made into a WebP or JPEG thumbnail, nothing else asked: from its YCbCr planes, bypassing RGB.
        if given == nil, case let pipelined = request(frames: keptFrames),
            let yCbCr = yCbCrRender(for: key, request: pipelined), pipeline.cachedImage(for: pipelined) == nil
        {
            if original == nil {
                do throws(ProxyError) {
                    original = try await sourceData(source, cookie: key.cookie, traceFields: traceFields)
                } catch {
                    return .failure(error)
                }
            }
            if let original,
                let output = await renderYCbCr(key, original: original, render: yCbCr, queued: started - queued)
            {
                return .success(output)
            }
        }
        let response: ImageResponse
        do {
            do {
                response = try await pipeline.response(for: request(frames: keptFrames))
            } catch .decodingFailed(_, let underlying)
                where keptFrames > 1
                && (Self.isAnimationLimit(underlying) || Self.isFramePixelLimit(underlying, key.animation))
            {
                response = try await pipeline.response(for: request(frames: 1))
            }
        } catch {
            // Bytes this render downloaded and handed to the pipeline, undecodable: remembered and off the disk
            // cache, as the pipeline treats an undecodable download of its own.
            if case .decodingFailed(_, let codec) = error, given == nil, original?.source == .network {
                pipeline.rejectDownloadedOriginal(
                    for: Self.sourceRequest(ImageRequest(url: source), cookie: key.cookie, traceFields: traceFields),
                    undecodableBecause: codec)
            }
            return .failure(Self.proxyError(for: error))
        }
        let rendered = ContinuousClock.now
        let image = response.image
        let encoders = configuration.encoders
        // One scan of the alpha channel serves the negotiation and the flattening a JPEG needs.
        let isOpaque = image.image.isKnownOpaque || !image.image.hasTransparency
        let animatedFormat = image.isAnimated ? key.animation?.format : nil
        let format =
            animatedFormat
            ?? FormatNegotiation.format(
                for: key.format, source: image.format, isOpaque: isOpaque, encoders: encoders,
                preferred: outputSettings.preferred)
        let frames = animatedFormat == nil ? nil : image
        let options = key.options
        let settings = outputSettings
        // Ahead of decodes and resizes waiting on the same queue (they run at the request's `.normal`).
        let (encoded, encodeStarted, encodeEnded) = await cpuQueue.value(priority: .high) {
            let started = ContinuousClock.now
            let result = Result<Data, any Error> {
                try Self.encode(
                    image.image, frames: frames, as: format, isOpaque: isOpaque, options: options,
                    settings: settings, encoders: encoders, colorProfile: image.colorProfile,
                    metadata: Self.outputMetadata(of: image.metadata, options: options, size: image.image.size))
            }
            return (result, started, ContinuousClock.now)
        }
        guard case .success(let data) = encoded else {
            if case .failure(let error) = encoded { return .failure(.internalFailure("encoding \(format): \(error)")) }
            return .failure(.internalFailure("encoding \(format)"))
        }
        let (rendition, stored) = storeOutput(
            data, format: format, for: key, original: original, sizes: (image.originalSize, image.image.size))
        var timings = response.metrics
        if let original {  // the bytes came before the pipeline: their load is the render's
            timings.load = original.metrics.load
            timings.diskRead = original.metrics.diskRead
        }
        let stages = RenderStages(
            timings: timings, queued: started - queued, pipeline: rendered - started,
            encodeWait: encodeStarted - rendered, encode: encodeEnded - encodeStarted, store: stored)
        let source = response.source == .memory ? .memory : original?.source ?? response.source
        return .success(
            RenderedOutput(
                rendition: rendition, tier: Self.tier(rendering: source), stages: stages,
                colorWarning: image.colorWarning))
    }

    /// `data`, the output for `key`, as a rendition with the facts of `original` (the source's bytes, when the
    /// render fetched them first) that the configuration passes on and, with debug headers, the source's and the
    /// result's `sizes` (kept only when sent: other outputs' entries stay as they were); stored in the output
    /// cache. Returns it with the time the storing took.
    func storeOutput(
        _ data: Data, format: ImageFormat, for key: OutputKey, original: ImageDataResponse?,
        sizes: (source: PixelSize, result: PixelSize)
    ) -> (rendition: Rendition, stored: Duration) {
        var rendition = recordingSource(original, in: Rendition(data: data, format: format, key: key))
        if configuration.sendsDebugHeaders {
            rendition.facts.sourceSize = sizes.source
            rendition.facts.resultSize = sizes.result
        }
        let storing = ContinuousClock.now
        configuration.outputCache.store(rendition, for: key)
        return (rendition, .now - storing)
    }

    /// The tier a render from an original that came from `source` is counted under.
    static func tier(rendering source: ImageResponse.Source) -> ServerMetrics.CacheTier {
        switch source {
        case .memory: .pipelineMemory
        case .disk: .pipelineDisk
        case .sharedCache: .pipelineShared
        case .network, .custom: .origin
        }
    }

    /// The pipeline request for `options`, in imgproxy's order whatever the URL's: trim, rotate, flip, crop, resize (with
    /// gravity and the result limit), blur, sharpen, pixelate, extend / extend to the aspect ratio / pad (then the
    /// result limit, when there is a canvas), background, watermark.
    ///
    /// The resize's decode target (``ProxyResize/decodeTarget``: `fit` fits its box, `fill` and `force` cover it)
    /// has the decoder produce the smallest image the resize needs (JPEG DCT scaling); the pipeline takes it from
    /// the first processor. With a rotation or flip in front, a `fit` box is given as the request's target size,
    /// turned when the rotation swaps the sides (a rotated `fill` or `force` decodes at full size: the request's
    /// target size only fits). A trim or a crop needs the source's own pixels, so it decodes at full size.
    /// Without `auto_rotate` the request decodes with `decoding` but the EXIF orientation left unapplied; with
    /// `enforce_thumbnail`, from the source's embedded thumbnail whatever the size; with `max_src_resolution`,
    /// within the smaller pixel limit; with `strip_color_profile:0`, its pixels left in the source's colour
    /// profile (``ColorPolicy/keep``). An animation of `animationFrames` frames is held, with `sumsFramePixels`, to
    /// all its frames' pixels together within the pixel limit, and each frame's to `framePixelLimit`. With
    /// `original`, the source's bytes already fetched, the request decodes them under the source URL's cache key.
    static func imageRequest(
        for options: ProcessingOptions, source: URL, original: Data? = nil,
        decoding: DecodingOptions = DecodingOptions(),
        watermark: WatermarkImage? = nil, animationFrames: Int = 1, framePixelLimit: Int? = nil,
        sumsFramePixels: Bool = true
    ) -> ImageRequest {
        var processors: [any ImageProcessing] = []
        if let trim = options.trim { processors.append(trim) }
        // Rotated and flipped before the crop, so that the crop's size and gravity are the output's (imgproxy
        // crops first with the gravity turned to match, which gives the same pixels).
        if options.rotation != 0 { processors.append(ImageProcessors.Rotate(degrees: options.rotation)) }
        if options.flipsHorizontally { processors.append(ImageProcessors.Flip(.horizontal)) }
        if options.flipsVertically { processors.append(ImageProcessors.Flip(.vertical)) }
        let crop = ProxyCrop(options)
        if let crop { processors.append(crop) }
        let layout = ProxyLayout(options, watermark: watermark)
        if let layout { processors.append(layout) }
        var targetSize: PixelSize?
        let turns = options.rotation != 0 || options.flipsHorizontally || options.flipsVertically
        // (A target the decoders may not reach their own way, in linear light or without shrink-on-load, is left to
        // the pipeline, which gives it to the formats it applies to; after a turn there is none: full size.)
        if crop == nil, options.trim == nil, turns, let target = layout?.resize?.decodeTarget, target.mode == .fit,
            target.shrinking == .any
        {
            let swaps = options.rotation % 180 != 0
            targetSize = swaps ? PixelSize(width: target.size.height, height: target.size.width) : target.size
        }
        let loaded: ImageRequest.Source =
            if let original { .data(id: ImageRequest(url: source).sourceKey, original) } else { .url(source) }
        let animates = animationFrames > 1
        var request = ImageRequest(
            source: loaded, processors: processors, targetSize: targetSize,
            options: animates ? [] : [.decodesFirstFrameOnly])
        let pixelLimit = options.security.maxSourcePixels
        let keepsProfile = options.keepsColorProfile == true
        if !options.autoRotates || animates || options.enforcesThumbnail == true || pixelLimit != nil || keepsProfile {
            var custom = decoding
            if keepsProfile { custom.colorPolicy = .keep }
            if let pixelLimit { custom.pixelLimit = min(custom.pixelLimit, pixelLimit) }
            if !options.autoRotates { custom.appliesOrientation = false }
            if options.enforcesThumbnail == true { custom.embeddedThumbnails = .always }
            if animates {
                custom.frameLimit = animationFrames
                if sumsFramePixels {
                    // imgproxy's rule without a frame limit: all frames' canvas pixels together within the pixel limit.
                    custom.animationWorkLimit = min(custom.animationWorkLimit, custom.pixelLimit)
                    let (bytes, overflows) = custom.pixelLimit.multipliedReportingOverflow(by: 4)
                    custom.animationByteLimit = min(custom.animationByteLimit, overflows ? Int.max : bytes)
                }
                // With one (imgproxy's IMGPROXY_MAX_ANIMATION_FRAME_RESOLUTION), each frame's canvas within it.
                if let framePixelLimit { custom.pixelLimit = min(custom.pixelLimit, framePixelLimit) }
            }
            request.decodingOptions = custom
        }
        return request
    }

    /// Whether every frame of an animation gets the same cut under `options`: not when a trim or a smart crop,
    /// which look at the pixels, would cut each frame its own way.
    static func keepsFrames(_ options: ProcessingOptions) -> Bool {
        options.trim == nil && options.gravity != .smart && options.crop?.placement?.gravity != .smart
    }

    /// Whether `key`'s URL holds its source to tighter decoding limits than the server's (`msr`, or `maf` or `mafr`
    /// below the server's). The pipeline's memory cache holds images without the limits they were decoded under
    /// (the limits decide only whether an image decodes), so such a request decodes again rather than take an
    /// image a looser request let through.
    func hasOwnDecodingLimits(_ key: OutputKey) -> Bool {
        if let pixels = key.options.security.maxSourcePixels, pixels < configuration.pixelLimit { return true }
        guard let animation = key.animation else { return false }
        return animation.frames < configuration.maxAnimationFrames
            || animation.framePixels != configuration.framePixelLimit
    }

    /// Whether a decode of an animation failed only because its canvas is over `animation`'s frame limit (a frame
    /// over it is sent as the still first frame, held to the server's pixel limit).
    static func isFramePixelLimit(_ error: CodecError, _ animation: OutputKey.Animation?) -> Bool {
        guard case .tooManyPixels(let width, let height, _) = error, let limit = animation?.framePixels else {
            return false
        }
        let (pixels, overflows) = width.multipliedReportingOverflow(by: height)
        return overflows || pixels > limit
    }

    /// Whether a decode failed only because an animation is over the frame, byte or work limits.
    static func isAnimationLimit(_ error: CodecError) -> Bool {
        switch error {
        case .tooManyFrames, .animationTooLarge, .animationTooMuchWork: true
        default: false
        }
    }

    /// `image` encoded as `format` for `options`: at the quality `settings` resolve (the URL's, else its quality
    /// for the format, else the server's for the format, else the server's default); flattened onto the
    /// background (white when none is given) when it is not `isOpaque` and the format has no alpha; and, under
    /// `max_bytes`, encoded again at lower qualities (each a quarter, half or three quarters of the
    /// last, by how far over it was, as imgproxy does) until it fits or the quality reaches 10. With `frames`, an
    /// animation whose first frame is `image`, every frame is encoded (in a format whose encoder keeps them).
    /// Pixels in `colorProfile`'s space (kept by `strip_color_profile:0`) are written with it in the formats of
    /// ``formatsCarryingProfiles``, and converted to sRGB for the others.
    static func encode(
        _ image: PixelBuffer, frames: ImageContainer? = nil, as format: ImageFormat, isOpaque: Bool,
        options: ProcessingOptions, settings: OutputSettings, encoders: ImageEncoderRegistry,
        colorProfile: ColorProfile? = nil, metadata: ImageMetadata? = nil
    ) throws -> Data {
        var image = image
        var frames = frames
        var profile = colorProfile
        if let icc = colorProfile?.data, !formatsCarryingProfiles.contains(format) {
            image = ColorManagement.convertToSRGB(buffer: image, iccProfile: icc).buffer
            frames = frames?.mapFrames { ColorManagement.convertToSRGB(buffer: $0, iccProfile: icc).buffer }
            profile = nil
        }
        if format == .jpeg, !isOpaque {
            image = try ImageProcessors.Background(color: options.background ?? RGBA(r: 255, g: 255, b: 255))
                .process(image)
        }
        // ICO holds at most 256 pixels a side: a larger result is fitted into that, as imgproxy's fixIcoSize does.
        let icon = ICOEncoder.maximumSide
        if format == .ico, image.width > icon || image.height > icon {
            image = try ImageProcessors.Resize(size: PixelSize(width: icon, height: icon), mode: .aspectFit).process(
                image)
        }
        var quality = settings.quality(for: format, options: options)
        let degrades = options.maxBytes > 0 && [.jpeg, .webp, .avif, .jpegXL, .heic].contains(format)
        while true {
            let encoding = EncodingOptions(quality: Double(quality) / 100, colorProfile: profile, metadata: metadata)
            let data =
                try frames.map { try encoders.encode($0, as: format, options: encoding) }
                ?? encoders.encode(image, as: format, options: encoding)
            guard degrades, data.count > options.maxBytes, quality > 10 else {
                return data
            }
            let over = Double(data.count) / Double(options.maxBytes)
            let factor = over > 3 ? 0.25 : over > 1.5 ? 0.5 : 0.75
            quality = max(10, Int(Double(quality) * factor))
        }
    }

    /// The metadata a result of `source`'s, `size` pixels, carries under `options`: all of it with
    /// `strip_metadata:0` (the EXIF orientation set upright when the image was turned, the EXIF image size set to
    /// the result's, the EXIF thumbnail of the source removed), else only the copyright unless `keep_copyright:0`.
    static func outputMetadata(of source: ImageMetadata?, options: ProcessingOptions, size: PixelSize) -> ImageMetadata?
    {
        guard let source else { return nil }
        if options.keepsMetadata == true {
            return (options.autoRotates ? source.uprightened : source).sized(size).withoutThumbnail
        }
        return options.keepsCopyright == false ? nil : source.copyrightOnly
    }

    /// The output formats whose encoders write ``EncodingOptions/colorProfile`` (GIF, BMP and ICO cannot).
    static let formatsCarryingProfiles: Set<ImageFormat> = [.jpeg, .png, .webp, .avif, .jpegXL, .heic, .tiff]

    /// The status a pipeline failure gets: whose fault it is.
    static func proxyError(for error: ImagePipeline.Error) -> ProxyError {
        switch error {
        case .dataLoadingFailed(_, let underlying): proxyError(for: underlying)
        case .dataSourceFailed(_, let reason): .upstreamFailed(reason)
        case .decodingFailed(_, let underlying): proxyError(for: underlying)
        case .processingFailed(let identifier, let reason): .internalFailure("\(identifier): \(reason)")
        case .notCached: .internalFailure("the image is in no cache")
        case .cancelled: .upstreamFailed("the load was cancelled")
        // The server's pipeline is shutting down: a retry reaches another instance or this one restarted.
        case .invalidated: .overloaded(retryAfterSeconds: 1)
        case .invalidURL: .invalidSource("the source is not a URL")
        case .failedRecently(_, _, let reason):
            switch reason {
            case .http(let code): proxyError(forOriginStatus: code)
            case .decode: .unsupportedSource("the source could not be decoded")
            case .rejected: .upstreamFailed("the origin's response was refused")
            case .other: .upstreamFailed("the load failed")
            }
        }
    }

    /// The status an origin's failing HTTP status gets, as imgproxy's: a 404 is ``ProxyError/notFound(_:)``; any
    /// other 4xx is passed on (``ProxyError/originRefused(status:)``) except 407, 408 and 416, which are about this
    /// server's own request (its proxy, its pace, its range) and not the image; a 5xx, or a 3xx the loader did not
    /// follow, is a 502.
    static func proxyError(forOriginStatus code: Int) -> ProxyError {
        switch code {
        case 404: .notFound("the origin answered HTTP 404")
        case 407, 408, 416: .upstreamFailed("the origin answered HTTP \(code)")
        case 400..<500: .originRefused(status: code)
        default: .upstreamFailed("the origin answered HTTP \(code)")
        }
    }

    /// The status a loader failure gets (the message never repeats the URL).
    static func proxyError(for error: DataLoadingError) -> ProxyError {
        switch error {
        case .cancelled: .upstreamFailed("the load was cancelled")
        case .unsupportedScheme: .invalidSource("only http and https sources are loaded")
        case .statusCode(let code, _): proxyError(forOriginStatus: code)
        case .timedOut: .upstreamTimedOut
        case .connectionFailed: .upstreamFailed("the connection to the origin failed")
        case .truncated(_, let expected, let received):
            .upstreamFailed("the origin's body ended after \(received) of \(expected) bytes")
        case .bodyTooLarge(_, let limit): .sourceTooLarge(limit: limit)
        case .unacceptableContentType(let type, _): .unsupportedSource("the origin sent content type '\(type)'")
        case .tooManyRedirects(_, let limit): .upstreamFailed("the origin redirected more than \(limit) times")
        case .unreadable: .upstreamFailed("the source could not be read")
        case .requestModifierFailed(_, let reason): .originRequestFailed(reason: reason)
        case .addressRefused(let host, _): .sourceNotAllowed(host: host)
        case .tlsRefused(_, let reason): .upstreamFailed("the origin's TLS connection was refused: \(reason)")
        // The source's own host was checked when its URL was parsed (a 400): this one is a redirect's target.
        case .invalidURL(_, let reason):
            .upstreamFailed("the origin redirected to a URL that cannot be requested: \(reason)")
        }
    }

    /// The status a decoder failure gets.
    static func proxyError(for error: CodecError) -> ProxyError {
        switch error {
        case .unsupportedFormat(let format): .unsupportedSource("no decoder for format '\(format)'")
        case .empty: .unsupportedSource("the source is empty")
        case .corrupt(let format, let reason): .undecodableSource(format: format, reason: reason)
        case .truncated(let format): .unsupportedSource("the \(format) source ends before the image is complete")
        case .tooManyPixels(let width, let height, let limit):
            .imageTooLarge("\(width)x\(height) pixels is over the limit of \(limit)")
        case .tooManyFrames(let limit): .imageTooLarge("more than \(limit) frames")
        case .animationTooLarge, .animationTooMuchWork: .imageTooLarge("the animation is over the limits")
        case .renderingTimedOut(let format, let limit):
            .imageTooLarge(
                format == .svg
                    ? "drawing the svg source took longer than \(limit.readableText)"
                    : "decoding or encoding the \(format) image took longer than \(limit.readableText)")
        case .encodingFailed(let format, let reason): .internalFailure("encoding \(format): \(reason)")
        }
    }
}
