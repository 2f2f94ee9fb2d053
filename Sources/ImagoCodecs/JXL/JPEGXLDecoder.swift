import CJXL
import Foundation
import ImagoCore

/// Decodes JPEG XL (lossless and lossy, alpha, animation, 8 to 16 bits) with libjxl.
///
/// - The whole input is given to libjxl at once; layers, blend modes and patches are composited by libjxl
///   (coalescing, its default), so every frame is a full canvas. Premultiplied-alpha files come out straight.
/// - The image size is read from the basic info and checked against ``DecodingOptions/pixelLimit`` before any
///   output buffer is allocated; animation frames are counted against ``DecodingOptions/frameLimit``,
///   ``DecodingOptions/animationByteLimit`` and ``DecodingOptions/animationWorkLimit`` as their headers arrive,
///   before each frame's pixels are allocated.
/// - Durations come from each frame header in ticks of the animation's tick rate; ``ImageContainer/loopCount`` is
///   the header's `num_loops` (0 = forever).
/// - The codestream's orientation is applied by libjxl when ``DecodingOptions/appliesOrientation`` (default);
///   otherwise the stored pixels come back with the orientation in ``ImageContainer/orientation``.
/// - Samples are delivered as 8-bit RGBA; ``ImageContainer/bitDepth`` is the file's `bits_per_sample`. Lossy (XYB)
///   images are rendered as sRGB by libjxl; losslessly stored ones keep their own colour space (the internal
///   `decodeWithColour(_:options:)` returns its ICC profile and code points for a colour stage).
/// - An animation whose frames would exceed ``DecodingOptions/animationMemoryBudget`` is decoded on demand: the
///   container keeps the file and a libjxl decoder and produces frames through ``ImageContainer/frameSource``
///   (going back rewinds libjxl and skips to the frame), on the calling thread only, since a thread pool would live
///   as long as the container.
/// - libjxl cannot scale while decoding: with ``DecodingOptions/targetSize`` the full-size frame is decoded and
///   then downsampled.
/// - With ``DecodingOptions/readsMetadata``, the `Exif` and `xml ` boxes of a container file fill
///   ``ImageContainer/metadata`` (a second, box-only pass of libjxl; Brotli-compressed boxes too).
/// - Truncated data throws ``CodecError/truncated(format:)``; with ``DecodingOptions/allowsPartialData`` the
///   complete frames of an animation, or what libjxl can render of a still, come back as a preview.
///
/// Thread-safe: the decoder has no state; each call uses its own libjxl decoder and thread pool.
///
/// ```swift
/// let container = try JPEGXLDecoder().decode(data, options: DecodingOptions())
/// ```
public struct JPEGXLDecoder: ImageDecoding {
    /// The most worker threads one decode uses; libjxl suggests fewer for small images. Default: one per CPU
    /// core (at most 8). 0 or 1 decodes on the calling thread only.
    public var maximumThreads: Int

    /// A JPEG XL decoder using up to `maximumThreads` threads per decode (default: one per core of ``ProcessorQuota/cores``, at most 8).
    public init(maximumThreads: Int = min(8, ProcessorQuota.cores)) {
        self.maximumThreads = maximumThreads
    }

    /// `[.jpegXL]`.
    public var formats: Set<ImageFormat> { [.jpegXL] }

    /// Decodes `data` (only the first frame of an animation with ``DecodingOptions/decodesFirstFrameOnly``).
    ///
    /// - Throws: ``CodecError``: `.empty`, `.corrupt`, `.truncated`, `.tooManyPixels`, `.tooManyFrames`,
    ///   `.animationTooLarge`, `.animationTooMuchWork`.
    public func decode(_ data: Data, options: DecodingOptions) throws -> ImageContainer {
        var container = try ColorManagement.applying(decodeWithColour(data, options: options), options: options)
        if options.readsMetadata { container.metadata = JPEGXLMetadata.read(data) }
        return container
    }

    /// Decodes `data` and also returns what libjxl said about the colour of the samples (for colour management).
    func decodeWithColour(
        _ data: Data, options: DecodingOptions
    ) throws -> (
        container: ImageContainer, colour: EmbeddedColour
    ) {
        guard !data.isEmpty else { throw CodecError.empty }
        return try data.withUnsafeBytes { raw in
            guard let base = raw.baseAddress?.assumingMemoryBound(to: UInt8.self) else { throw CodecError.empty }
            switch JxlSignatureCheck(base, raw.count) {
            case JXL_SIG_CODESTREAM, JXL_SIG_CONTAINER: break
            case JXL_SIG_NOT_ENOUGH_BYTES: throw CodecError.truncated(format: .jpegXL)
            default: throw CodecError.corrupt(format: .jpegXL, reason: "no JPEG XL signature")
            }
            guard let decoder = JxlDecoderCreate(nil) else {
                throw CodecError.corrupt(format: .jpegXL, reason: "libjxl could not create a decoder")
            }
            defer { JxlDecoderDestroy(decoder) }
            // The pool starts with no threads: the count is set from the image size once the basic info is read.
            let runner = maximumThreads > 1 ? JxlResizableParallelRunnerCreate(nil) : nil
            defer { if let runner { JxlResizableParallelRunnerDestroy(runner) } }
            if let runner {
                try Self.check(JxlDecoderSetParallelRunner(decoder, JxlResizableParallelRunner, runner))
            }
            var session = JPEGXLDecodeSession(
                decoder: decoder, runner: runner, maximumThreads: maximumThreads, options: options)
            try session.start(input: base, count: raw.count)
            do {
                return try session.run()
            } catch is JPEGXLDecodeSession.OverBudget {
                // One thread: a thread pool would live as long as the container (e.g. in a memory cache).
                if let onDemand = try JPEGXLFrameDecoder.container(for: raw, maximumThreads: 1, options: options) {
                    return onDemand
                }
                // The scan failed (the file ends early or is corrupt): decode up front, reporting that.
                var options = options
                options.animationMemoryBudget = .max
                return try decodeWithColour(data, options: options)
            }
        }
    }

    /// Turns a libjxl status from a setup call into a ``CodecError`` (nothing for `JXL_DEC_SUCCESS`).
    static func check(_ status: JxlDecoderStatus) throws {
        guard status == JXL_DEC_SUCCESS else {
            throw CodecError.corrupt(format: .jpegXL, reason: "libjxl refused a setting (status \(status.rawValue))")
        }
    }
}
