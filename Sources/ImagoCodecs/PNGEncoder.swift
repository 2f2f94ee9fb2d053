import CImagoShims
import CPNG
import Foundation
import ImagoCore

/// Encodes PNG with libpng's simplified API (`png_image_write_to_memory`), 8 bits a channel, not interlaced.
///
/// - `gray8` is written as grayscale; `rgba8` as RGBA, or as RGB when every pixel is opaque (smaller files; it
///   decodes to the same pixels). Premultiplied input is unpremultiplied first. Lossless: decoding gives back
///   exactly the pixels encoded.
/// - Colour: ``EncodingOptions/colorProfile`` is written as an `iCCP` chunk (the profile byte-identical once
///   inflated), replacing the `sRGB` chunk libpng writes.
/// - One compression pass: the image is written into a buffer of the worst-case size and the result copied out
///   at its exact size; should libpng ever need more, it reports the size and the write is repeated once.
///   (`EncodingOptions` has no PNG settings; zlib's default level is used.)
///
/// Thread-safe: every encode has its own `png_image`.
public struct PNGEncoder: ImageEncoding {
    /// An encoder with the behaviour described on the type.
    public init() {}

    /// `.png`.
    public var format: ImageFormat { .png }

    /// Encodes `image` as described on the type.
    ///
    /// - Throws: ``CodecError/encodingFailed(format:reason:)`` with libpng's message.
    public func encode(_ image: PixelBuffer, options: EncodingOptions) throws -> Data {
        let image = image.alphaMode == .premultiplied ? image.unpremultiplied() : image
        let (width, height) = (image.width, image.height)
        var pngFormat = image.format == .gray8 ? cimago_png_format_gray : cimago_png_format_rgba
        var bytesPerPixel = image.format.bytesPerPixel
        var pixels = image.bytes
        if image.format == .rgba8 && !image.hasTransparency {
            pixels = Self.packedRGB(image)
            pngFormat = cimago_png_format_rgb
            bytesPerPixel = 3
        }
        let rowBytes = width * bytesPerPixel
        guard width <= Int(Int32.max) / bytesPerPixel, height <= Int(UInt32.max) else {
            throw CodecError.encodingFailed(format: .png, reason: "\(width)x\(height) is too large")
        }

        // Deflate's worst case is the filtered data plus 5 bytes per 16 KiB block; IDAT chunks add 12 bytes per
        // 8 KiB; the header chunks (IHDR, sRGB, gAMA, cHRM, IEND) a few hundred bytes.
        let filtered = (rowBytes + 1) * height
        var capacity = filtered + filtered / 512 + 4096
        for _ in 0..<2 {
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 16)
            defer { buffer.deallocate() }
            var png = png_image()
            png.version = cimago_png_image_version
            png.width = UInt32(width)
            png.height = UInt32(height)
            png.format = pngFormat
            defer { png_image_free(&png) }
            var size = png_alloc_size_t(capacity)
            let ok = pixels.withUnsafeBytes { pixels in
                png_image_write_to_memory(
                    &png, buffer.baseAddress, &size, 0, pixels.baseAddress, Int32(rowBytes), nil)
            }
            if ok != 0 {
                let encoded = Data(UnsafeRawBufferPointer(rebasing: buffer[..<min(Int(size), capacity)]))
                guard let profile = options.colorProfile else { return encoded }
                return try ProfileEmbedding.png(encoded, profile: profile.data)
            }
            guard size > capacity else {
                let message = withUnsafeBytes(of: &png.message) { raw in
                    String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
                }
                throw CodecError.encodingFailed(format: .png, reason: message.isEmpty ? "libpng failed" : message)
            }
            capacity = Int(size)  // libpng reported the size it needs: one more pass
        }
        throw CodecError.encodingFailed(format: .png, reason: "libpng's output kept outgrowing its buffer")
    }

    /// The RGB bytes of an RGBA image (alpha dropped), 3 a pixel.
    private static func packedRGB(_ image: PixelBuffer) -> [UInt8] {
        let count = image.width * image.height * 3
        return [UInt8](unsafeUninitializedCapacity: count) { out, initialized in
            image.withUnsafeBytes { src in
                var s = 0
                var d = 0
                while d < count {
                    out[d] = src[s]
                    out[d + 1] = src[s + 1]
                    out[d + 2] = src[s + 2]
                    s += 4
                    d += 3
                }
            }
            initialized = count
        }
    }
}
