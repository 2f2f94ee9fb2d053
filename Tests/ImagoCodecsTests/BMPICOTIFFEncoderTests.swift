import Foundation
import ImagoCodecs
import ImagoCore
import Testing

/// BMP, ICO and TIFF outputs (imgproxy's `bmp`, `ico` and `tiff` formats): each decoded back exactly by Imago's
/// decoders (BMP and ICO in Swift, TIFF through libtiff), and each header read by `file(1)`, an independent parser.
@Suite struct BMPICOTIFFEncoderTests {
    /// A 5 × 3 image whose pixels all differ, opaque or with alpha falling across it.
    func distinct(alpha: Bool) throws -> PixelBuffer {
        var image = try PixelBuffer(width: 5, height: 3)
        for y in 0..<3 {
            for x in 0..<5 {
                image[pixel: x, y] = RGBA(
                    r: UInt8(40 * x + 3), g: UInt8(90 * y + 5), b: UInt8(7 + 11 * x + 13 * y),
                    a: alpha ? UInt8(255 - 50 * x) : 255)
            }
        }
        return image
    }

    /// What `file -b` says of `data`.
    func described(_ data: Data) throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("imago-\(UUID().uuidString)")
        try data.write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/file")
        process.arguments = ["-b", url.path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test(arguments: [false, true])
    func bmpDecodesBackExactly(alpha: Bool) throws {
        let image = try distinct(alpha: alpha)
        let data = try BMPEncoder().encode(image, options: EncodingOptions())
        let decoded = try BMPDecoder().decode(data, options: DecodingOptions()).image
        #expect(ImageFormat(sniffing: data) == .bmp && decoded.size == image.size)
        #expect(decoded.bytes == image.bytes)
        // 24-bit rows of 15 bytes padded to 16, or 32-bit rows of 20; a v5 header
        #expect(data.count == 14 + 124 + (alpha ? 20 : 16) * 3)
        let text = try described(data)
        #expect(text.contains("PC bitmap") && text.contains("5 x -3 x \(alpha ? 32 : 24)"), "\(text)")
        // A gray image is written as RGB
        let gray = try PixelBuffer(width: 2, height: 1, format: .gray8, bytes: [10, 200])
        let grayDecoded = try BMPDecoder().decode(
            try BMPEncoder().encode(gray, options: EncodingOptions()), options: DecodingOptions())
        #expect(grayDecoded.image[pixel: 1, 0] == RGBA(r: 200, g: 200, b: 200))
    }

    @Test(arguments: [false, true])
    func icoHoldsOnePNGAndDecodesBackExactly(alpha: Bool) throws {
        let image = try distinct(alpha: alpha)
        let data = try ICOEncoder().encode(image, options: EncodingOptions())
        let decoded = try ICODecoder().decode(data, options: DecodingOptions()).image
        #expect(ImageFormat(sniffing: data) == .ico && decoded.bytes == image.bytes)
        #expect(ImageFormat(sniffing: data.dropFirst(22)) == .png)
        let text = try described(data)
        #expect(text.contains("icon") && text.contains("5x3") && text.contains("\(alpha ? 32 : 24)"), "\(text)")
        // 256 a side is written as 0; 257 is refused
        let big = try PixelBuffer(width: 256, height: 10)
        #expect(try ICOEncoder().encode(big, options: EncodingOptions())[6] == 0)
        #expect(throws: CodecError.self) {
            try ICOEncoder().encode(try PixelBuffer(width: 257, height: 1), options: EncodingOptions())
        }
    }

    @Test(arguments: [false, true])
    func tiffDecodesBackExactlyAndIsLZW(alpha: Bool) throws {
        let image = try distinct(alpha: alpha)
        let data = try TIFFEncoder().encode(image, options: EncodingOptions())
        let decoded = try TIFFDecoder().decode(data, options: DecodingOptions()).image
        #expect(ImageFormat(sniffing: data) == .tiff && decoded.size == image.size)
        // libtiff's RGBA reader premultiplies alpha, which rounds colour under partial alpha (by up to 255 / alpha
        // levels); opaque pixels come back exactly
        for y in 0..<3 {
            for x in 0..<5 {
                let (a, b) = (decoded[pixel: x, y], image[pixel: x, y])
                let tolerance = b.a == 255 ? 0 : 255 / Int(b.a) + 1
                #expect(a.a == b.a, "\(x), \(y)")
                #expect([(a.r, b.r), (a.g, b.g), (a.b, b.b)].allSatisfy { abs(Int($0) - Int($1)) <= tolerance })
            }
        }
        let text = try described(data)
        #expect(text.contains("TIFF image data") && text.contains("compression=LZW"), "\(text)")
        #expect(text.contains("width=5") && text.contains("height=3"), "\(text)")
    }

    @Test func aPhotoTIFFIsLosslessAndSmallerThanRaw() throws {
        let photo = try PNGDecoder().decode(corpusData("kodak/01.png"), options: DecodingOptions()).image
        let data = try TIFFEncoder().encode(photo, options: EncodingOptions())
        let decoded = try TIFFDecoder().decode(data, options: DecodingOptions()).image
        #expect(decoded.bytes == photo.bytes)
        #expect(data.count < photo.width * photo.height * 3)
        // A colour profile is stored whole (the ICCProfile tag): the file grows by its bytes
        let profile = ColorProfile(data: Data((0..<600).map { UInt8($0 % 251) }))
        let tagged = try TIFFEncoder().encode(photo, options: EncodingOptions(colorProfile: profile))
        #expect(tagged.count >= data.count + 600 && tagged.range(of: profile.data) != nil)
    }
}

/// HEIC outputs (imgproxy's `heic` format) through libheif's x265 encoder, read back by Imago's HEIF decoder.
@Suite struct HEICEncoderTests {
    @Test func aPhotoEncodesAndDecodesCloseToTheOriginal() throws {
        try #require(HEICEncoder.isAvailable, "libheif here has no HEVC encoder")
        let photo = try PNGDecoder().decode(corpusData("kodak/01.png"), options: DecodingOptions()).image
            .resampled(to: PixelSize(width: 384, height: 256))
        let data = try HEICEncoder().encode(photo, options: EncodingOptions(quality: 0.8))
        #expect(ImageFormat(sniffing: data) == .heic)
        let decoded = try HEIFDecoder().decode(data, options: DecodingOptions()).image
        #expect(decoded.size == photo.size)
        let mae = try #require(meanChannelError(decoded, photo))
        #expect(mae < 4, "mean absolute error \(mae)")
        #expect(data.count < photo.width * photo.height * 3 / 4)  // a quarter of the raw RGB
        // Quality changes the size; transparency is kept as an alpha image
        let low = try HEICEncoder().encode(photo, options: EncodingOptions(quality: 0.3))
        #expect(low.count < data.count * 2 / 3)
        var cutout = photo
        for y in 0..<64 { for x in 0..<64 { cutout[pixel: x, y] = RGBA(r: 0, g: 0, b: 0, a: 0) } }
        let withAlpha = try HEIFDecoder().decode(
            try HEICEncoder().encode(cutout, options: EncodingOptions(quality: 0.8)), options: DecodingOptions()
        ).image
        #expect(withAlpha[pixel: 10, 10].a < 8 && withAlpha[pixel: 200, 200].a > 247)
    }
}
