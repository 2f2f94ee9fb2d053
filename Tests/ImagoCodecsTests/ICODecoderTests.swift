import Foundation
import ImagoCodecs
import ImagoCore
import Testing

/// ICODecoder on icons the tests write: entry choice by target size, BMP entries with their AND mask, 32-bit
/// alpha entries, PNG entries, cursors, truncation.
@Suite struct ICODecoderTests {
    typealias W = BMPTestImages

    /// A BMP icon entry of `size`×`size`, 8-bit indexed, colour index x % 4, with the AND mask marking the pixels
    /// where x == y transparent.
    func indexedEntry(_ size: Int) -> [UInt8] {
        let xor = W.rows(height: size) { _ in W.pack((0..<size).map { $0 % 4 }, bits: 8) }
        let and = W.rows(height: size) { y in W.pack((0..<size).map { $0 == y ? 1 : 0 }, bits: 1) }
        return W.dib(width: size, height: size * 2, bitCount: 8, palette: W.palette(4), pixelData: xor + and)
    }

    /// A 32-bit BMP entry with a real alpha channel (alpha = 8 × x + 5) and an AND mask that marks everything
    /// transparent (it must be ignored).
    func alphaEntry(_ size: Int) -> [UInt8] {
        let xor = W.rows(height: size) { _ in (0..<size).flatMap { x in [1, 2, 3, UInt8(8 * x + 5)] } }
        let and = W.rows(height: size) { _ in [UInt8](repeating: 0xFF, count: (size + 7) / 8) }
        return W.dib(width: size, height: size * 2, bitCount: 32, pixelData: xor + and)
    }

    func pngEntry(_ size: Int) throws -> [UInt8] {
        var image = try PixelBuffer(width: size, height: size, format: .rgba8)
        image[pixel: 1, 1] = RGBA(r: 250, g: 10, b: 20, a: 128)
        return [UInt8](try PNGEncoder().encode(image, options: EncodingOptions()))
    }

    func icon() throws -> Data {
        W.icon([(16, 16, 8, indexedEntry(16)), (32, 32, 32, alphaEntry(32)), (48, 48, 32, try pngEntry(48))])
    }

    func decode(_ data: Data, target: Int? = nil) throws -> ImageContainer {
        try ImageDecoderRegistry(ImagoCodecs.decoders).decode(
            data, options: DecodingOptions(targetSize: target.map { PixelSize(width: $0, height: $0) }))
    }

    @Test func picksTheEntryThatBestFitsTheTarget() throws {
        let data = try icon()
        #expect(ImageFormat(sniffing: data) == .ico)
        #expect(try decode(data).originalSize == PixelSize(width: 48, height: 48))  // largest: the PNG
        #expect(try decode(data, target: 16).originalSize == PixelSize(width: 16, height: 16))
        #expect(try decode(data, target: 20).originalSize == PixelSize(width: 32, height: 32))
        let tooLarge = try decode(data, target: 64)
        #expect(tooLarge.originalSize == PixelSize(width: 48, height: 48))
        #expect(tooLarge.image[pixel: 1, 1] == RGBA(r: 250, g: 10, b: 20, a: 128))
        #expect(tooLarge.format == .ico)
        #expect(tooLarge.bitDepth == 8)
    }

    @Test func bmpEntryAppliesTheANDMask() throws {
        let image = try decode(try icon(), target: 16).image
        let palette = W.palette(4)
        #expect(image[pixel: 3, 3].a == 0)
        #expect(image[pixel: 3, 5] == palette[3])
        #expect(image[pixel: 5, 3] == palette[1])
        #expect((0..<16).filter { image[pixel: $0, 7].a == 0 } == [7])
    }

    @Test func thirtyTwoBitEntryKeepsItsAlphaOverTheMask() throws {
        let image = try decode(try icon(), target: 32).image
        #expect(image[pixel: 0, 0] == RGBA(r: 3, g: 2, b: 1, a: 5))
        #expect(image[pixel: 20, 9] == RGBA(r: 3, g: 2, b: 1, a: 165))
    }

    @Test func cursorsDecodeLikeIcons() throws {
        let cursor = W.icon(type: 2, [(16, 16, 0, indexedEntry(16))])
        #expect(ImageFormat(sniffing: cursor) == .ico)
        #expect(try decode(cursor).image[pixel: 2, 2].a == 0)
    }

    @Test func damagedIconsFailTyped() throws {
        let data = try icon()
        #expect(throws: CodecError.truncated(format: .ico)) { try decode(data.prefix(data.count - 10)) }
        for length in 0..<min(data.count, 600) {
            _ = try? ICODecoder().decode(data.prefix(length), options: DecodingOptions())
        }
        // An entry whose DIB declares a huge size is refused before allocating
        let huge = W.icon([(0, 0, 32, W.dib(width: 60_000, height: 120_000, bitCount: 32, pixelData: [0, 0, 0, 0]))])
        #expect(throws: CodecError.tooManyPixels(width: 60_000, height: 60_000, limit: 100_000_000)) {
            try decode(huge)
        }
    }
}
