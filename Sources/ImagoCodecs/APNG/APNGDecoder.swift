import Foundation
import ImagoCore

/// Decodes animated PNG (APNG): Debian's libpng has no APNG patch, so the chunks are walked here (`acTL`, `fcTL`,
/// `fdAT`, sequence numbers checked), each frame is rebuilt as a standalone PNG and decoded by libpng's
/// simplified API (every colour type and bit depth, as ``PNGDecoder``), then composited on the canvas.
///
/// Behaviour (matching browsers and the APNG specification):
/// - Each frame is the full canvas after drawing that frame, with every `dispose_op` (none, background = clear to
///   transparent black, previous; previous on the first frame acts as background) and `blend_op` (source, over
///   in straight alpha). The canvas starts transparent black.
/// - A default image that is not part of the animation (`IDAT` before the first `fcTL`) is not a frame.
/// - ``ImageFrame/duration`` is `delay_num / delay_den` seconds (a zero denominator means hundredths; a zero
///   numerator is kept as zero). A single-frame animation keeps its duration.
/// - ``ImageContainer/loopCount`` is `num_plays` (0 = forever). ``ImageContainer/bitDepth`` is the file's
///   bits per sample (8 for palette files); pixels are delivered 8-bit, 16-bit samples rounded.
/// - An APNG whose animation data is broken (sequence numbers out of order, `fdAT` without `fcTL`, a frame
///   without data, bad ops, `num_frames` 0) decodes as its still default image, as browsers show it. `acTL`
///   lying about the frame count plays the frames present (never allocating for the declared count).
/// - A frame region outside the canvas is ``CodecError/corrupt(format:reason:)``. Data that ends early returns
///   the frames completed before the cut, or ``CodecError/truncated(format:)`` when none is; with
///   ``DecodingOptions/allowsPartialData`` such a result is marked ``ImageContainer/isPreview``.
/// - Limits before any pixel allocation: the canvas against ``DecodingOptions/pixelLimit``, the frames actually
///   present (never `num_frames`) against ``DecodingOptions/frameLimit``, their output bytes against
///   ``DecodingOptions/animationByteLimit`` and the compositing work against
///   ``DecodingOptions/animationWorkLimit``. ``DecodingOptions/decodesFirstFrameOnly`` decodes one frame.
/// - ``DecodingOptions/targetSize``: each composited canvas is area-averaged to the aspect-fit size.
/// - An animation whose frames would exceed ``DecodingOptions/animationMemoryBudget`` is decoded on demand: the
///   container keeps the file and produces frames through ``ImageContainer/frameSource``, restarting at the
///   nearest key frame (see `APNGFrameDecoder`) when asked for an earlier frame.
///
/// Thread-safe: the decoder has no state.
///
/// ```swift
/// let container = try APNGDecoder().decode(data, options: DecodingOptions())
/// print(container.frames.count, container.loopCount, container.frames.map(\.duration))
/// ```
public struct APNGDecoder: ImageDecoding {
    /// An APNG decoder; it has no settings.
    public init() {}

    /// `[.apng]`.
    public var formats: Set<ImageFormat> { [.apng] }

    /// Decodes every frame of `data` (or only the first with ``DecodingOptions/decodesFirstFrameOnly``).
    ///
    /// - Throws: ``CodecError``: `.empty`, `.truncated`, `.corrupt`, `.tooManyPixels`, `.tooManyFrames`,
    ///   `.animationTooLarge`, `.animationTooMuchWork`.
    public func decode(_ data: Data, options: DecodingOptions) throws -> ImageContainer {
        guard !data.isEmpty else { throw CodecError.empty }
        do {
            return try data.withUnsafeBytes { bytes in
                let structure = try APNGStructure(scanning: bytes, options: options)
                return try decode(structure, bytes: bytes, options: options)
            }
        } catch is APNGStructure.Fallback {
            var still = try PNGDecoder().decode(data, options: options)
            still.format = .apng
            return still
        }
    }

    private func decode(
        _ structure: APNGStructure, bytes: UnsafeRawBufferPointer, options: DecodingOptions
    ) throws -> ImageContainer {
        let canvasSize = structure.canvas
        let outputSize = TargetFitting.fittedSize(
            of: canvasSize, within: options.targetSize, orientation: .up, mode: options.targetMode)
        if let onDemand = try APNGFrameDecoder.container(
            for: structure, bytes: bytes, outputSize: outputSize, options: options)
        {
            return onDemand
        }
        let count = structure.frames.count
        let (total, overflow) = count.multipliedReportingOverflow(by: outputSize.pixelCount * 4)
        guard !overflow, total <= options.animationByteLimit else {
            throw CodecError.animationTooLarge(limit: options.animationByteLimit)
        }
        try options.checkAnimationWork(frames: count, canvas: canvasSize)

        let isInterlaced16Bit = structure.isInterlaced && structure.bitDepth == 16
        var canvas = try APNGCanvas(size: canvasSize)
        var frames: [ImageFrame] = []
        frames.reserveCapacity(count)
        var scratch: [UInt8] = []
        for frame in structure.frames {
            do {
                let stream = APNGFrameStream.make(frame, structure: structure, bytes: bytes)
                try APNGFrameStream.decode(
                    stream, into: &scratch, width: frame.control.width, height: frame.control.height,
                    isInterlaced16Bit: isInterlaced16Bit)
            } catch let error as CodecError {
                // A frame whose data does not decode ends the animation; earlier frames stand, as when the
                // data is cut short.
                if frames.isEmpty { throw error }
                break
            }
            canvas.draw(scratch, control: frame.control)
            let shown =
                outputSize == canvasSize ? canvas.pixels : try canvas.pixels.resampledWithVectorKernel(to: outputSize)
            frames.append(ImageFrame(buffer: shown, duration: frame.control.duration))
            canvas.dispose(frame.control)
        }
        return ImageContainer(
            frames: frames, format: .apng, loopCount: structure.playCount,
            isPreview: structure.isTruncated && options.allowsPartialData, originalSize: canvasSize,
            bitDepth: structure.sourceBitDepth)
    }
}
