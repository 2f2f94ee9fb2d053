import Foundation
import ImagoCore

/// Encodes GIF, still and animated, with giflib.
///
/// - **Colours.** Each frame has its own colour map of at most 256 entries. A frame with that few colours keeps
///   them exactly (a GIF decoded and written again keeps its pixels); more are reduced by a median cut that
///   splits where the error is (see `GIFMedianCut`) and dithered (Floyd–Steinberg), as libvips and gifsicle do by
///   default (see `GIFQuantizer`). giflib writes the file.
/// - **Alpha.** Alpha below 128 is transparent, the rest opaque with its colour; GIF has nothing between.
/// - **Animation.** Every frame of the container, each a full canvas of the first frame's size, at its
///   duration rounded to hundredths of a second (browsers show delays under 2/100 s as 1/10 s), with
///   ``ImageContainer/loopCount`` in a NETSCAPE2.0 block (0 plays forever; a count of 1 writes no block, which
///   plays once, the way ``GIFDecoder`` reads it). Frames hold only the rectangle that changed, unchanged pixels
///   transparent (see `GIFFramePlanner`).
/// - **Options.** ``EncodingOptions/quality`` and ``EncodingOptions/isLossless`` do not apply; no colour
///   profile is written (GIF has no profile browsers read), so pixels should be in sRGB.
/// - **Limits.** Each side at most 65,535 pixels, GIF's own limit.
///
/// Thread-safe: every encode has its own giflib handle.
///
/// ```swift
/// let gif = try GIFEncoder().encode(container, options: EncodingOptions())
/// ```
public struct GIFEncoder: ImageEncoding {
    /// An encoder with the behaviour described on the type; it has no settings.
    public init() {}

    /// `.gif`.
    public var format: ImageFormat { .gif }

    /// `true`: animated containers keep every frame.
    public var encodesAnimation: Bool { true }

    /// Encodes `image` as a one-frame GIF.
    ///
    /// - Throws: ``CodecError/encodingFailed(format:reason:)``.
    public func encode(_ image: PixelBuffer, options: EncodingOptions) throws -> Data {
        try encode(ImageContainer(image: image, format: .gif), options: options)
    }

    /// Encodes every frame of `container`, with its durations and loop count when it is animated.
    ///
    /// - Throws: ``CodecError/encodingFailed(format:reason:)`` (a side over 65,535, frames of differing sizes,
    ///   giflib errors), or the error of an on-demand frame.
    public func encode(_ container: ImageContainer, options: EncodingOptions) throws -> Data {
        let size = container.image.size
        guard size.width <= 65_535, size.height <= 65_535 else {
            throw CodecError.encodingFailed(format: .gif, reason: "\(size) exceeds GIF's 65535 pixels a side")
        }
        let isAnimated = container.isAnimated
        let writer = try GIFWriter(
            size: size, loopCount: isAnimated && container.loopCount != 1 ? container.loopCount : nil)
        var planner = GIFFramePlanner(size: size, reservesTransparency: isAnimated, scratch: GIFScratch())
        // Frame by frame through frame(at:): an on-demand animation produces one frame at a time.
        for index in 0..<container.frameCount {
            let frame = try container.frame(at: index)
            guard frame.buffer.size == size else {
                throw CodecError.encodingFailed(format: .gif, reason: "the frames of an animation must all be \(size)")
            }
            let delay = isAnimated ? Self.hundredths(frame.duration) : 0
            if let complete = planner.add(frame.buffer.straightRGBA, delay: delay) {
                try writer.write(complete, isAnimated: isAnimated)
            }
        }
        if let last = planner.finish() { try writer.write(last, isAnimated: isAnimated) }
        return try writer.finish()
    }

    /// `duration` in hundredths of a second, rounded, within what GIF stores.
    static func hundredths(_ duration: Duration) -> Int {
        let value = (duration / .milliseconds(10)).rounded()
        return value.isFinite ? Int(min(65_535, max(0, value))) : 0
    }
}
