import Foundation
import ImagoCore

/// Encodes Windows icons (ICO) as imgproxy's `icosave` writes them: one image, stored as a PNG (Windows Vista's
/// form, which every current reader takes), written by ``PNGEncoder``.
///
/// - The directory entry gives the PNG's size (0 for 256) and bit count: 32 with transparency, else 24 (the PNG is
///   then RGB; `gray8` images are written as RGB too).
/// - ``EncodingOptions/colorProfile`` is embedded in the PNG; ``EncodingOptions/quality`` does not apply.
/// - Limits: at most 256 pixels a side, ICO's own limit; resize first (`imago serve` fits results into 256 × 256
///   for ICO outputs, as imgproxy does).
///
/// Thread-safe: the encoder has no state.
///
/// ```swift
/// let icon = try ICOEncoder().encode(image, options: EncodingOptions())   // image at most 256 × 256
/// ```
public struct ICOEncoder: ImageEncoding {
    /// An ICO encoder; it has no settings.
    public init() {}

    /// `.ico`.
    public var format: ImageFormat { .ico }

    /// ICO's largest side.
    public static let maximumSide = 256

    /// Encodes `image` as described on the type.
    ///
    /// - Throws: ``CodecError/encodingFailed(format:reason:)`` for a side over 256 pixels, or the PNG encoder's
    ///   error.
    public func encode(_ image: PixelBuffer, options: EncodingOptions) throws -> Data {
        guard image.width <= Self.maximumSide, image.height <= Self.maximumSide else {
            throw CodecError.encodingFailed(
                format: .ico, reason: "\(image.size) is larger than ICO's \(Self.maximumSide) pixels a side")
        }
        let rgba = ImageProcessors.straight(image).convertedToRGBA()
        let png = try PNGEncoder().encode(rgba, options: options)
        var out = Data(capacity: 22 + png.count)
        func append16(_ value: Int) { out.append(contentsOf: [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF)]) }
        func append32(_ value: Int) { for i in 0..<4 { out.append(UInt8(value >> (8 * i) & 0xFF)) } }
        // ICONDIR: reserved, type 1 (icon), one image
        append16(0)
        append16(1)
        append16(1)
        // ICONDIRENTRY: width and height (0 means 256), no palette, reserved, 1 plane, bits, size, offset
        out.append(UInt8(rgba.width % 256))
        out.append(UInt8(rgba.height % 256))
        out.append(contentsOf: [0, 0])
        append16(1)
        append16(rgba.hasTransparency ? 32 : 24)
        append32(png.count)
        append32(22)
        out.append(png)
        return out
    }
}
