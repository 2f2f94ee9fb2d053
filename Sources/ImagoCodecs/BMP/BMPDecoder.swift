import Foundation
import ImagoCore

/// Decodes Windows bitmaps (BMP) in Swift: 1/2/4/8-bit indexed, 16/24/32-bit, RLE4 and RLE8, bit fields and
/// alpha bit fields, bottom-up and top-down rows, OS/2 1.x (12-byte) and 2.x headers and Windows v3/v4/v5 headers.
///
/// Behaviour (as browsers show BMPs):
/// - Output is RGBA8 with straight alpha. Alpha comes from a 32-bit image's alpha mask (v4/v5 headers,
///   `BI_ALPHABITFIELDS`) or, for `BI_RGB` 32-bit images, the fourth byte; a 32-bit image whose alpha is zero
///   everywhere is opaque (old writers leave that byte zero). Images without alpha are marked
///   ``PixelBuffer/isKnownOpaque``.
/// - Channel masks narrower or wider than 8 bits are scaled to 0…255 with rounding; indices beyond the palette
///   draw opaque black; RLE pixels the stream skips (deltas, early ends of line) are transparent.
/// - ``ImageContainer/bitDepth``: 8 for indexed, 24- and 32-bit files, the widest colour mask for 16-bit ones.
/// - Dimensions are checked against ``DecodingOptions/pixelLimit`` before the one pixel allocation.
/// - Pixel data that ends early throws ``CodecError/truncated(format:)``, unless
///   ``DecodingOptions/allowsPartialData``, which returns the rows present (the rest transparent) as a preview.
/// - ``DecodingOptions/targetSize``: decoded at full size, then area-averaged to the aspect-fit size.
/// - Embedded JPEG/PNG (`BI_JPEG`, `BI_PNG`) and OS/2 Huffman/RLE24 compressions are not supported (`.corrupt`).
///
/// Thread-safe: the decoder has no state.
///
/// ```swift
/// let container = try BMPDecoder().decode(data, options: DecodingOptions())
/// ```
public struct BMPDecoder: ImageDecoding {
    /// A BMP decoder; it has no settings.
    public init() {}

    /// `[.bmp]`.
    public var formats: Set<ImageFormat> { [.bmp] }

    /// Decodes `data` as described on the type.
    ///
    /// - Throws: ``CodecError``: `.empty`, `.truncated`, `.corrupt`, `.tooManyPixels`.
    public func decode(_ data: Data, options: DecodingOptions) throws -> ImageContainer {
        guard !data.isEmpty else { throw CodecError.empty }
        return try data.withUnsafeBytes { b in
            guard b.count >= 18 else { throw CodecError.truncated(format: .bmp) }
            guard b[0] == 0x42, b[1] == 0x4D else { throw CodecError.corrupt(format: .bmp, reason: "no BM signature") }
            let info = try BMPInfo(b, at: 14, isIconEntry: false, options: options, format: .bmp)
            let declared = Int(UInt32(b[10]) | UInt32(b[11]) << 8 | UInt32(b[12]) << 16 | UInt32(b[13]) << 24)
            // The file header's data offset, unless it points into the headers or past the end (then the data
            // follows the palette, where writers that leave the offset zero put it).
            let start = declared >= info.end && declared < b.count ? declared : info.end
            return try Self.container(info: info, bytes: b, start: start, options: options, format: .bmp)
        }
    }

    /// Decodes the pixels of `info` at `start` and wraps them as the decoder's result (shared with ICO).
    static func container(
        info: BMPInfo, bytes: UnsafeRawBufferPointer, start: Int, options: DecodingOptions, format: ImageFormat,
        andMask: Bool = false
    ) throws -> ImageContainer {
        let reader = BMPPixels(info: info, format: format)
        var result = try reader.decode(bytes, from: start, allowsPartialData: options.allowsPartialData)
        if andMask, result.isComplete {
            result.hasAlpha = ICOMask.apply(
                to: &result.pixels, bytes: bytes, from: start + reader.stride * info.height, info: info,
                alphaInUse: result.hasAlpha)
        }
        if !result.isComplete && !options.allowsPartialData { throw CodecError.truncated(format: format) }
        var pixels = result.hasAlpha ? result.pixels : result.pixels.assumingOpaque()
        let full = pixels.size
        let fitted = TargetFitting.fittedSize(
            of: full, within: options.targetSize, orientation: .up, mode: options.targetMode)
        if fitted != full { pixels = try pixels.resampledWithVectorKernel(to: fitted) }
        return ImageContainer(
            frames: [ImageFrame(buffer: pixels)], format: format, isPreview: !result.isComplete, originalSize: full,
            bitDepth: info.sourceBitDepth)
    }
}
