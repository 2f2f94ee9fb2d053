import Foundation
import ImagoCore
import Testing

@testable import ImagoCodecs

/// The `meta` reader behind `AVIFTileAlpha`: the items of a real file, and extents that would make it read or
/// copy more than the file.
@Suite struct ISOBMFFItemsTests {
    @Test func readsTheItemsOfAGridWithTileAlpha() throws {
        // Given the corpus grid with per-tile alpha (items 1 grid, 2 and 3 tiles, 5 and 6 their alpha)
        let data = try Data(
            contentsOf: corpusURL("avif").appendingPathComponent("libavif-color_grid_alpha_nogrid.avif"))
        try data.withUnsafeBytes { raw in
            // When its meta box is read
            let items = try #require(ISOBMFFItems(raw))

            // Then the primary item, types, references, properties and locations are the file's
            #expect(items.primaryID == 1)
            #expect(items.types == [1: "grid", 2: "av01", 3: "av01", 5: "av01", 6: "av01"])
            #expect(items.referenced("dimg", from: 1) == [2, 3])
            #expect(items.referrers("auxl") == [2: [5], 3: [6]])
            #expect(items.spatialExtent(of: 1)! == (80, 80))
            #expect(items.spatialExtent(of: 5)! == (80, 64))
            #expect(items.auxiliaryType(of: 5) == AVIFTileAlpha.alphaType)
            #expect(items.auxiliaryType(of: 2) == nil)
            let extents = try #require(items.locations[5]?.extents)
            #expect(items.data(of: 5) == Array(data[extents[0]]))
            #expect(items.data(of: 4) == nil)  // no such item
        }
    }

    /// A file that is only a `meta` box with an `iloc` (version `version`) giving item 1 `extents` copies of
    /// the whole file.
    static func metaWithExtents(_ extents: Int, version: UInt8 = 0) -> [UInt8] {
        let ilocSize = 8 + 4 + 2 + 2 + 6 + 8 * extents
        let metaSize = 8 + 4 + ilocSize
        func be(_ value: Int, _ bytes: Int) -> [UInt8] {
            (0..<bytes).map { UInt8(truncatingIfNeeded: value >> (8 * (bytes - 1 - $0))) }
        }
        var file = be(metaSize, 4) + Array("meta".utf8) + [0, 0, 0, 0]
        file += be(ilocSize, 4) + Array("iloc".utf8) + [version, 0, 0, 0] + [0x44, 0x00] + be(1, 2)
        file += be(1, 2) + be(0, 2) + be(extents, 2)
        for _ in 0..<extents { file += be(0, 4) + be(metaSize, 4) }
        return file
    }

    @Test func anItemIsTheFileAtMost() throws {
        // Given item 1 as one extent of the whole file, and as three (overlapping) ones
        for (extents, expected) in [(1, true), (3, false)] {
            let file = Self.metaWithExtents(extents)
            try file.withUnsafeBytes { raw in
                let items = try #require(ISOBMFFItems(raw))
                // Then one extent reads the file; three would copy three times the file and read as nothing
                #expect((items.data(of: 1) == file) == expected)
                #expect((items.data(of: 1) == nil) == !expected)
            }
        }
    }

    @Test func unknownVersionsAndTruncationsReadAsNothing() {
        // An iloc of version 3 (unknown) and every truncation of a valid meta box: no reader, or no item data
        let unknown = Self.metaWithExtents(1, version: 3)
        unknown.withUnsafeBytes { #expect(ISOBMFFItems($0) == nil) }
        let file = Self.metaWithExtents(1)
        for length in 0..<file.count {
            let prefix = Array(file.prefix(length))
            prefix.withUnsafeBytes { raw in
                #expect(ISOBMFFItems(raw)?.data(of: 1) == nil)
            }
        }
    }
}

/// What `ISOBMFFItems` copies stays proportional to what is asked, whatever the file's items claim.
extension ISOBMFFItemsTests {
    /// A HEIF whose `iinf` lists `count` grid items and whose `iloc` places every one of them over the whole file
    /// (4 MiB of `mdat` after the `meta`): legal extents, each within the file, all overlapping.
    static func manyOverlappingGrids(count: Int) -> [UInt8] {
        // The iloc's lengths are 4-byte fields, so the file's size does not depend on them: made once to measure.
        func file(itemLength: Int) -> [UInt8] {
            var ftyp = ISOBMFFBox("ftyp")
            ftyp.bytes += Array("heic".utf8) + [0, 0, 0, 0] + Array("mif1heic".utf8)
            var iinf = ISOBMFFBox("iinf", version: 0)
            iinf.append(UInt16(count))
            var iloc = ISOBMFFBox("iloc", version: 0)
            iloc.append(UInt8(0x44), UInt8(0), UInt16(count))
            for id in 1...count {
                var infe = ISOBMFFBox("infe", version: 2)
                infe.append(UInt16(id), UInt16(0))
                infe.bytes += Array("grid\0".utf8)
                iinf.bytes += infe.encoded
                iloc.append(UInt16(id), UInt16(0), UInt16(1), UInt32(0), UInt32(itemLength))
            }
            var meta = ISOBMFFBox("meta", version: 0)
            meta.bytes += ISOBMFFBox.primaryItem(1).encoded + iinf.encoded + iloc.encoded
            let mdatBody = 4 << 20
            let mdatHeader = withUnsafeBytes(of: UInt32(mdatBody + 8).bigEndian, Array.init) + Array("mdat".utf8)
            return ftyp.encoded + meta.encoded + mdatHeader + [UInt8](repeating: 0, count: mdatBody)
        }
        return file(itemLength: file(itemLength: 0).count)
    }

    @Test(.timeLimit(.minutes(1)))
    func aCanvasCheckReadsEachItemsStartNotTheFileEachTime() throws {
        // Given 20,000 grid items, each spanning the whole 4.8 MB file (the canvas check copied every item whole: 96 GB)
        let file = Self.manyOverlappingGrids(count: 20_000)
        try file.withUnsafeBytes { raw in
            let items = try #require(ISOBMFFItems(raw))
            #expect(items.types.count == 20_000)
            #expect(items.length(of: 7) == file.count && items.data(of: 7, prefix: 20) == Array(file.prefix(20)))
            // When the largest declared canvas is read, Then it takes a moment: 20 bytes of each item
            let started = ContinuousClock.now
            let canvas = try #require(items.largestDerivedCanvas())
            #expect(ContinuousClock.now - started < .seconds(2))
            // (the file's first bytes read as a grid: "ft" × "yp")
            #expect(canvas.width == 0x6674 && canvas.height == 0x7970)
        }
        // And the decoder refuses it by that size, as quickly
        let started = ContinuousClock.now
        #expect(throws: CodecError.tooManyPixels(width: 0x6674, height: 0x7970, limit: 100_000_000)) {
            try HEIFDecoder().decode(Data(file), options: DecodingOptions())
        }
        #expect(ContinuousClock.now - started < .seconds(5))
    }
}
