import Foundation
import ImagoCore
import ImagoTesting

/// Byte-level helpers for crafting test files: EXIF blocks, JPEG segments, PNG chunks.
enum TestImages {
    /// A TIFF/EXIF block whose IFD0 holds only the orientation tag, in either byte order (``ExifFixture``).
    static func exifBlock(orientation: UInt16, bigEndian: Bool = true) -> [UInt8] {
        ExifFixture.block(orientation: orientation, bigEndian: bigEndian)
    }

    /// `jpeg` with an APP1 Exif segment carrying `orientation` inserted right after SOI (``ExifFixture``).
    static func jpeg(_ jpeg: Data, withOrientation orientation: UInt16) -> Data {
        ExifFixture.jpeg(jpeg, withOrientation: orientation)
    }

    /// A PNG chunk: length, type, data, CRC.
    static func pngChunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typeBytes = Array(type.utf8)
        let n = UInt32(data.count)
        let length = [UInt8(n >> 24), UInt8((n >> 16) & 0xFF), UInt8((n >> 8) & 0xFF), UInt8(n & 0xFF)]
        let c = crc32(typeBytes + data)
        return length + typeBytes + data + [
            UInt8(c >> 24), UInt8((c >> 16) & 0xFF), UInt8((c >> 8) & 0xFF), UInt8(c & 0xFF),
        ]
    }

    static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// A PNG header declaring `width × height` 8-bit RGBA, then an empty IDAT and IEND: enough for libpng to read
    /// the header, nowhere near enough pixels.
    static func pngHeader(width: UInt32, height: UInt32) -> Data {
        func be(_ v: UInt32) -> [UInt8] {
            [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)]
        }
        let ihdr = be(width) + be(height) + [8, 6, 0, 0, 0]
        return Data(pngSignature + pngChunk("IHDR", ihdr) + pngChunk("IDAT", []) + pngChunk("IEND", []))
    }

    /// `png` with an `eXIf` chunk carrying `orientation` inserted after IHDR.
    static func png(_ png: Data, withOrientation orientation: UInt16) -> Data {
        let bytes = [UInt8](png)
        let afterIHDR = 8 + 8 + 13 + 4
        return Data(
            Array(bytes[..<afterIHDR]) + pngChunk("eXIf", exifBlock(orientation: orientation))
                + Array(bytes[afterIHDR...]))
    }

    /// CRC-32 (ISO 3309, as PNG uses).
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for b in bytes {
            c ^= UInt32(b)
            for _ in 0..<8 { c = (c & 1) != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        }
        return c ^ 0xFFFF_FFFF
    }

    /// A `width × height` RGBA test pattern: gradients in R and G, a checker in B, alpha as given per pixel.
    static func pattern(width: Int, height: Int, alpha: (Int, Int) -> UInt8 = { _, _ in 255 }) throws -> PixelBuffer {
        var image = try PixelBuffer(width: width, height: height)
        for y in 0..<height {
            for x in 0..<width {
                image[pixel: x, y] = RGBA(
                    r: UInt8(x * 255 / max(1, width - 1)), g: UInt8(y * 255 / max(1, height - 1)),
                    b: (x / 4 + y / 4) % 2 == 0 ? 40 : 200, a: alpha(x, y))
            }
        }
        return image
    }
}
