import Foundation
import ImagoCore
import ImagoTesting
import Testing

@testable import ImagoCodecs

/// A grid whose tiles each carry their own alpha item (`libavif-color_grid_alpha_nogrid.avif`: an 80x80 grid of
/// two 80x64 tiles, items 2 and 3, one above the other, with alpha items 5 and 6, `auxl` to one tile each), which libavif 0.11 returns opaque: the
/// alpha is found, decoded tile by tile and matches the reference; broken or partial layouts fail with a
/// ``CodecError`` or stay opaque, as libavif 1.x does.
@Suite struct AVIFTileAlphaTests {
    static let name = "libavif-color_grid_alpha_nogrid.avif"

    static func file() throws -> Data {
        try Data(contentsOf: corpusURL("avif").appendingPathComponent(name))
    }

    static func reference() throws -> PixelBuffer {
        try decodeReferencePNG(stillReferenceURL("avif", name))
    }

    /// Mean absolute difference of the alpha channels of two same-sized buffers.
    static func alphaError(_ a: PixelBuffer, _ b: PixelBuffer) -> Double {
        var total = 0
        for y in 0..<b.height {
            for x in 0..<b.width { total += abs(Int(a[pixel: x, y].a) - Int(b[pixel: x, y].a)) }
        }
        return Double(total) / Double(b.width * b.height)
    }

    /// `data` with the first occurrence of `pattern` replaced by `replacement` (same length).
    static func patched(_ data: Data, _ pattern: [UInt8], _ replacement: [UInt8]) throws -> Data {
        var bytes = [UInt8](data)
        let at = try #require(
            (0...(bytes.count - pattern.count)).first { Array(bytes[$0..<($0 + pattern.count)]) == pattern })
        bytes.replaceSubrange(at..<(at + pattern.count), with: replacement)
        return Data(bytes)
    }

    // ipma entries of the alpha items 5 and 6: 4 associations, ispe (4), pixi (6), av1C (8, essential), auxC (7).
    static let alpha5Associations: [UInt8] = [0x00, 0x05, 0x04, 0x04, 0x06, 0x88, 0x07]
    // iref entry: auxl from 6 to 3 (size 14, version 0 ids).
    static let auxl6: [UInt8] = [0x00, 0x00, 0x00, 0x0E] + Array("auxl".utf8) + [0x00, 0x06, 0x00, 0x01, 0x00, 0x03]

    @Test func layoutIsFound() throws {
        let data = try Self.file()
        try data.withUnsafeBytes { raw in
            let alpha = try #require(AVIFTileAlpha(raw, codec: AVIFDecoder()))
            #expect(alpha.alphaIDs == [5, 6])
            #expect(alpha.columns == 1)
            #expect(alpha.tileSize == PixelSize(width: 80, height: 64))
            #expect(!alpha.isPremultiplied)
        }
    }

    @Test func alphaMatchesTheReference() throws {
        // When the file is decoded with the default options
        let image = try AVIFDecoder().decode(Self.file(), options: DecodingOptions()).image
        let reference = try Self.reference()

        // Then it has the reference's alpha (not opaque), and its colour and alpha match within the tolerance
        #expect(image.size == reference.size)
        #expect(image.hasTransparency)
        let transparent = (0..<image.height).reduce(0) { sum, y in
            sum + (0..<image.width).filter { image[pixel: $0, y].a < 255 }.count
        }
        #expect(transparent > image.width * image.height / 10)
        #expect(Self.alphaError(image, reference) <= AVIFConformanceTests.tolerance)
        #expect(referenceError(image, reference) <= AVIFConformanceTests.tolerance)
    }

    @Test func downsampledDecodeKeepsTheAlpha() throws {
        let full = try AVIFDecoder().decode(Self.file(), options: DecodingOptions()).image
        let target = PixelSize(width: full.width / 2, height: full.height / 2)
        let half = try AVIFDecoder().decode(Self.file(), options: DecodingOptions(targetSize: target)).image
        #expect(half.size == target)
        #expect(Self.alphaError(half, try full.resampled(to: target)) <= 1)
    }

    @Test func eachAlphaItemDecodesAloneAsItsTile() throws {
        // Given the one-item files made of the alpha items
        let data = try Self.file()
        let reference = try Self.reference()
        try data.withUnsafeBytes { raw in
            let alpha = try #require(AVIFTileAlpha(raw, codec: AVIFDecoder()))
            for (index, item) in alpha.alphaIDs.enumerated() {
                let file = try #require(alpha.singleItemFile(item))

                // When each is decoded as an AVIF of its own (a grey image: its luma is the alpha)
                let tile = try AVIFDecoder().decode(Data(file), options: DecodingOptions()).image

                // Then it has the tile's size, and its grey is the reference's alpha at the tile's place (the
                // grid is 80x80 in tiles of 80x64: the second tile's last 48 rows are outside the image)
                #expect(tile.size == alpha.tileSize)
                let x0 = index % alpha.columns * alpha.tileSize.width
                let y0 = index / alpha.columns * alpha.tileSize.height
                let shown = (
                    width: min(tile.width, reference.width - x0), height: min(tile.height, reference.height - y0)
                )
                var total = 0
                for y in 0..<shown.height {
                    for x in 0..<shown.width {
                        total += abs(Int(tile[pixel: x, y].r) - Int(reference[pixel: x0 + x, y0 + y].a))
                    }
                }
                #expect(Double(total) / Double(shown.width * shown.height) <= AVIFConformanceTests.tolerance)
            }
        }
    }

    /// The file with a `prem` reference from the grid to both alpha items appended to `iref`: 16 bytes more in
    /// `meta` and `iref`, and every `iloc` offset (version 0, five records of 14 bytes from byte 114, the offset 6
    /// bytes in) 16 further on.
    static func withPremultipliedAlpha(_ data: Data) -> Data {
        var bytes = [UInt8](data)
        func add16(at: Int) {
            let value = bytes[at..<(at + 4)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) } + 16
            bytes.replaceSubrange(at..<(at + 4), with: withUnsafeBytes(of: value.bigEndian, Array.init))
        }
        for record in 0..<5 { add16(at: 114 + 14 * record + 6) }
        add16(at: 32)  // meta
        add16(at: 328)  // iref
        let prem: [UInt8] = [0, 0, 0, 16] + Array("prem".utf8) + [0, 1, 0, 2, 0, 5, 0, 6]
        bytes.insert(contentsOf: prem, at: 328 + 56)
        return Data(bytes)
    }

    @Test func premultipliedTileAlphaIsUnpremultiplied() throws {
        // Given the file, and the same file saying its colour is premultiplied by the tiles' alpha
        let straight = try AVIFDecoder().decode(Self.file(), options: DecodingOptions()).image
        let data = Self.withPremultipliedAlpha(try Self.file())
        let isPremultiplied = data.withUnsafeBytes { AVIFTileAlpha($0, codec: AVIFDecoder())?.isPremultiplied }
        #expect(isPremultiplied == true)

        // When it is decoded
        let image = try AVIFDecoder().decode(data, options: DecodingOptions()).image

        // Then the alpha is the same, and where it is partial the colour is divided by it (c x 255 / a)
        #expect(Self.alphaError(image, straight) == 0)
        var partial = 0
        var worst = 0
        for y in 0..<image.height {
            for x in 0..<image.width {
                let (p, q) = (image[pixel: x, y], straight[pixel: x, y])
                guard q.a >= 32, q.a < 255 else { continue }
                partial += 1
                for (c, s) in [(p.r, q.r), (p.g, q.g), (p.b, q.b)] {
                    let expected = min(255, (Int(s) * 255 + Int(q.a) / 2) / Int(q.a))
                    worst = max(worst, abs(Int(c) - expected))
                }
            }
        }
        #expect(partial > 100)
        #expect(worst <= 1)
    }

    @Test(arguments: [(8, false), (10, false), (8, true)])
    func eachTilesAlphaLandsInItsPlace(depth: Int, isLimited: Bool) throws {
        // Given a 2x2 grid of 72x64 tiles (MIAF's smallest is 64) cut to 128x100 (the right column and the bottom
        // row are partly outside),
        // each tile with its own lossless alpha item of `depth` bits in full or limited range, a pattern per tile
        let fixture = AVIFGridFixture(
            rows: 2, columns: 2, tileWidth: 72, tileHeight: 64, width: 128, height: 100, alphaDepth: depth,
            alphaIsLimited: isLimited)
        let data = try fixture.file()

        // When it is decoded
        let image = try AVIFDecoder().decode(data, options: DecodingOptions()).image

        // Then every pixel's alpha is its tile's sample, expanded to full range and scaled to 8 bits
        #expect(image.size == PixelSize(width: 128, height: 100))
        let max = (1 << depth) - 1
        var mismatches: [String] = []
        for y in 0..<image.height {
            for x in 0..<image.width {
                let tile = y / 64 * 2 + x / 72
                var value = fixture.alphaSample(tile: tile, x: x % 72, y: y % 64)
                if isLimited {
                    value = Swift.max(0, Swift.min(max, (value - (16 << (depth - 8))) * max / (219 << (depth - 8))))
                }
                let expected = (value * 255 + max / 2) / max
                if Int(image[pixel: x, y].a) != expected {
                    mismatches.append("(\(x), \(y)) \(image[pixel: x, y].a) ≠ \(expected)")
                }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) pixels, first \(mismatches.prefix(4))")
    }

    @Test func aTileWithoutAlphaLeavesTheImageOpaque() throws {
        // Given the file with the second alpha item's auxl turned into another reference type
        var bad = Self.auxl6
        bad.replaceSubrange(4..<8, with: Array("cdsc".utf8))
        let data = try Self.patched(Self.file(), Self.auxl6, bad)

        // When decoded, then it is opaque, as libavif 1.x returns it, and its colour is unchanged
        let image = try AVIFDecoder().decode(data, options: DecodingOptions()).image
        #expect(image.isKnownOpaque)
        let whole = try AVIFDecoder().decode(Self.file(), options: DecodingOptions()).image
        var sameColour = true
        for y in 0..<image.height {
            for x in 0..<image.width where whole[pixel: x, y].a == 255 {
                let (p, q) = (image[pixel: x, y], whole[pixel: x, y])
                if (p.r, p.g, p.b) != (q.r, q.g, q.b) { sameColour = false }
            }
        }
        #expect(sameColour)
    }

    @Test func anAlphaTileOfAnotherSizeIsCorrupt() throws {
        // Given the file with alpha item 5 associated with the grid's ispe (property 1) instead of the tile's
        var bad = Self.alpha5Associations
        bad[3] = 0x01
        let data = try Self.patched(Self.file(), Self.alpha5Associations, bad)

        // When decoded, then it fails with a typed error naming the tile
        #expect {
            try AVIFDecoder().decode(data, options: DecodingOptions())
        } throws: { error in
            guard case CodecError.corrupt(.avif, let reason) = error else { return false }
            return reason.contains("alpha item of grid tile 0")
        }
    }

    @Test func alphaItemsThatTogetherOutgrowTheFileAreCorrupt() throws {
        // Given the file with both alpha items' iloc extents (0x27b + 0x24d, 0x4c8 + 0xf3) moved over the whole file:
        // each within it, together twice its size (up to 65,536 tiles could each have copied the file out)
        let data = try Self.file()
        let whole: [UInt8] = [0, 0, 0, 0] + withUnsafeBytes(of: UInt32(data.count).bigEndian, Array.init)
        let first = try Self.patched(data, [0, 0, 0x02, 0x7B, 0, 0, 0x02, 0x4D], whole)
        let both = try Self.patched(first, [0, 0, 0x04, 0xC8, 0, 0, 0, 0xF3], whole)

        // When decoded, then it fails with a typed error saying so, before any alpha item is copied out
        #expect(
            throws: CodecError.corrupt(
                format: .avif, reason: "the grid's alpha items together are larger than the file")
        ) {
            try AVIFDecoder().decode(both, options: DecodingOptions())
        }
    }

    @Test func anUndecodableAlphaTileIsCorrupt() throws {
        // Given the file with the first alpha item's AV1 bytes overwritten with zeros
        let data = try Self.file()
        let zeroed = try data.withUnsafeBytes { raw -> Data in
            let items = try #require(ISOBMFFItems(raw))
            let extent = try #require(items.locations[5]?.extents.first)
            var bytes = [UInt8](data)
            bytes.replaceSubrange(extent, with: [UInt8](repeating: 0, count: extent.count))
            return Data(bytes)
        }

        // When decoded, then it fails with a CodecError (dav1d rejects the tile), not a crash or an opaque image
        #expect(throws: CodecError.self) { try AVIFDecoder().decode(zeroed, options: DecodingOptions()) }
    }

    @Test func truncatedAndFlippedVariantsDecodeOrFailCleanly() throws {
        // Given the file truncated at 40 points and with 300 sets of random byte flips (fixed seed), most inside
        // the meta box that the tile alpha's reader parses
        let data = try Self.file()
        var variants: [Data] = (1...40).map { data.prefix(data.count * $0 / 41) }
        var rng = ImagoTesting.SeededGenerator(state: 20_261_203)
        for round in 0..<300 {
            var bytes = [UInt8](data)
            let range = round % 3 == 0 ? 0..<bytes.count : 32..<619  // meta is bytes 32..<619
            for _ in 0..<Int.random(in: 1...6, using: &rng) {
                bytes[Int.random(in: range, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
            }
            variants.append(Data(bytes))
        }

        // When each is decoded, then each decodes or throws a CodecError
        var foreign: [String] = []
        var decoded = 0
        for variant in variants {
            do {
                _ = try AVIFDecoder().decode(variant, options: DecodingOptions(pixelLimit: 4_000_000))
                decoded += 1
            } catch is CodecError {
            } catch {
                foreign.append("\(error)")
            }
        }
        #expect(foreign.isEmpty, "\(foreign.prefix(3))")
        #expect(decoded > 0)
    }
}
