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
    /// Whether the decoder may reach the target only by its own reduced decode (JPEG's DCT scaling), never by
    /// resampling (``DecodingOptions/shrinksOnlyWhileDecoding``): for a processor that resamples its own way, as a
    /// resize in linear light. Other formats are then decoded at full size. Default `false`.
    public var shrinksOnlyWhileDecoding: Bool

    /// A target of `size` in `mode` (default ``DecodingOptions/TargetMode/fit``), reached by any decoder's
    /// shrinking unless `shrinksOnlyWhileDecoding` (default `false`).
    public init(size: PixelSize, mode: DecodingOptions.TargetMode = .fit, shrinksOnlyWhileDecoding: Bool = false) {
        self.size = size
        self.mode = mode
        self.shrinksOnlyWhileDecoding = shrinksOnlyWhileDecoding
    }

    /// `fit=WxH` or `cover=WxH`, then `+dct` when only a reduced decode may shrink (part of the key of the decoded
    /// image).
    public var description: String {
        "\(mode == .fit ? "fit" : "cover")=\(size.width)x\(size.height)" + (shrinksOnlyWhileDecoding ? "+dct" : "")
    }
}
