import Foundation
import Imago

extension ImageProxy {
    /// What a JPEG → WebP render in YCbCr needs, from the URL alone: the resize, the decoding options and the WebP
    /// encoder.
    struct YCbCrRender {
        var resize: ProxyResize
        var decoding: DecodingOptions
        var encoder: WebPEncoder
    }

    /// The YCbCr render `key` can take (``Configuration/encodesWebPFromYCbCr``), from its options alone, or `nil`:
    /// only a `fit` resize (no trim, turn, crop, blur, canvas, background or watermark; not in linear light,
    /// shrink-on-load allowed), no `max_bytes`, no decoding options of the URL's own (`auto_rotate:0`,
    /// `max_src_resolution`, `enforce_thumbnail`, `strip_color_profile:0`), the pipeline's own ``JPEGDecoder``
    /// and a ``WebPEncoder`` among the encoders. Whether the source is a JPEG that path takes, and whether the
    /// output is WebP, is known only from its bytes.
    func yCbCrRender(for key: OutputKey, request: ImageRequest) -> YCbCrRender? {
        guard configuration.encodesWebPFromYCbCr, key.options.maxBytes == 0, request.targetSize == nil,
            request.decodingOptions == nil,
            request.processors.count == 1, let layout = request.processors.first as? ProxyLayout,
            let resize = layout.resizeAlone, let target = resize.decodeTarget, target.mode == .fit,
            target.shrinking == .any, !resize.inLinearLight,
            pipeline.configuration.decoders.decoder(for: .jpeg) is JPEGDecoder,
            let encoder = configuration.encoders.encoder(for: .webp) as? WebPEncoder
        else { return nil }
        var decoding = pipeline.configuration.decodingOptions
        decoding.targetSize = target.size
        decoding.targetMode = .fit
        return YCbCrRender(resize: resize, decoding: decoding, encoder: encoder)
    }

    /// `original` rendered as `render` says without a trip through RGB (``JPEGDecoder/decodeYCbCr(_:options:)``,
    /// then ``WebPEncoder``'s YCbCr input), when the source is a JPEG that path takes and the output format for
    /// `key` is WebP; `nil` when it is not (the caller renders through the pipeline, which decodes `original`).
    /// The decode and the encode run as one job on the CPU queue.
    func renderYCbCr(
        _ key: OutputKey, original: ImageDataResponse, render: YCbCrRender, queued: Duration
    ) async -> RenderedOutput? {
        guard pipeline.configuration.decoders.format(of: original.data) == .jpeg,
            FormatNegotiation.format(
                for: key.format, source: .jpeg, isOpaque: true, encoders: configuration.encoders,
                preferred: outputSettings.preferred) == .webp
        else { return nil }
        let started = ContinuousClock.now
        let settings = outputSettings
        let options = key.options
        typealias Made = (data: Data, sizes: (source: PixelSize, result: PixelSize), decoded: ContinuousClock.Instant)
        let (made, jobStarted, ended) = await withCheckedContinuation { continuation in
            cpuQueue.enqueue(priority: .normal) {
                let jobStarted = ContinuousClock.now
                // A file this path fails on is decoded again by the pipeline, which reports the error its own way
                // (and remembers the source as undecodable).
                let made: Made? = try? {
                    guard let decoded = try JPEGDecoder().decodeYCbCr(original.data, options: render.decoding)
                    else { return nil }
                    let plan = render.resize.plan(for: decoded.image.size)
                    guard plan.crop == nil else { return nil }
                    let image = try decoded.image.resampled(to: plan.scaled)
                    let decodedAt = ContinuousClock.now
                    let encoding = EncodingOptions(
                        quality: Double(settings.quality(for: .webp, options: options)) / 100,
                        metadata: Self.outputMetadata(of: decoded.metadata, options: options, size: plan.scaled))
                    let data = try render.encoder.encode(image, options: encoding)
                    return (data, (decoded.originalSize, plan.scaled), decodedAt)
                }()
                continuation.resume(returning: (made, jobStarted, ContinuousClock.now))
            }
        }
        guard let output = made else { return nil }
        var rendition = recordingSource(original, in: Rendition(data: output.data, format: .webp, key: key))
        if configuration.sendsDebugHeaders {
            rendition.facts.sourceSize = output.sizes.source
            rendition.facts.resultSize = output.sizes.result
        }
        let storing = ContinuousClock.now
        configuration.outputCache.store(rendition, for: key)
        let stages = RenderStages(
            queue: AccessLogRecord.milliseconds(queued),
            fetch: original.metrics.load.map(AccessLogRecord.milliseconds),
            disk: original.metrics.diskRead.map(AccessLogRecord.milliseconds),
            decode: AccessLogRecord.milliseconds(output.decoded - jobStarted),
            pipelineWait: AccessLogRecord.milliseconds(jobStarted - started), encodeWait: 0,
            encode: AccessLogRecord.milliseconds(ended - output.decoded),
            store: AccessLogRecord.milliseconds(.now - storing))
        return RenderedOutput(rendition: rendition, tier: Self.tier(rendering: original.source), stages: stages)
    }
}
