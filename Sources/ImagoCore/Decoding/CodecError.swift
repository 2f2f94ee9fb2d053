/// Why an image could not be decoded or encoded.
///
/// `Codable`, so that an error raised in a decoding child process reaches the parent as the same case
/// (`ImagoCodecs`'s `ChildProcessDecoder`).
public enum CodecError: Error, Sendable, Hashable, Codable, CustomStringConvertible {
    /// No registered decoder (or encoder) handles this format.
    case unsupportedFormat(ImageFormat)
    /// The data is empty.
    case empty
    /// The data is not a valid image of the format; `reason` is the library's or our own explanation.
    case corrupt(format: ImageFormat, reason: String)
    /// The data ended before the image was complete (and partial data was not allowed).
    case truncated(format: ImageFormat)
    /// The declared dimensions exceed the pixel limit (``DecodingOptions/pixelLimit``, or the decoder's own ceiling
    /// where that is lower, as for HEIF); nothing was allocated.
    case tooManyPixels(width: Int, height: Int, limit: Int)
    /// The animation has more frames than the frame limit allows.
    case tooManyFrames(limit: Int)
    /// The animation's frames together would exceed the animation byte limit.
    case animationTooLarge(limit: Int)
    /// Decoding the animation would composite more canvas pixels (frames × canvas size) than the animation work
    /// limit allows, even though its output would fit (a small `targetSize` over a huge canvas).
    case animationTooMuchWork(limit: Int)
    /// Drawing or decoding the image took longer than the decoder's time limit and was stopped: a document that is
    /// valid but too costly (an SVG filter, for one, under the child-process timeout of `ImagoCodecs`'s
    /// `SVGRendering`), or a child process of `ImagoCodecs`'s `ChildProcessDecoder` or `ChildProcessEncoder` that
    /// did not answer in time.
    case renderingTimedOut(format: ImageFormat, limit: Duration)
    /// The encoder failed.
    case encodingFailed(format: ImageFormat, reason: String)

    /// A sentence a person can act on.
    public var description: String {
        switch self {
        case .unsupportedFormat(let f):
            "no decoder is registered for format '\(f)'"
        case .empty: "the image data is empty"
        case .corrupt(let f, let reason): "corrupt \(f) data: \(reason)"
        case .truncated(let f): "truncated \(f) data: the file ends before the image is complete"
        case .tooManyPixels(let w, let h, let limit):
            "image of \(w)x\(h) pixels exceeds the limit of \(limit) pixels (DecodingOptions.pixelLimit, or the decoder's own ceiling when that is lower)"
        case .tooManyFrames(let limit): "animation has more than \(limit) frames (DecodingOptions.frameLimit)"
        case .animationTooLarge(let limit):
            "animation frames would take more than \(limit) bytes (DecodingOptions.animationByteLimit)"
        case .animationTooMuchWork(let limit):
            "animation would composite more than \(limit) canvas pixels, frames × canvas size (DecodingOptions.animationWorkLimit)"
        case .renderingTimedOut(let f, let limit):
            f == .svg
                ? "drawing the svg image took longer than \(limit.readableText) and was stopped"
                : "decoding or encoding the \(f) image took longer than \(limit.readableText) and was stopped"
        case .encodingFailed(let f, let reason): "could not encode \(f): \(reason)"
        }
    }
}
