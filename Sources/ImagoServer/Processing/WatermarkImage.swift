import Foundation
import Imago

/// The image `watermark:` draws (imgproxy's `IMGPROXY_WATERMARK_PATH`), decoded once, with the opacity every
/// URL's opacity multiplies (imgproxy's `IMGPROXY_WATERMARK_OPACITY`).
///
/// ```swift
/// var configuration = ImageProxy.Configuration()
/// configuration.watermark = try WatermarkImage(data: Data(contentsOf: logoURL), opacity: 0.8)
/// ```
public struct WatermarkImage: Sendable {
    /// The decoded watermark (its first frame), straight alpha.
    public let image: PixelBuffer
    /// Names the watermark in cache keys: a digest of its file, so that a new file never reuses old outputs.
    public let id: String
    /// The opacity every URL's opacity multiplies, 0…1. Default 1.
    public let opacity: Double

    /// The watermark in `data` (any format `decoders` read, at most `pixelLimit` pixels, default 16 megapixels)
    /// at `opacity` (default 1).
    ///
    /// - Throws: the decoder's ``CodecError``, or ``ProxyError/invalidOption(name:reason:)`` for an opacity outside
    ///   0…1.
    public init(
        data: Data, opacity: Double = 1, decoders: ImageDecoderRegistry = .makeDefault(), pixelLimit: Int = 16_000_000
    ) throws {
        guard opacity.isFinite, (0...1).contains(opacity) else {
            throw ProxyError.invalidOption(name: "watermark opacity", reason: "must be from 0 to 1")
        }
        var options = DecodingOptions(pixelLimit: pixelLimit, decodesFirstFrameOnly: true)
        options.colorPolicy = .convertToSRGB
        image = try decoders.decode(data, options: options).image
        id = String(data.withUnsafeBytes { SHA256.hash($0) }.hex.prefix(32))
        self.opacity = opacity
    }
}
