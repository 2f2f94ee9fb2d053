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
            let canvas = try #require(ISOBMFFItems.DeclaredItems(raw)?.largestDerivedCanvas())
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

/// A canvas cannot hide behind a `meta` box that libraries read differently: duplicate entries, two `iloc` or
/// `idat` boxes, field sizes only libheif accepts, overlapping extents.
extension ISOBMFFItemsTests {
    /// Where the two grid payloads of ``fileWithGrid(infe:iloc:idats:)`` start: a 60000×60000 one and a 64×64 one,
    /// 8 bytes each, at the start of an `mdat` placed before the `meta`.
    static let hugeGridAt: UInt32 = 32
    static let smallGridAt: UInt32 = 40

    /// `ftyp`, an `mdat` holding the two grid payloads, then a `meta` with `pitm`, an `iinf` of `infe` entries
    /// (ID, type), the `iloc` given, an `idat` for each of `idats`, and the `trailing` boxes.
    static func fileWithGrid(
        infe: [(UInt16, String)], iloc: ISOBMFFBox, idats: [[UInt8]] = [], trailing: [ISOBMFFBox] = []
    ) -> [UInt8] {
        var ftyp = ISOBMFFBox("ftyp")
        ftyp.bytes += Array("heic".utf8) + [0, 0, 0, 0] + Array("mif1heic".utf8)
        var mdat = ISOBMFFBox("mdat")
        mdat.bytes = grid(60_000) + grid(64)
        var iinf = ISOBMFFBox("iinf", version: 0)
        iinf.append(UInt16(infe.count))
        for (id, type) in infe {
            var entry = ISOBMFFBox("infe", version: 2)
            entry.append(id, UInt16(0))
            entry.bytes += Array(type.utf8) + [0]
            iinf.bytes += entry.encoded
        }
        var meta = ISOBMFFBox("meta", version: 0)
        meta.bytes += ISOBMFFBox.primaryItem(7).encoded + iinf.encoded + iloc.encoded
        for body in idats {
            var idat = ISOBMFFBox("idat")
            idat.bytes = body
            meta.bytes += idat.encoded
        }
        for box in trailing { meta.bytes += box.encoded }
        let file = ftyp.encoded + mdat.encoded + meta.encoded
        precondition(file[Int(hugeGridAt)..<Int(hugeGridAt) + 8] == grid(60_000)[...])
        return file
    }

    /// A grid's payload (version 0, 16-bit sizes, one tile) declaring a `side` × `side` canvas.
    static func grid(_ side: UInt16) -> [UInt8] {
        [0, 0, 0, 0, UInt8(side >> 8), UInt8(side & 0xFF)] + [UInt8(side >> 8), UInt8(side & 0xFF)]
    }

    /// An `iloc` of `version` with the sizes nibbles `sizes` and the bytes of its entries.
    static func iloc(version: UInt8, sizes: UInt16, count: UInt16, entries: [any FixedWidthInteger]) -> ISOBMFFBox {
        var box = ISOBMFFBox("iloc", version: version)
        box.append(sizes, count)
        for value in entries { box.append(value) }
        return box
    }

    @Test func aCanvasIsSeenHoweverALibraryReadsTheItems() throws {
        let plain = Self.iloc(
            version: 0, sizes: 0x4400, count: 1, entries: [UInt16(7), UInt16(0), UInt16(1), Self.hugeGridAt, UInt32(8)])
        let files: [(String, [UInt8])] = [
            // One ID typed twice: libheif 1.15 takes the first entry, libavif (and ISOBMFFItems) the last
            ("grid typed, then hvc1", Self.fileWithGrid(infe: [(7, "grid"), (7, "hvc1")], iloc: plain)),
            ("hvc1 typed, then grid", Self.fileWithGrid(infe: [(7, "hvc1"), (7, "grid")], iloc: plain)),
            // Two locations for one ID: libheif takes the first
            (
                "two iloc entries",
                Self.fileWithGrid(
                    infe: [(7, "grid")],
                    iloc: Self.iloc(
                        version: 0, sizes: 0x4400, count: 2,
                        entries: [
                            UInt16(7), UInt16(0), UInt16(1), Self.hugeGridAt, UInt32(8),
                            UInt16(7), UInt16(0), UInt16(1), Self.smallGridAt, UInt32(8),
                        ]))
            ),
            // Version 1 with an index size: the specification reads an index before each offset, libheif 1.15
            // none before version 2 (here: offset 32, length 8, then 4 bytes it ignores)
            (
                "iloc 1 with an index size",
                Self.fileWithGrid(
                    infe: [(7, "grid")],
                    iloc: Self.iloc(
                        version: 1, sizes: 0x4404, count: 1,
                        entries: [UInt16(7), UInt16(0), UInt16(0), UInt16(1), Self.hugeGridAt, UInt32(8), UInt32(8)]))
            ),
            // An offset field of 2 bytes: not in the specification (the box is unreadable); libheif reads it as 0
            // from no bytes, so the base offset alone places the item
            (
                "a 2-byte offset field",
                Self.fileWithGrid(
                    infe: [(7, "grid")],
                    iloc: Self.iloc(
                        version: 1, sizes: 0x2440, count: 1,
                        entries: [UInt16(7), UInt16(0), UInt16(0), Self.hugeGridAt, UInt16(1), UInt32(8)]))
            ),
            // An item in idat with two idat boxes: libheif reads the first, ISOBMFFItems the last
            (
                "two idat boxes",
                Self.fileWithGrid(
                    infe: [(7, "grid")],
                    iloc: Self.iloc(
                        version: 1, sizes: 0x4400, count: 1,
                        entries: [UInt16(7), UInt16(1), UInt16(0), UInt16(1), UInt32(0), UInt32(8)]),
                    idats: [Self.grid(60_000), Self.grid(64)])
            ),
        ]
        // And extents that overlap past the file's size (libheif reads them; ISOBMFFItems counts the item corrupt)
        let overlapping = { (length: UInt32) in
            Self.fileWithGrid(
                infe: [(7, "grid")],
                iloc: Self.iloc(
                    version: 0, sizes: 0x4400, count: 1,
                    entries: [UInt16(7), UInt16(0), UInt16(2), Self.hugeGridAt, UInt32(8), UInt32(0), length]))
        }
        let cases = files + [("overlapping extents", overlapping(UInt32(overlapping(0).count)))]
        for (name, file) in cases {
            file.withUnsafeBytes { raw in
                // When the largest declared canvas is read, Then it is the 60000×60000 one, however read
                let canvas = ISOBMFFItems.DeclaredItems(raw)?.largestDerivedCanvas()
                #expect(canvas.map { $0 == (60_000, 60_000) } == true, "\(name)")
            }
            // And the decoder refuses the file by it
            #expect(throws: CodecError.tooManyPixels(width: 60_000, height: 60_000, limit: 100_000_000), "\(name)") {
                try HEIFDecoder().decode(Data(file), options: DecodingOptions())
            }
        }
        // While a file read one way only, with the small grid, passes the check
        let small = Self.fileWithGrid(
            infe: [(7, "grid")],
            iloc: Self.iloc(
                version: 0, sizes: 0x4400, count: 1,
                entries: [UInt16(7), UInt16(0), UInt16(1), Self.smallGridAt, UInt32(8)]))
        small.withUnsafeBytes {
            #expect(ISOBMFFItems.DeclaredItems($0)?.largestDerivedCanvas().map { $0 == (64, 64) } == true)
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func extentsOfNoBytesAreReadOnceHoweverManyAreDeclared() throws {
        // Given an iloc whose offset and length fields have no bytes, with 20,000 items each declaring 65,535
        // extents (6 bytes an item: read extent by extent, 1.3 billion ranges, 21 GB)
        let count = 20_000
        var entries: [any FixedWidthInteger] = []
        for id in 1...count { entries += [UInt16(id), UInt16(0), UInt16(65_535)] }
        let file = Self.fileWithGrid(
            infe: [(7, "grid")], iloc: Self.iloc(version: 0, sizes: 0x0000, count: UInt16(count), entries: entries))
        try file.withUnsafeBytes { raw in
            // When its items are read, Then each has the one empty extent, read in a moment
            let started = ContinuousClock.now
            let items = try #require(ISOBMFFItems(raw))
            #expect(items.locations.count == count)
            #expect(items.locations[7]?.extents == [0..<0])
            #expect(items.data(of: 7) == [])
            #expect(ISOBMFFItems.DeclaredItems(raw)?.largestDerivedCanvas() == nil)  // no bytes declare a size
            #expect(ContinuousClock.now - started < .seconds(2))
        }
    }
}

/// What a `meta` box may name before a library's parse of it costs more than the file's size suggests.
extension ISOBMFFItemsTests {
    /// `DeclaredItems.checkCounts` of `file` as an AVIF: `nil` when it passes, else the error's reason.
    static func countsRefusal(_ file: [UInt8]) -> String? {
        file.withUnsafeBytes { raw in
            do throws(CodecError) {
                try ISOBMFFItems.DeclaredItems(raw)?.checkCounts(format: .avif)
                return nil
            } catch {
                guard case .corrupt(_, let reason) = error else { return "\(error)" }
                return reason
            }
        }
    }

    /// An `iloc` (version 2) of `count` items with IDs from 1, each without extents.
    static func manyItems(_ count: Int) -> ISOBMFFBox {
        var box = ISOBMFFBox("iloc", version: 2)
        box.append(UInt16(0x4400), UInt32(count))
        for id in 1...count { box.append(UInt32(id), UInt16(0), UInt16(0), UInt16(0)) }
        return box
    }

    @Test(.timeLimit(.minutes(1)))
    func aMetaBoxNamesAtMost20000ItemsAndNoPileOfEmptyExtents() throws {
        // Given files whose meta names 20,000 items, then 20,001 (libavif 0.11 finds each by a linear search and
        // makes each it does not find: a million took minutes)
        #expect(Self.countsRefusal(Self.fileWithGrid(infe: [(7, "grid")], iloc: Self.manyItems(20_000))) == nil)
        #expect(
            Self.countsRefusal(Self.fileWithGrid(infe: [(7, "grid")], iloc: Self.manyItems(20_001)))
                == "the file names more than 20000 items")
        // And one naming two items 100,001 times, in iref
        var iref = ISOBMFFBox("iref", version: 0)
        for _ in 0..<2 {
            var dimg = ISOBMFFBox("dimg")
            dimg.append(UInt16(7), UInt16(50_000))
            for _ in 0..<50_000 { dimg.append(UInt16(8)) }
            iref.bytes += dimg.encoded
        }
        let plain = Self.iloc(
            version: 0, sizes: 0x4400, count: 1,
            entries: [UInt16(7), UInt16(0), UInt16(1), Self.smallGridAt, UInt32(8)])
        let referenced = Self.fileWithGrid(infe: [(7, "grid")], iloc: plain, trailing: [iref])
        #expect(Self.countsRefusal(referenced) == "the file names more than 100000 item references")
        // And an item declaring 65,535 extents whose fields have no bytes (libavif keeps each: 16 bytes apiece)
        let empty = Self.fileWithGrid(
            infe: [(7, "grid")],
            iloc: Self.iloc(version: 0, sizes: 0x0000, count: 1, entries: [UInt16(7), UInt16(0), UInt16(65_535)]))
        #expect(Self.countsRefusal(empty) == "item 7 declares 65535 extents of no bytes")
        // While one empty extent is the specification's "the whole file", and passes
        let one = Self.fileWithGrid(
            infe: [(7, "grid")],
            iloc: Self.iloc(version: 0, sizes: 0x0000, count: 1, entries: [UInt16(7), UInt16(0), UInt16(1)]))
        #expect(Self.countsRefusal(one) == nil)
        // And the decoders refuse such files before their library reads them
        #expect(throws: CodecError.corrupt(format: .avif, reason: "item 7 declares 65535 extents of no bytes")) {
            try AVIFDecoder().decode(Data(empty), options: DecodingOptions())
        }
        #expect(throws: CodecError.corrupt(format: .heic, reason: "the file names more than 20000 items")) {
            try HEIFDecoder().decode(
                Data(Self.fileWithGrid(infe: [(7, "grid")], iloc: Self.manyItems(20_001))), options: DecodingOptions())
        }
        // And real files pass: every AVIF and HEIC of the corpus
        for folder in ["avif", "heic"] {
            for file in try FileManager.default.contentsOfDirectory(
                at: corpusURL(folder), includingPropertiesForKeys: nil)
            where ["avif", "heic", "heif"].contains(file.pathExtension) {
                let data = try Data(contentsOf: file)
                #expect(Self.countsRefusal(Array(data)) == nil, "\(file.lastPathComponent)")
            }
        }
    }
}
