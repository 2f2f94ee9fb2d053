import Foundation

/// Produces the frames of an animation on request instead of holding them all: an ``ImageContainer`` whose
/// decoded frames would exceed ``DecodingOptions/animationMemoryBudget`` carries one as
/// ``ImageContainer/frameSource`` (its ``ImageContainer/frames`` then hold only frame 0, the still image).
///
/// Implementations keep the encoded data and a decoder, decode frames in order into a small bounded buffer
/// (ahead of the play position), and restart from the nearest key frame or the start when asked for a frame
/// before the ones they hold. They are thread-safe; frames come back fully composited, exactly as an up-front
/// decode of the same file would give them.
///
/// ```swift
/// for index in 0..<container.frameCount {
///     let frame = try container.frame(at: index)   // decoded now, or taken from the buffer
///     show(frame.buffer, for: frame.duration)
/// }
/// ```
public protocol AnimationFrameSource: Sendable {
    /// How many frames the animation has (at least 1).
    var frameCount: Int { get }
    /// Each frame's display duration, `frameCount` of them.
    var durations: [Duration] { get }
    /// Bytes the source holds right now: encoded data, decoder canvases and buffered frames (what a memory cache
    /// should charge for it).
    var retainedByteCount: Int { get }
    /// The composited frame at `index` (0 ..< ``frameCount``).
    ///
    /// - Throws: ``CodecError`` when the frame cannot be decoded (e.g. the data breaks off before it).
    func frame(at index: Int) throws -> ImageFrame
}

/// A frame source with a pixel transform applied to every frame as it is produced (processors, colour
/// conversion, orientation), so that an on-demand container can be processed without decoding its frames.
struct TransformedFrameSource: AnimationFrameSource {
    let base: any AnimationFrameSource
    let transform: @Sendable (PixelBuffer) throws -> PixelBuffer

    var frameCount: Int { base.frameCount }
    var durations: [Duration] { base.durations }
    var retainedByteCount: Int { base.retainedByteCount }

    func frame(at index: Int) throws -> ImageFrame {
        let frame = try base.frame(at: index)
        return ImageFrame(buffer: try transform(frame.buffer), duration: frame.duration)
    }
}

extension ImageContainer {
    /// The number of frames: the frame source's when the frames are produced on demand, else `frames.count`.
    public var frameCount: Int { frameSource?.frameCount ?? frames.count }

    /// Every frame's display duration, ``frameCount`` of them, without decoding any frame.
    public var frameDurations: [Duration] { frameSource?.durations ?? frames.map(\.duration) }

    /// The frame at `index` (0 ..< ``frameCount``): from ``frames``, or produced by ``frameSource``.
    ///
    /// - Throws: the frame source's ``CodecError``; never for frames held in ``frames``.
    public func frame(at index: Int) throws -> ImageFrame {
        if let frameSource { return try frameSource.frame(at: index) }
        return frames[index]
    }

    /// ``mapFrames(_:)`` for transforms that may run later: applied now to ``frames``, and to every frame the
    /// ``frameSource`` produces from then on (processors run lazily on on-demand animations).
    public func mapFramesLazily(
        _ transform: @escaping @Sendable (PixelBuffer) throws -> PixelBuffer
    ) throws -> ImageContainer {
        var copy = try mapFrames(transform)
        if let frameSource { copy.frameSource = TransformedFrameSource(base: frameSource, transform: transform) }
        return copy
    }
}
