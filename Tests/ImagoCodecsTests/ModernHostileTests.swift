import Foundation
import ImagoCodecs
import ImagoCore
import Testing

/// Every AVIF and HEIC file of `../shared/corpus/hostile-modern` against `expectations.json`: crafted and empty
/// files fail with a typed ``CodecError``; truncated files fail or return only complete frames; `malformed-*`
/// files decode or fail. None may crash or hang (peak RSS of each, in its own process: `scripts/hostile-rss.sh`,
/// figures in RELIABILITY.md).
@Suite struct ModernHostileTests {
    struct Expectation: Decodable {
        var expect: String
        var what: String?
    }

    static func expectations() throws -> [String: Expectation] {
        try JSONDecoder().decode(
            [String: Expectation].self,
            from: Data(contentsOf: corpusURL("hostile-modern").appendingPathComponent("expectations.json")))
    }

    static let files: [String] = {
        let names =
            (try? FileManager.default.contentsOfDirectory(atPath: corpusURL("hostile-modern").path)) ?? []
        return names.filter { $0.hasSuffix(".avif") || $0.hasSuffix(".heic") }.sorted()
    }()

    @Test func everyAVIFAndHEICFileIsCovered() throws {
        // 34 AVIF/HEIC files in the corpus as shipped; an empty list would make the sweep vacuous
        #expect(Self.files.count == 34)
        let expectations = try Self.expectations()
        #expect(Self.files.allSatisfy { expectations[$0] != nil })
    }

    @Test(.timeLimit(.minutes(1)), arguments: files)
    func fileFailsTypedOrDecodesWhatIsComplete(_ name: String) throws {
        // Given a hostile file and what the corpus expects of it
        let data = try Data(contentsOf: corpusURL("hostile-modern").appendingPathComponent(name))
        let expectation = try #require(try Self.expectations()[name])
        let decoder: any ImageDecoding = name.hasSuffix(".avif") ? AVIFDecoder() : HEIFDecoder()

        // When decoded with the default options
        let outcome: Result<ImageContainer, CodecError> = Result {
            try decoder.decode(data, options: DecodingOptions())
        }
        .mapError { $0 as? CodecError ?? .corrupt(format: .unknown, reason: "untyped: \($0)") }

        // Then it fails with a typed error where it must, and never returns frames that are not complete
        switch outcome {
        case .failure(let error):
            print("hostile-modern \(name): \(error)")
            if case .corrupt(.unknown, let reason) = error { Issue.record("untyped error for \(name): \(reason)") }
            if name.hasPrefix("ispe-100000x100000") {
                #expect(error == .tooManyPixels(width: 100_000, height: 100_000, limit: 100_000_000))
            }
            if name.hasPrefix("empty") { #expect(error == .empty) }
        case .success(let container):
            print("hostile-modern \(name): decoded \(container.frames.count) frame(s) \(container.image.size)")
            #expect(expectation.expect != "fail", "\(name) must fail")
            // A truncated 4-frame sequence may return only the frames that were complete
            if name.contains("anim-4frames") { #expect(container.frames.count <= 4) }
        }
    }
}

/// The fuzzers' findings (Tests/Fuzz/avif, Tests/Fuzz/heif), replayed: each fails with a typed error, quickly.
/// Valid inputs saved to steer `fuzz-replay` down a path (named `seed-*`) are not findings.
@Suite struct ModernFuzzFindingTests {
    static func findings(_ target: String, includingSeeds: Bool = false, filePath: String = #filePath) -> [URL] {
        let folder = URL(fileURLWithPath: filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fuzz/\(target)")
        return ((try? FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)) ?? [])
            .filter { includingSeeds || !$0.lastPathComponent.hasPrefix("seed-") }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    @Test(.timeLimit(.minutes(1)))
    func heifAlphaOverlayIsRefusedBeforeLibheifAllocatesIt() throws {
        // Given the fuzzed gen-kodim12-alpha.heic whose alpha item was retyped `iovl` (libheif 1.15 allocated
        // 1.2 GB for its canvas)
        let files = Self.findings("heif")
        #expect(!files.isEmpty)
        for file in files {
            // When decoded, Then it is refused up front with a typed error
            let started = ContinuousClock.now
            #expect(throws: CodecError.self) {
                try HEIFDecoder().decode(Data(contentsOf: file), options: DecodingOptions())
            }
            #expect(ContinuousClock.now - started < .seconds(5))
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func aDerivedImagesCanvasIsCheckedAsItsOwnBytesDeclareIt() throws {
        // Given the fuzzer's 22 KB HEIC whose primary 64×64 image has a thumbnail that is a grid over an overlay
        // (`iovl`) declaring a 61029×55606 canvas in its bytes, under a 64×64 `ispe` (libheif 1.15 allocated it
        // and, past 2³¹ bytes, wrote beyond what it had allocated: `imago fetch --resize` crashed with SIGSEGV)
        let file = try #require(Self.findings("heif").first { $0.lastPathComponent.hasPrefix("oom-derived-canvas") })
        let data = try Data(contentsOf: file)
        // When decoded for a small target (which picks the thumbnail) or at full size, Then the canvas is refused
        // before libheif reads the file, whichever image would be decoded
        for options in [
            DecodingOptions(targetSize: PixelSize(width: 37, height: 23), pixelLimit: 4_000_000),
            DecodingOptions(),
        ] {
            let started = ContinuousClock.now
            #expect(throws: CodecError.tooManyPixels(width: 61029, height: 55606, limit: options.pixelLimit)) {
                try HEIFDecoder().decode(data, options: options)
            }
            #expect(ContinuousClock.now - started < .seconds(5))
        }
        // And the same file with a later entry retyping the overlay as `hvc1` (libheif 1.15 keeps an ID's first
        // entry, the check read the last: past it, libheif allocated the canvas and the process died of SIGSEGV)
        let retyped = try #require(
            Self.findings("heif").first { $0.lastPathComponent.hasPrefix("crash-duplicate-infe") })
        #expect(throws: CodecError.tooManyPixels(width: 61029, height: 55606, limit: 4_000_000)) {
            try HEIFDecoder().decode(
                Data(contentsOf: retyped),
                options: DecodingOptions(targetSize: PixelSize(width: 37, height: 23), pixelLimit: 4_000_000))
        }
        // And a canvas of 3383161043×2985422264, whose pixel count overflows 64 bits (the first version of the check
        // trapped on it), is refused the same way
        let overflowing = try #require(
            Self.findings("heif").first { $0.lastPathComponent.hasPrefix("crash-canvas-overflow") })
        #expect(throws: CodecError.tooManyPixels(width: 3_383_161_043, height: 2_985_422_264, limit: 100_000_000)) {
            try HEIFDecoder().decode(Data(contentsOf: overflowing), options: DecodingOptions())
        }
        // And a real grid (pillow-heif's, 1025×900; its largest item, another image, is 932×1044) still decodes
        // under a limit of its largest item's size (libavcodec's check, with the width rounded up to its stride
        // alignment, refused a tile there as "no picture")
        let grid = try corpusData("heic/pillowheif-empty_icc.heic")
        let decoded = try HEIFDecoder().decode(grid, options: DecodingOptions(pixelLimit: 932 * 1044))
        #expect(decoded.image.size == PixelSize(width: 1025, height: 900))
    }

    @Test(.timeLimit(.minutes(1)))
    func anOverlayPlacingAnImageAtANegativeOffsetIsRefused() throws {
        // Given the isobmff fuzz target's 792-byte HEIC: overlay 5 places its 64×64 tile at (0, −1) on a 64×64
        // canvas (Debian's libheif 1.15.1 copied a row from past the tile's planes into the output: ASan's
        // heap-buffer-overflow, heap bytes in the picture without it)
        let data = try Data(
            contentsOf: #require(Self.findings("heif").first { $0.lastPathComponent.contains("negative-offset") }))
        func placed(_ x: Int16, _ y: Int16) throws -> Data {
            // the overlay's one offset pair: the last 4 bytes of its 18-byte entry in idat
            let idat = try #require(data.firstRange(of: Data("idat".utf8)))
            var copy = data
            copy.replaceSubrange(
                (idat.upperBound + 14)..<(idat.upperBound + 18),
                with: [
                    UInt8(UInt16(bitPattern: x) >> 8), UInt8(UInt16(bitPattern: x) & 0xFF),
                    UInt8(UInt16(bitPattern: y) >> 8), UInt8(UInt16(bitPattern: y) & 0xFF),
                ])
            return copy
        }
        #expect(try placed(0, -1) == data)
        // When decoded, Then it is refused before libheif composes it, and so are the columns libheif read past
        // (−17 on this canvas)
        #expect(
            throws: CodecError.corrupt(
                format: .heic,
                reason:
                    "overlay 5 places an image at a negative vertical offset (-1), which libheif 1.15 reads out of bounds"
            )
        ) { try HEIFDecoder().decode(data, options: DecodingOptions()) }
        #expect(
            throws: CodecError.corrupt(
                format: .heic,
                reason:
                    "overlay 5 places an image at a negative horizontal offset (-17), which libheif 1.15 reads out of bounds"
            )
        ) { try HEIFDecoder().decode(placed(-17, 0), options: DecodingOptions()) }
        // And placed at the origin it decodes, to the pixels of its tile (the same HEVC image, alone in a file)
        let overlay = try HEIFDecoder().decode(placed(0, 0), options: DecodingOptions())
        let single = try Data(
            contentsOf: #require(
                Self.findings("heif", includingSeeds: true).first { $0.lastPathComponent == "seed-isobmff-64x64.heic" })
        )
        let tile = try HEIFDecoder().decode(single, options: DecodingOptions())
        #expect(overlay.image.size == PixelSize(width: 64, height: 64))
        #expect(overlay.image == tile.image)
    }

    @Test(.timeLimit(.minutes(1)))
    func anOverlayOrIdentityMadeOfSomethingThatIsNotAnImageIsRefused() throws {
        // Given the isobmff fuzz target's 772-byte HEIC: overlay 3's `dimg` names item 2, an `hvt1` (libheif 1.15
        // decodes an overlay's inputs without looking them up: Debian's build aborted the process on
        // "Assertion `imginfo' failed")
        let data = try Data(
            contentsOf: #require(Self.findings("heif").first { $0.lastPathComponent.contains("names-a-tile") }))
        let references = try #require(data.firstRange(of: Data("dimg".utf8)))
        let typeOf3 = try #require(data.firstRange(of: Data("iovl".utf8)))
        func patched(_ at: Int, _ bytes: [UInt8]) -> Data {
            var copy = data
            copy.replaceSubrange(at..<(at + bytes.count), with: bytes)
            return copy
        }
        let cases: [(Data, String)] = [
            (data, "overlay 3 names item 2 (hvt1), which is not an image"),
            // the same overlay naming item 9, which has no `infe`
            (patched(references.upperBound + 4, [0, 9]), "overlay 3 names item 9, which the file does not describe"),
            // and item 3 typed `iden` (an identity transformation of item 2)
            (
                patched(typeOf3.lowerBound, Array("iden".utf8)),
                "identity transformation 3 names item 2 (hvt1), which is not an image"
            ),
        ]
        for (file, reason) in cases {
            // When decoded, Then it is refused before libheif reads it
            #expect(throws: CodecError.corrupt(format: .heic, reason: reason)) {
                try HEIFDecoder().decode(file, options: DecodingOptions())
            }
        }
        // And an overlay naming images only passes the check (libheif then refuses this one's bytes itself)
        let images = patched(references.upperBound + 4, [0, 1])
        #expect {
            try HEIFDecoder().decode(images, options: DecodingOptions())
        } throws: { error in
            guard case .corrupt(_, let reason) = error as? CodecError else { return false }
            return !reason.contains("not an image") && reason.contains("NAL")
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func aGridOrIdentityWithAlphaMadeOfAnImageWithAlphaIsRefused() throws {
        // Given the isobmff fuzz target's 1,293-byte HEIC: grid 2 (one 64×64 tile, item 4) has an alpha image of its
        // own (item 6), and so has its tile (item 8); libheif 1.15 gives the grid the tile's alpha plane, then loses
        // the memory of its own (valgrind: 4,111 bytes definitely lost a decode, with libheif alone)
        let data = try Data(
            contentsOf: #require(Self.findings("heif").first { $0.lastPathComponent.contains("grid-and-tile-alpha") }))
        func replacing(_ old: [UInt8], with new: [UInt8]) throws -> Data {
            #expect(data.ranges(of: Data(old)).count >= 1)
            return data.replacing(Data(old), with: Data(new))
        }
        // (the `iref` box is written twice: both say `auxl` from 6 to 2)
        let gridsAlpha: [UInt8] = [0, 0, 0, 14] + Array("auxl".utf8) + [0, 6, 0, 1, 0, 2]
        let cases: [(Data, String)] = [
            (data, "grid 2"),
            // item 2 typed `iden` (the identity transformation of tile 4): the same loss
            (
                try replacing([0, 2, 0, 0] + Array("grid".utf8), with: [0, 2, 0, 0] + Array("iden".utf8)),
                "identity transformation 2"
            ),
        ]
        for (file, kind) in cases {
            // When decoded, Then it is refused before libheif reads it
            #expect(
                throws: CodecError.corrupt(
                    format: .heic,
                    reason:
                        "\(kind) has an alpha image of its own and is made of image 4, whose picture has alpha too: libheif 1.15 would lose one of the two planes' memory"
                )
            ) { try HEIFDecoder().decode(file, options: DecodingOptions()) }
        }
        // And the heif fuzz target's mutation of it, whose `iref` boxes hold a reference box of a wrong size: the
        // specification's reading of the box stops there, libheif's reads on and finds the same references
        let sizes = try Data(
            contentsOf: #require(Self.findings("heif").first { $0.lastPathComponent.contains("iref-sizes") }))
        #expect(
            throws: CodecError.corrupt(
                format: .heic,
                reason:
                    "grid 2 has an alpha image of its own and is made of image 4, whose picture has alpha too: libheif 1.15 would lose one of the two planes' memory"
            )
        ) { try HEIFDecoder().decode(sizes, options: DecodingOptions()) }
        // And with the grid's own alpha naming item 1 instead, only the tile has alpha: it decodes, with the
        // tile's alpha (a gradient, not opaque)
        let tileAlphaOnly = try replacing(gridsAlpha, with: Array(gridsAlpha.dropLast()) + [1])
        let decoded = try HEIFDecoder().decode(tileAlphaOnly, options: DecodingOptions())
        #expect(decoded.image.size == PixelSize(width: 64, height: 64))
        #expect(decoded.image[pixel: 0, 0].a != decoded.image[pixel: 63, 63].a)
    }

    @Test(
        .timeLimit(.minutes(3)),
        .enabled(if: MallocTrimmerTests.glibcServesMalloc, "a sanitizer's allocator serves malloc (resident size)"))
    func aColourDescriptionLibheifDoesNotKnowIsFreed() throws {
        // Given the heif fuzz target's 274-byte file whose `colr` (nclx) names transfer characteristics 1037:
        // libheif 1.15 allocates the description, then answers "unknown" with it still allocated (LeakSanitizer:
        // 52 bytes a decode; RELIABILITY.md §48)
        let data = try Data(
            contentsOf: #require(Self.findings("heif").first { $0.lastPathComponent.contains("nclx-unknown") }))
        func decode(_ times: Int) {
            for _ in 0..<times { _ = try? HEIFDecoder().decode(data, options: DecodingOptions()) }
        }
        func residentBytes() throws -> Int {
            let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
            let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") })
            return try #require(Int(line.split(separator: " ")[1])) * 1024
        }
        // When it is decoded 100,000 times (each refused later: its grid's data is short), after 500 to settle
        decode(500)
        let before = try residentBytes()
        decode(100_000)
        let grown = try residentBytes() - before
        // Then the process has not grown by what 100,000 lost descriptions would hold (6.4 MB of 64-byte chunks,
        // part of it taken from free heap; with the description kept on an error, as checked, it grew by more
        // than twice this bound), allowing for what the rest of the process does meanwhile
        #expect(grown < 1 << 20, "grew \(grown) bytes")
    }

    @Test(.timeLimit(.minutes(1)))
    func anAVIFGridsCanvasIsCheckedAsItsBytesDeclareIt() throws {
        // Given libavif's 1024×770 grid of five tiles with its grid's output size rewritten to 65535×65535 (the
        // `ispe` still says 1024×770)
        var data = try corpusData("avif/libavif-sofa_grid1x5_420.avif")
        let grid = try #require(data.firstRange(of: Data([0, 0, 4, 0, 0x04, 0x00, 0x03, 0x02])))
        data.replaceSubrange((grid.lowerBound + 4)..<grid.upperBound, with: [0xFF, 0xFF, 0xFF, 0xFF])
        // When decoded, Then the canvas is refused by size with a typed error (libavif would call it a parse failure)
        #expect(throws: CodecError.tooManyPixels(width: 65535, height: 65535, limit: 100_000_000)) {
            try AVIFDecoder().decode(data, options: DecodingOptions())
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func noLimitLetsLibheifSizeAPlaneOver2GiB() throws {
        // Given a HEIC whose `ispe` is rewritten to 20000×20000 (400 MP: 1.6 GB as RGBA, 3.2 GB at 16 bits, past
        // what libheif 1.15's 32-bit plane sizes hold)
        var data = try corpusData("heic/gen-kodim03-8bit-420.heic")
        let ispe = try #require(data.firstRange(of: Data("ispe".utf8)))
        let size = ispe.upperBound + 4
        data.replaceSubrange(size..<(size + 8), with: [0, 0, 0x4E, 0x20, 0, 0, 0x4E, 0x20])
        // When decoded with no pixel limit to speak of, Then the decoder's own ceiling refuses it
        #expect(
            throws: CodecError.tooManyPixels(width: 20000, height: 20000, limit: HEIFDecoder.libheifPixelCeiling)
        ) {
            try HEIFDecoder().decode(data, options: DecodingOptions(pixelLimit: .max))
        }
        #expect(HEIFDecoder.libheifPixelCeiling == 268_435_455)
    }

    @Test(.timeLimit(.minutes(1)))
    func heifWithAnAV1ItemIsRefusedBeforeLibheifHandsItToDav1d() throws {
        // Given the fuzzer's 274-byte HEIF whose image item is AV1-coded (libheif's dav1d plugin leaked 120 bytes
        // in libdav1d for each decode of it)
        let file = try #require(Self.findings("heif").first { $0.lastPathComponent.hasPrefix("leak-av1-item") })
        let data = try Data(contentsOf: file)
        // (the pipeline would hand it to AVIFDecoder: its ftyp says avif)
        #expect(ImageFormat(sniffing: data) == .avif)
        // When HEIFDecoder decodes it, Then it refuses the AV1 item by name, with a typed error
        #expect(
            throws: CodecError.corrupt(
                format: .heic,
                reason: "item 1 is AV1-coded (av01): AVIF is decoded by AVIFDecoder, not HEIFDecoder")
        ) {
            try HEIFDecoder().decode(data, options: DecodingOptions())
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func anSPSLargerThanTheItemsISPEIsRefusedBeforeLibavcodecSizesIt() throws {
        // Given a 384×256 HEIC whose `ispe` is rewritten to 64×64 (the HEVC SPS inside still says 384×256)
        var data = try corpusData("heic/gen-kodim03-8bit-420.heic")
        let ispe = try #require(data.firstRange(of: Data("ispe".utf8)))
        let size = ispe.upperBound + 4  // after the full box's version and flags
        data.replaceSubrange(size..<(size + 8), with: [0, 0, 0, 64, 0, 0, 0, 64])
        // When decoded under a pixel limit the ispe passes (4,096) and the SPS does not (98,304)
        let options = DecodingOptions(pixelLimit: 10_000)
        // Then Imago's HEVC plugin refuses the SPS with a typed error before libavcodec allocates anything
        #expect(
            throws: CodecError.corrupt(
                format: .heic,
                reason:
                    "Decoder plugin generated an error: Security limit exceeded: the HEVC SPS declares more pixels than allowed"
            )
        ) {
            try HEIFDecoder().decode(data, options: options)
        }
        // And under the default limit the same file still decodes (at the SPS's size, as libheif crops nothing)
        #expect(throws: Never.self) { try HEIFDecoder().decode(data, options: DecodingOptions()) }
    }

    @Test(.timeLimit(.minutes(1)))
    func avifFindingsFailTyped() throws {
        let files = Self.findings("avif")
        #expect(!files.isEmpty)
        for file in files {
            let started = ContinuousClock.now
            do {
                _ = try AVIFDecoder().decode(Data(contentsOf: file), options: DecodingOptions())
            } catch {
                #expect(error is CodecError)
            }
            // (libavif alone took 7 s and 4 GB over the file of 4,000 items declaring 65,535 empty extents each)
            #expect(ContinuousClock.now - started < .seconds(3), "\(file.lastPathComponent)")
        }
    }
}
