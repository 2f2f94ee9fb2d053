/// The smallest image a processor needs from the decoder: a size and whether the decoded image must fit within
/// it or cover it. The pipeline passes the first processor's target to the decoder when the request gives no
/// ``ImageRequest/targetSize``, so a large JPEG is decoded at a reduced DCT scale instead of at full size.
///
/// A processor declares one only when running it on the reduced image gives the same result, up to resampling,
/// as running it on the full image (see ``ImageProcessing/decodeTarget``).
///
/// ```swift
/// ImageProcessors.Resize(size: PixelSize(width: 256, height: 256)).decodeTarget  // 256x256, .fit
/// ```
public struct DecodeTarget: Sendable, Hashable, CustomStringConvertible {
    /// The target size in pixels.
    public var size: PixelSize
    /// Whether the decoded image fits within ``size`` or covers it.
    public var mode: DecodingOptions.TargetMode

    /// A target of `size` in `mode` (default ``DecodingOptions/TargetMode/fit``).
    public init(size: PixelSize, mode: DecodingOptions.TargetMode = .fit) {
        self.size = size
        self.mode = mode
    }

    /// `fit=WxH` or `cover=WxH` (part of the key of the decoded image).
    public var description: String {
        "\(mode == .fit ? "fit" : "cover")=\(size.width)x\(size.height)"
    }
}
