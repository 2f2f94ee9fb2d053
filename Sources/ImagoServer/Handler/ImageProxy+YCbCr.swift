import Foundation
import Imago

extension ImageProxy {
    /// What a render in YCbCr needs from the URL: the resize and the decoding options.
    struct YCbCrRender {
        var resize: ProxyResize
        var decoding: DecodingOptions
    }

    /// The YCbCr render `key` can take (``Configuration/rendersJPEGsInYCbCr``), from its options alone, or
    /// `nil`: only a resize (`fit`, or `fill` and the like cut around any gravity but `sm`; no trim, turn, crop,
    /// blur, canvas, background or watermark; not in linear light, shrink-on-load allowed), no `max_bytes`, no
    /// decoding options of the URL's own (`auto_rotate:0`, `max_src_resolution`, `enforce_thumbnail`,
    /// `strip_color_profile:0`), the pipeline's own ``JPEGDecoder``, and an ``Configuration/originalCache``: the
    /// path leaves no decoded image in the pipeline's memory cache, so another output of the same source reads the
    /// original from that cache rather than from the origin. Whether the source is a JPEG that path takes, and
    /// whether the output's encoder takes YCbCr, is known only from its bytes.
    func yCbCrRender(for key: OutputKey, request: ImageRequest) -> YCbCrRender? {
        guard configuration.rendersJPEGsInYCbCr, configuration.originalCache != nil, key.options.maxBytes == 0,
            request.targetSize == nil,
            request.decodingOptions == nil,
            request.processors.count == 1, let layout = request.processors.first as? ProxyLayout,
            let resize = layout.resizeAlone, let target = resize.decodeTarget, resize.placement.gravity != .smart,
            target.shrinking == .any, !resize.inLinearLight,
            pipeline.configuration.decoders.decoder(for: .jpeg) is JPEGDecoder
        else { return nil }
        var decoding = pipeline.configuration.decodingOptions
        decoding.targetSize = target.size
        decoding.targetMode = target.mode
        return YCbCrRender(resize: resize, decoding: decoding)
    }

    /// `original` rendered as `render` says without a trip through RGB (``JPEGDecoder/decodeYCbCr(_:options:)``,
    /// then the encoder's YCbCr input), when the source is a JPEG that path takes and the output format for `key`
    /// has an encoder that takes YCbCr (``YCbCrEncoding``: WebP, JPEG); `nil` when not (the caller renders
    /// through the pipeline, which decodes `original`). The decode and the encode run as one job on the CPU queue.
    func renderYCbCr(
        _ key: OutputKey, original: ImageDataResponse, render: YCbCrRender, queued: Duration
    ) async -> RenderedOutput? {
        guard original.format == .jpeg else { return nil }
        let format = FormatNegotiation.format(
            for: key.format, source: .jpeg, isOpaque: true, encoders: configuration.encoders,
            preferred: outputSettings.preferred)
        guard let encoder = configuration.encoders.encoder(for: format) as? any YCbCrEncoding else { return nil }
        let started = ContinuousClock.now
        let settings = outputSettings
        let options = key.options
        typealias Made = (
            data: Data, sizes: (source: PixelSize, result: PixelSize),
            decoded: ContinuousClock.Instant, processed: ContinuousClock.Instant
        )
        let (made, jobStarted, ended) = await cpuQueue.value(priority: .normal) {
            let jobStarted = ContinuousClock.now
            // A file this path fails on is decoded again by the pipeline, which reports the error its own way
            // (and remembers the source as undecodable).
            let made: Made? = try? {
                // fill's cut around its gravity, where ProxyResize makes it, planned once from the header for
                // the planes' size; at an odd offset, which would split chroma samples, the RGB path, before
                // anything is decoded.
                var planned: (plan: ProxyResize.Plan, origin: (x: Int, y: Int)?)?
                guard
                    let decoded = try JPEGDecoder().decodeYCbCr(
                        original.data, options: render.decoding,
                        accepts: { size in
                            let plan = render.resize.plan(for: size)
                            let origin = plan.crop.map {
                                render.resize.placement.origin(outer: plan.scaled, inner: $0, dpr: plan.dpr)
                            }
                            planned = (plan, origin)
                            return origin.map { YCbCrImage.cutsWholeChromaSamples(x: $0.x, y: $0.y) } ?? true
                        }),
                    let (plan, origin) = planned
                else { return nil }
                let decodedAt = ContinuousClock.now
                var image = try decoded.image.resampled(to: plan.scaled)
                if let crop = plan.crop, let origin {
                    guard let cropped = try image.cropped(x: origin.x, y: origin.y, size: crop) else { return nil }
                    image = cropped
                }
                let processedAt = ContinuousClock.now
                let encoding = EncodingOptions(
                    quality: Double(settings.quality(for: format, options: options)) / 100,
                    metadata: Self.outputMetadata(of: decoded.metadata, options: options, size: image.size))
                let data = try encoder.encode(image, options: encoding)
                return (data, (decoded.originalSize, image.size), decodedAt, processedAt)
            }()
            return (made, jobStarted, ContinuousClock.now)
        }
        guard let output = made else { return nil }
        let (rendition, stored) = storeOutput(
            output.data, format: format, for: key, original: original, sizes: output.sizes)
        let stages = RenderStages(
            queue: AccessLogRecord.milliseconds(queued),
            fetch: original.metrics.load.map(AccessLogRecord.milliseconds),
            disk: original.metrics.diskRead.map(AccessLogRecord.milliseconds),
            decode: AccessLogRecord.milliseconds(output.decoded - jobStarted),
            process: AccessLogRecord.milliseconds(output.processed - output.decoded),
            pipelineWait: AccessLogRecord.milliseconds(jobStarted - started), encodeWait: 0,
            encode: AccessLogRecord.milliseconds(ended - output.processed),
            store: AccessLogRecord.milliseconds(stored))
        return RenderedOutput(rendition: rendition, tier: Self.tier(rendering: original.source), stages: stages)
    }
}
