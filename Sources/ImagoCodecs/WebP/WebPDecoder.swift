import CWebP
import Foundation
import ImagoCore

/// Decodes WebP (lossy, lossless, with alpha, and animated) with libwebp.
///
/// - Still images decode straight into the output buffer; with ``DecodingOptions/targetSize`` libwebp scales
///   while decoding (no full-size buffer is ever allocated).
/// - Animations decode with `WebPAnimDecoder`, which composites each frame onto the canvas (blending and
///   disposal, background as transparent); durations come from the frame timestamps; ``ImageContainer/loopCount``
///   is the file's loop count (0 = forever). The frame count and the bytes of all output frames are checked
///   against ``DecodingOptions/frameLimit`` and ``DecodingOptions/animationByteLimit`` from the animation header
///   before any frame is decoded. With a target size, composited frames are downsampled by area averaging.
/// - The canvas dimensions are checked against ``DecodingOptions/pixelLimit`` from the header before anything
///   is allocated. A lossy still without alpha over the limit is decoded all the same when the target size (or
///   ``DecodingOptions/decodedByteLimit``) brings it within the limit: libwebp scales it while decoding, row by row.
/// - Colour: the `ICCP` profile is applied as ``DecodingOptions/colorPolicy`` says (converted to sRGB by default).
/// - Stills without alpha are marked ``PixelBuffer/isKnownOpaque`` (libwebp writes alpha 255 for them).
/// - Truncated data throws ``CodecError/truncated(format:)``; partial previews are not produced
///   (``DecodingOptions/allowsPartialData`` is ignored).
///
/// Thread-safe: the decoder has no state; each call uses its own libwebp objects.
///
/// ```swift
/// let container = try WebPDecoder().decode(data, options: DecodingOptions(targetSize: PixelSize(width: 256, height: 256)))
/// ```
public struct WebPDecoder: ImageDecoding {
    /// A WebP decoder; it has no settings.
    public init() {}

    /// `[.webp]`.
    public var formats: Set<ImageFormat> { [.webp] }

    /// Decodes `data` (only the first frame of an animation with ``DecodingOptions/decodesFirstFrameOnly``).
    ///
    /// - Throws: ``CodecError``: `.empty`, `.corrupt`, `.truncated`, `.tooManyPixels`, `.tooManyFrames`,
    ///   `.animationTooLarge`.
    public func decode(_ data: Data, options: DecodingOptions) throws -> ImageContainer {
        guard !data.isEmpty else { throw CodecError.empty }
        return try data.withUnsafeBytes { raw in
            guard let base = raw.baseAddress?.assumingMemoryBound(to: UInt8.self) else { throw CodecError.empty }
            var features = WebPBitstreamFeatures()
            try Self.check(WebPGetFeatures(base, raw.count, &features))
            let width = Int(features.width)
            let height = Int(features.height)
            let full = PixelSize(width: width, height: height)
            if options.exceedsPixelLimit(full) && width > 0 && height > 0 {
                // Over the pixel limit only a lossy still without alpha may be decoded, scaled while decoding:
                // libwebp's lossy decoder works a row of macroblocks at a time into the scaled output, while the
                // lossless one (and lossy alpha, which is lossless-coded) holds a full-size plane.
                let fitted = options.deliveredSize(of: full, orientation: .up, bytesPerPixel: 4)
                guard features.has_animation == 0, features.format == 1, features.has_alpha == 0, fitted != full,
                    !options.exceedsPixelLimit(fitted)
                else { throw CodecError.tooManyPixels(width: width, height: height, limit: options.pixelLimit) }
            } else {
                try options.checkDimensions(width: width, height: height, format: .webp)
            }
            let colorSource =
                options.colorPolicy == .ignore ? nil : WebPChunks.iccProfile(in: UnsafeRawBufferPointer(raw))
            var container: ImageContainer
            if features.has_animation != 0 {
                container = try decodeAnimation(base, count: raw.count, options: options)
            } else {
                var image = try decodeStill(base, count: raw.count, width: width, height: height, options: options)
                // libwebp writes alpha 255 for a file without alpha; marking it spares later scans of the alpha
                // channel.
                if features.has_alpha == 0 { image = image.assumingOpaque() }
                container = ImageContainer(
                    frames: [ImageFrame(buffer: image)], format: .webp,
                    originalSize: PixelSize(width: width, height: height))
            }
            ColorManagement.apply(colorSource, to: &container, options: options)
            if options.readsMetadata { container.metadata = WebPChunks.metadata(in: UnsafeRawBufferPointer(raw)) }
            return container
        }
    }

    private func decodeStill(
        _ data: UnsafePointer<UInt8>, count: Int, width: Int, height: Int, options: DecodingOptions
    ) throws -> PixelBuffer {
        let size = options.deliveredSize(
            of: PixelSize(width: width, height: height), orientation: .up, bytesPerPixel: 4)
        var config = WebPDecoderConfig()
        guard WebPInitDecoderConfig(&config) != 0 else {
            throw CodecError.corrupt(format: .webp, reason: "libwebp version mismatch")
        }
        if size.width != width || size.height != height {
            // libwebp's rescaler shrinks while decoding, row by row: no full-size buffer.
            config.options.use_scaling = 1
            config.options.scaled_width = Int32(size.width)
            config.options.scaled_height = Int32(size.height)
        }
        return try PixelBuffer(width: size.width, height: size.height, format: .rgba8) { output in
            config.output.colorspace = MODE_RGBA
            config.output.is_external_memory = 1
            config.output.u.RGBA.rgba = output.baseAddress?.assumingMemoryBound(to: UInt8.self)
            config.output.u.RGBA.stride = Int32(size.width * 4)
            config.output.u.RGBA.size = output.count
            let status = WebPDecode(data, count, &config)
            WebPFreeDecBuffer(&config.output)  // frees nothing of ours (external memory); releases internal state
            try Self.check(status)
        }
    }

    /// Turns a libwebp status into a ``CodecError`` (nothing for `VP8_STATUS_OK`).
    static func check(_ status: VP8StatusCode) throws {
        switch status {
        case VP8_STATUS_OK: return
        case VP8_STATUS_NOT_ENOUGH_DATA: throw CodecError.truncated(format: .webp)
        case VP8_STATUS_OUT_OF_MEMORY: throw CodecError.corrupt(format: .webp, reason: "libwebp ran out of memory")
        case VP8_STATUS_UNSUPPORTED_FEATURE:
            throw CodecError.corrupt(format: .webp, reason: "the file uses a feature libwebp does not support")
        case VP8_STATUS_INVALID_PARAM: throw CodecError.corrupt(format: .webp, reason: "invalid parameter")
        default: throw CodecError.corrupt(format: .webp, reason: "bitstream error (status \(status.rawValue))")
        }
    }
}
