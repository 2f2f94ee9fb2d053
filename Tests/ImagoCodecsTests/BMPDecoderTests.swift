import Foundation
import ImagoCodecs
import ImagoCore
import Testing

/// BMPDecoder against files the tests write with known pixels: every bit depth, RLE4/RLE8, bit fields, both
/// row orders, every header kind, alpha rules, truncation and hostile headers.
@Suite struct BMPDecoderTests {
    typealias W = BMPTestImages
    let width = 7
    let height = 5

    /// The index of pixel (x, y) in a palette of `count` colours.
    func index(_ x: Int, _ y: Int, count: Int) -> Int { (x * 3 + y * 5) % count }

    func pixels(_ image: PixelBuffer) -> [RGBA] {
        (0..<image.height).flatMap { y in (0..<image.width).map { x in image[pixel: x, y] } }
    }

    func decode(_ data: Data, _ options: DecodingOptions = DecodingOptions()) throws -> ImageContainer {
        try ImageDecoderRegistry(ImagoCodecs.decoders).decode(data, options: options)
    }

    @Test(arguments: [(1, 40), (2, 40), (4, 40), (8, 40), (8, 12), (4, 12), (1, 124)])
    func indexedImagesDecodeThroughThePalette(bits: Int, headerSize: Int) throws {
        let count = 1 << bits
        let palette = W.palette(count)
        let data = W.rows(height: height) { y in W.pack((0..<width).map { index($0, y, count: count) }, bits: bits) }
        let file = W.file(
            W.dib(
                headerSize: headerSize, width: width, height: height, bitCount: bits, palette: palette, pixelData: data),
            pixelBytes: data.count)
        let image = try decode(file)
        #expect(image.format == .bmp)
        #expect(image.bitDepth == 8)
        #expect(image.image.isKnownOpaque)
        let expected = (0..<height).flatMap { y in (0..<width).map { palette[index($0, y, count: count)] } }
        #expect(pixels(image.image) == expected, "\(bits)-bit, \(headerSize)-byte header")
    }

    func colour(_ x: Int, _ y: Int) -> RGBA {
        RGBA(r: UInt8(x * 30 + y), g: UInt8(200 - y * 20), b: UInt8((x * y * 13) & 0xFF), a: UInt8(40 + x * 25 + y))
    }

    @Test(arguments: [false, true])
    func twentyFourBitBothRowOrders(topDown: Bool) throws {
        let data = W.rows(height: height, topDown: topDown) { y in
            (0..<width).flatMap { x in [colour(x, y).b, colour(x, y).g, colour(x, y).r] }
        }
        let file = W.file(
            W.dib(width: width, height: topDown ? -height : height, bitCount: 24, pixelData: data),
            pixelBytes: data.count)
        let image = try decode(file)
        let expected = (0..<height).flatMap { y in
            (0..<width).map { x in RGBA(r: colour(x, y).r, g: colour(x, y).g, b: colour(x, y).b) }
        }
        #expect(pixels(image.image) == expected)
        #expect(image.image.isKnownOpaque)
    }

    @Test func thirtyTwoBitRGBUsesTheFourthByteAsAlphaWhenAnyIsSet() throws {
        let data = W.rows(height: height) { y in
            (0..<width).flatMap { x in [colour(x, y).b, colour(x, y).g, colour(x, y).r, colour(x, y).a] }
        }
        let image = try decode(
            W.file(W.dib(width: width, height: height, bitCount: 32, pixelData: data), pixelBytes: data.count))
        #expect(pixels(image.image) == (0..<height).flatMap { y in (0..<width).map { colour($0, y) } })
        #expect(!image.image.isKnownOpaque)
    }

    @Test func thirtyTwoBitRGBWithZeroAlphaEverywhereIsOpaque() throws {
        let data = W.rows(height: height) { y in
            (0..<width).flatMap { x in [colour(x, y).b, colour(x, y).g, colour(x, y).r, 0] }
        }
        let image = try decode(
            W.file(W.dib(width: width, height: height, bitCount: 32, pixelData: data), pixelBytes: data.count))
        #expect(pixels(image.image).allSatisfy { $0.a == 255 })
        #expect(image.image[pixel: 3, 2] == RGBA(r: colour(3, 2).r, g: colour(3, 2).g, b: colour(3, 2).b))
    }

    /// 32-bit alpha through masks in a v5 header (RGBA byte order), `BI_ALPHABITFIELDS` and a v4 header.
    @Test(arguments: [(124, 3), (40, 6), (108, 3), (56, 3)])
    func thirtyTwoBitBitFieldsWithAlphaMask(headerSize: Int, compression: Int) throws {
        let masks: [UInt32] = [0x0000_00FF, 0x0000_FF00, 0x00FF_0000, 0xFF00_0000]  // R G B A in memory order
        let data = W.rows(height: height) { y in
            (0..<width).flatMap { x in [colour(x, y).r, colour(x, y).g, colour(x, y).b, colour(x, y).a] }
        }
        let file = W.file(
            W.dib(
                headerSize: headerSize, width: width, height: height, bitCount: 32, compression: compression,
                masks: masks, pixelData: data),
            pixelBytes: data.count)
        let image = try decode(file)
        #expect(pixels(image.image) == (0..<height).flatMap { y in (0..<width).map { colour($0, y) } })
    }

    @Test func sixteenBit555And565() throws {
        func scaled(_ v: Int, bits: Int) -> UInt8 { let m = (1 << bits) - 1; return UInt8((v * 255 + m / 2) / m) }
        // 5-5-5 (BI_RGB)
        let data555 = W.rows(height: height) { y in
            (0..<width).flatMap { x in W.le16((x * 4) << 10 | (y * 6) << 5 | (x + y)) }
        }
        let image555 = try decode(
            W.file(W.dib(width: width, height: height, bitCount: 16, pixelData: data555), pixelBytes: data555.count))
        #expect(image555.bitDepth == 5)
        #expect(
            image555.image[pixel: 5, 3] == RGBA(r: scaled(20, bits: 5), g: scaled(18, bits: 5), b: scaled(8, bits: 5)))
        // 5-6-5 (BI_BITFIELDS, masks after a 40-byte header)
        let data565 = W.rows(height: height) { y in
            (0..<width).flatMap { x in W.le16((x * 4) << 11 | (y * 12) << 5 | (x + y)) }
        }
        let file = W.file(
            W.dib(
                width: width, height: height, bitCount: 16, compression: 3, masks: [0xF800, 0x07E0, 0x001F],
                pixelData: data565),
            pixelBytes: data565.count)
        let image565 = try decode(file)
        #expect(image565.bitDepth == 6)
        #expect(
            image565.image[pixel: 6, 4] == RGBA(r: scaled(24, bits: 5), g: scaled(48, bits: 6), b: scaled(10, bits: 5)))
        #expect(image565.image[pixel: 0, 0] == RGBA(r: 0, g: 0, b: 0))
    }

    @Test func rle8RunsLiteralsDeltasAndEndsOfLine() throws {
        let palette = W.palette(256)
        // 6x3, bottom-up. Row 2 (stored first): run of 3 × index 5, literal [7, 8, 9]. Row 1: delta (2, 0), run
        // 2 × 4, end of line. Row 0: run of 6 × 1, end of bitmap.
        let rle: [UInt8] = [3, 5, 0, 3, 7, 8, 9, 0, 0, 0, 0, 2, 2, 0, 2, 4, 0, 0, 6, 1, 0, 1]
        let file = W.file(
            W.dib(width: 6, height: 3, bitCount: 8, compression: 1, palette: palette, pixelData: rle),
            pixelBytes: rle.count)
        let image = try decode(file).image
        let clear = RGBA(r: 0, g: 0, b: 0, a: 0)
        #expect(
            pixels(image) == [
                palette[1], palette[1], palette[1], palette[1], palette[1], palette[1],
                clear, clear, palette[4], palette[4], clear, clear,
                palette[5], palette[5], palette[5], palette[7], palette[8], palette[9],
            ])
        #expect(!image.isKnownOpaque)
    }

    @Test func rle4RunsAlternateNibbles() throws {
        let palette = W.palette(16)
        // 5x2, bottom-up. Bottom row: run of 5 alternating 1, 2. Top row: literal of 5 nibbles 3 4 5 6 7 (3 bytes + pad), end.
        let rle: [UInt8] = [5, 0x12, 0, 0, 0, 5, 0x34, 0x56, 0x70, 0, 0, 1]
        let file = W.file(
            W.dib(width: 5, height: 2, bitCount: 4, compression: 2, palette: palette, pixelData: rle),
            pixelBytes: rle.count)
        let image = try decode(file).image
        #expect(pixels(image) == [3, 4, 5, 6, 7, 1, 2, 1, 2, 1].map { palette[$0] })
    }

    @Test func truncatedPixelDataThrowsOrGivesAPreview() throws {
        let data = W.rows(height: height) { y in
            (0..<width).flatMap { x in [colour(x, y).b, colour(x, y).g, colour(x, y).r] }
        }
        let file = W.file(W.dib(width: width, height: height, bitCount: 24, pixelData: data), pixelBytes: data.count)
        let cut = file.prefix(file.count - 30)
        #expect(throws: CodecError.truncated(format: .bmp)) { try decode(cut) }
        let preview = try decode(cut, DecodingOptions(allowsPartialData: true))
        #expect(preview.isPreview)
        // The bottom rows come first in the file: they are present, the top row is not
        #expect(
            preview.image[pixel: 1, height - 1]
                == RGBA(r: colour(1, height - 1).r, g: colour(1, height - 1).g, b: colour(1, height - 1).b))
        #expect(preview.image[pixel: 1, 0].a == 0)
        // Every prefix of every kind fails typed or decodes; none crashes
        for length in 0..<file.count { _ = try? decode(file.prefix(length)) }
    }

    @Test func hostileHeadersFailBeforeAllocating() throws {
        let huge = W.file(
            W.dib(width: 100_000, height: -100_000, bitCount: 32, pixelData: [0, 0, 0, 0]), pixelBytes: 4)
        #expect(throws: CodecError.tooManyPixels(width: 100_000, height: 100_000, limit: 100_000_000)) {
            try decode(huge)
        }
        let intMin = W.file(
            W.dib(width: 1, height: Int(Int32.min), bitCount: 24, pixelData: [0, 0, 0, 0]), pixelBytes: 4)
        #expect(throws: CodecError.self) { try decode(intMin) }
        // 100 MB of pixels declared, 4 bytes present: truncated before the output is allocated
        let starved = W.file(
            W.dib(width: 10_000, height: 10_000, bitCount: 8, palette: W.palette(2), pixelData: [0, 0, 0, 0]),
            pixelBytes: 4)
        #expect(throws: CodecError.truncated(format: .bmp)) { try decode(starved) }
        let badBits = W.file(W.dib(width: 2, height: 2, bitCount: 7, pixelData: [0, 0, 0, 0]), pixelBytes: 4)
        #expect(throws: CodecError.self) { try decode(badBits) }
        let rleWithWrongDepth = W.file(
            W.dib(width: 2, height: 2, bitCount: 24, compression: 1, pixelData: [0, 1]), pixelBytes: 2)
        #expect(throws: CodecError.self) { try decode(rleWithWrongDepth) }
    }

    /// A 10,000 × 10,000 RLE8 bitmap of ~150 bytes: deltas skip 255 rows in 4 bytes, so it is within the pixel
    /// limit and would make the decoder allocate 400 MB of transparency. The RLE data paints a few hundred
    /// pixels, so the decoder refuses it before allocating (its bound: 1 Mi pixels, or 16 × the painted ones).
    static func hostileRLE() -> Data {
        var rle: [UInt8] = [255, 1, 0, 2, 255, 255]  // one run, then a delta of 255 columns and 255 rows
        for _ in 0..<34 { rle += [0, 2, 0, 255] }  // 34 more deltas of 255 rows
        rle += [0, 1]
        return W.file(
            W.dib(width: 10_000, height: 10_000, bitCount: 8, compression: 1, palette: W.palette(2), pixelData: rle),
            pixelBytes: rle.count)
    }

    @Test func rleThatPaintsAlmostNothingCannotDeclareAHugeImage() throws {
        let hostile = Self.hostileRLE()
        #expect(hostile.count < 1200)
        #expect(throws: CodecError.tooManyPixels(width: 10_000, height: 10_000, limit: 1 << 20)) {
            try decode(hostile)
        }
        // The regression input in Tests/Fuzz/bmp-ico is this file.
        let stored = try Data(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Fuzz/bmp-ico/rle8-hostile-deltas-10000x10000.bmp"))
        #expect(stored == hostile)
        // A sparse RLE bitmap within the floor (1024 × 1024, one run) still decodes, mostly transparent.
        let sparseData: [UInt8] = [4, 1, 0, 1]
        let sparse = try decode(
            W.file(
                W.dib(
                    width: 1024, height: 1024, bitCount: 8, compression: 1, palette: W.palette(2), pixelData: sparseData
                ),
                pixelBytes: sparseData.count))
        #expect(sparse.image.size == PixelSize(width: 1024, height: 1024))
        #expect(sparse.image[pixel: 3, 1023] == W.palette(2)[1])
        #expect(sparse.image[pixel: 4, 1023].a == 0)
        // Above the floor, an image that paints at least one pixel in 16 decodes: 2048 × 1024 with every row run.
        var dense: [UInt8] = []
        for _ in 0..<1024 { dense += [255, 1, 255, 1, 0, 0] }
        let wide = try decode(
            W.file(
                W.dib(width: 2048, height: 1024, bitCount: 8, compression: 1, palette: W.palette(2), pixelData: dense),
                pixelBytes: dense.count))
        #expect(wide.image.size == PixelSize(width: 2048, height: 1024))
        #expect(wide.image[pixel: 509, 0] == W.palette(2)[1])
        #expect(wide.image[pixel: 510, 0].a == 0)
    }

    @Test func targetSizeFitsTheImage() throws {
        let data = W.rows(height: 40) { y in (0..<60).flatMap { x in [UInt8(x), UInt8(y), 9] } }
        let file = W.file(W.dib(width: 60, height: 40, bitCount: 24, pixelData: data), pixelBytes: data.count)
        let image = try decode(file, DecodingOptions(targetSize: PixelSize(width: 30, height: 30)))
        #expect(image.image.size == PixelSize(width: 30, height: 20))
        #expect(image.originalSize == PixelSize(width: 60, height: 40))
    }
}
