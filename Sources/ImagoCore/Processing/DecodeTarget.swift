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
    /// How a raster decoder may reach the target. A vector image (SVG) is drawn at the target whatever this says:
    /// drawing it smaller averages nothing, and drawing it at its own size first would lose detail.
    public enum Shrinking: Sendable, Hashable {
        /// Any way the decoder has: a reduced decode (JPEG's DCT scaling, WebP's scaled decoding…), then
        /// the decoder's own resampling.
        case any
        /// Only the codec's own reduced decode (JPEG's DCT scaling), never resampling
        /// (``DecodingOptions/shrinksOnlyWhileDecoding``): for a processor that resamples its own way, as a
        /// resize in linear light. Other raster formats are decoded at full size.
        case reducedDecodeOnly
        /// Not at all: every raster format is decoded at full size (imgproxy's `IMGPROXY_DISABLE_SHRINK_ON_LOAD`),
        /// so the processor resamples every pixel of the source, at the cost of time and memory for large images.
        case never
    }

    /// The target size in pixels.
    public var size: PixelSize
    /// Whether the decoded image fits within ``size`` or covers it.
    public var mode: DecodingOptions.TargetMode
    /// How a raster decoder may reach the target. Default ``Shrinking-swift.enum/any``.
    public var shrinking: Shrinking

    /// Whether ``shrinking`` is ``Shrinking-swift.enum/reducedDecodeOnly``; setting `false` makes it
    /// ``Shrinking-swift.enum/any``.
    public var shrinksOnlyWhileDecoding: Bool {
        get { shrinking == .reducedDecodeOnly }
        set { shrinking = newValue ? .reducedDecodeOnly : .any }
    }

    /// A target of `size` in `mode` (default ``DecodingOptions/TargetMode/fit``), reached as `shrinking` says
    /// (default ``Shrinking-swift.enum/any``).
    public init(size: PixelSize, mode: DecodingOptions.TargetMode = .fit, shrinking: Shrinking = .any) {
        self.size = size
        self.mode = mode
        self.shrinking = shrinking
    }

    /// A target of `size` in `mode`, reached only by a reduced decode when `shrinksOnlyWhileDecoding`.
    public init(size: PixelSize, mode: DecodingOptions.TargetMode = .fit, shrinksOnlyWhileDecoding: Bool) {
        self.init(size: size, mode: mode, shrinking: shrinksOnlyWhileDecoding ? .reducedDecodeOnly : .any)
    }

    /// Whether a decoder of `format` is given this target: always for SVG, which is drawn at it; for rasters, as
    /// ``shrinking`` says (JPEG only for ``Shrinking-swift.enum/reducedDecodeOnly``).
    public func applies(to format: ImageFormat) -> Bool {
        switch shrinking {
        case _ where format == .svg: true
        case .any: true
        case .reducedDecodeOnly: format == .jpeg
        case .never: false
        }
    }

    /// `fit=WxH` or `cover=WxH`, then `+dct` when only a reduced decode may shrink, `+vector` when only vectors
    /// are drawn smaller (part of the key of the decoded image).
    public var description: String {
        let suffix =
            switch shrinking {
            case .any: ""
            case .reducedDecodeOnly: "+dct"
            case .never: "+vector"
            }
        return "\(mode == .fit ? "fit" : "cover")=\(size.width)x\(size.height)" + suffix
    }
}
