import Foundation
import ImagoCore

/// Encodes Windows bitmaps (BMP) in Swift, as imgproxy's `bmpsave` writes them: uncompressed, rows top-down, with a
/// Windows v5 header (no library writes BMP).
///
/// - An opaque image (every alpha 255, and every `gray8` image) is 24-bit `BI_RGB`; one with transparency is
///   32-bit `BI_BITFIELDS` with an alpha mask, which Windows, browsers and ``BMPDecoder`` read as straight alpha.
/// - The colour space is sRGB (`sRGB` in the header): pixels should be in sRGB, and ``EncodingOptions/
///   colorProfile`` is not embedded. ``EncodingOptions/quality`` does not apply.
/// - Limits: a file of at most 4 GiB (BMP's sizes are 32-bit).
///
/// Thread-safe: the encoder has no state.
///
/// ```swift
/// let bmp = try BMPEncoder().encode(image, options: EncodingOptions())
/// ```
public struct BMPEncoder: ImageEncoding {
    /// A BMP encoder; it has no settings.
    public init() {}

    /// `.bmp`.
    public var format: ImageFormat { .bmp }

    /// The file header (14 bytes) and the v5 header (124 bytes).
    static let headerLength = 14 + 124

    /// Encodes `image` as described on the type.
    ///
    /// - Throws: ``CodecError/encodingFailed(format:reason:)`` for an image whose file would pass 4 GiB.
    public func encode(_ image: PixelBuffer, options: EncodingOptions) throws -> Data {
        let rgba = ImageProcessors.straight(image).convertedToRGBA()
        let hasAlpha = rgba.hasTransparency
        let bytesPerPixel = hasAlpha ? 4 : 3
        let (width, height) = (rgba.width, rgba.height)
        let rowLength = (width * bytesPerPixel + 3) & ~3  // rows padded to 4 bytes
        let (pixelBytes, overflow) = rowLength.multipliedReportingOverflow(by: height)
        guard !overflow, pixelBytes <= Int(UInt32.max) - Self.headerLength else {
            throw CodecError.encodingFailed(format: .bmp, reason: "\(rgba.size) is too large for BMP's 32-bit sizes")
        }
        var out = Data(count: Self.headerLength + pixelBytes)  // zeroed: the padding and unused header fields
        func put16(_ value: Int, at offset: Int) {
            out[offset] = UInt8(value & 0xFF)
            out[offset + 1] = UInt8((value >> 8) & 0xFF)
        }
        func put32(_ value: UInt32, at offset: Int) {
            for i in 0..<4 { out[offset + i] = UInt8((value >> (8 * UInt32(i))) & 0xFF) }
        }
        // BITMAPFILEHEADER
        out[0] = 0x42  // "BM"
        out[1] = 0x4D
        put32(UInt32(out.count), at: 2)
        put32(UInt32(Self.headerLength), at: 10)
        // BITMAPV5HEADER
        put32(124, at: 14)
        put32(UInt32(width), at: 18)
        put32(UInt32(bitPattern: -Int32(height)), at: 22)  // negative: top-down rows
        put16(1, at: 26)  // planes
        put16(bytesPerPixel * 8, at: 28)
        put32(hasAlpha ? 3 : 0, at: 30)  // BI_BITFIELDS or BI_RGB
        put32(UInt32(pixelBytes), at: 34)
        put32(2835, at: 38)  // 72 dpi
        put32(2835, at: 42)
        if hasAlpha {  // the masks of B, G, R, A bytes in that order
            put32(0x00FF_0000, at: 54)
            put32(0x0000_FF00, at: 58)
            put32(0x0000_00FF, at: 62)
            put32(0xFF00_0000, at: 66)
        }
        put32(0x7352_4742, at: 70)  // LCS_sRGB ("sRGB")
        put32(4, at: 122)  // LCS_GM_IMAGES: perceptual rendering intent
        // Pointers, not subscripts: an array written through a closure's capture is checked on every store.
        out.withUnsafeMutableBytes { destination in
            let target = destination.baseAddress!.assumingMemoryBound(to: UInt8.self)
            rgba.withUnsafeBytes { source in
                let pixels = source.baseAddress!.assumingMemoryBound(to: UInt8.self)
                for y in 0..<height {
                    var s = pixels + y * rgba.bytesPerRow
                    var d = target + Self.headerLength + y * rowLength
                    if hasAlpha {
                        for _ in 0..<width {
                            (d[0], d[1], d[2], d[3]) = (s[2], s[1], s[0], s[3])
                            s += 4
                            d += 4
                        }
                    } else {
                        for _ in 0..<width {
                            (d[0], d[1], d[2]) = (s[2], s[1], s[0])
                            s += 4
                            d += 3
                        }
                    }
                }
            }
        }
        return out
    }
}
