import CJPEGTurbo
import Foundation
import ImagoCodecs
import ImagoCore
import Testing

/// The DC-scan reader for progressive thumbnails (JPEGProgressiveDC) against libjpeg's own 1/8-scale decode.
@Suite struct JPEGProgressiveDCTests {
    typealias F = ProgressiveJPEGFixtures

    /// Files whose every component libjpeg decodes with a 1×1 IDCT at 1/8 scale: the reader must match exactly.
    static let exactCases = [
        "corpus formats/TestImageLarge.jpg", "corpus formats/MonochromeTestImage.jpg",
        "corpus jpeg/reference/progressive3.jpg", "kodak 444", "kodak gray", "kodak 422", "kodak 440", "kodak 411",
        "odd 444", "odd gray", "odd 422",
    ]
    static let restartCases = ["restart 444 rows", "restart 444 blocks", "restart gray blocks", "restart 422 rows"]

    static func fixture(_ name: String) throws -> Data {
        let words = name.split(separator: " ").map(String.init)
        let sampling: (String) -> TJSAMP = {
            [
                "444": TJSAMP_444, "gray": TJSAMP_GRAY, "422": TJSAMP_422, "440": TJSAMP_440, "411": TJSAMP_411,
                "420": TJSAMP_420,
            ][$0] ?? TJSAMP_444
        }
        switch words[0] {
        case "corpus": return try corpusData(words[1])
        case "progressive": return try F.madeProgressive(corpusData(words[1]))
        case "kodak":
            let number = words.count > 2 ? Int(words[2]) ?? 23 : words[1] == "gray" ? 3 : 23
            return try F.kodak(number, subsampling: sampling(words[1]))
        case "odd": return try F.oddSized(width: 133, height: 77, subsampling: sampling(words[1]))
        default:
            // A Kodak photo re-encoded by jpegtran as progressive with a restart interval in MCU rows or blocks.
            let source = try F.kodak(7, subsampling: sampling(words[1]))
            return try F.jpegtran(source, ["-progressive", "-restart", words[2] == "rows" ? "1" : "5B"])
        }
    }

    @Test(arguments: exactCases)
    func matchesLibjpegsEighthScaleDecodeExactly(_ name: String) throws {
        // Given a progressive JPEG
        let data = try Self.fixture(name)
        // When its DC scans are read, and libjpeg decodes it at 1/8 scale
        let dc = try #require(JPEGProgressiveDC.decode(data), "the DC reader refused \(name)")
        let reference = try F.libjpegEighth(data)
        // Then the images are identical, byte for byte
        #expect(dc.size == reference.size)
        #expect(dc.format == reference.format)
        let difference = meanAbsoluteError(dc, reference)
        #expect(difference.max == 0, "\(name): mean \(difference.mean), max \(difference.max)")
    }

    /// Restart intervals (in MCU rows and in blocks), written by jpegtran since TurboJPEG 2.1's API cannot.
    @Test(arguments: restartCases)
    func matchesLibjpegWithRestartIntervals(_ name: String) throws {
        try matchesLibjpegsEighthScaleDecodeExactly(name)
    }

    /// 4:2:0: libjpeg decodes the chroma with a 2×2 IDCT (it needs 25 AC coefficients); the reader interpolates
    /// the chroma DC values with triangle weights. Luma is still exact. Bounds, from measurement (printed below):
    /// photographs differ by ≤ 2.5 levels on average at 1/8 scale (Kodak 768×512 give 96×64, already thumbnails),
    /// and ≤ 1.5 once a 4032×3024 photo's 504×378 is area-averaged to its 256-px thumbnail; single bytes differ by
    /// up to ~100 where a strong chroma edge lies inside one 16×16 block (the DC average cannot show it;
    /// B = Y + 1.772·(Cb − 128) nearly doubles a Cb error), so max ≤ 128.
    @Test(arguments: [
        "kodak 420 3", "kodak 420 7", "kodak 420 23", "corpus jpeg/reference/non-interleaved-mcu.jpg",
        "progressive formats/TestJFIF.jpg",
    ])
    func subsampledChromaIsCloseToLibjpegAndLumaExact(_ name: String) throws {
        // Given a progressive 4:2:0 JPEG
        let data = try Self.fixture(name)
        // When read from its DC scans, and decoded by libjpeg at 1/8 scale
        let dc = try #require(JPEGProgressiveDC.decode(data), "the DC reader refused \(name)")
        let reference = try F.libjpegEighth(data)
        // Then the luma is identical
        let luma = try #require(JPEGProgressiveDC.decodeLuma(data))
        #expect(luma == (try F.libjpegEighth(data, gray: true)))
        // And the colour differs by a few levels
        let difference = meanAbsoluteError(dc, reference)
        let thumbnailSize = PixelSize(width: 256, height: 256)
        let fitted = dc.size.fitted(within: thumbnailSize)
        let thumbnail = meanAbsoluteError(try dc.resampled(to: fitted), try reference.resampled(to: fitted))
        print("4:2:0 \(name): 1/8 mean \(difference.mean) max \(difference.max); thumbnail mean \(thumbnail.mean)")
        #expect(difference.mean <= 2.5, "\(name): mean \(difference.mean)")
        if fitted != dc.size {  // (a Kodak photo's 96×64 is already smaller than the thumbnail)
            #expect(thumbnail.mean <= 1.5, "\(name): thumbnail mean \(thumbnail.mean)")
        }
        #expect(difference.max <= 128, "\(name): max \(difference.max)")
    }

    @Test func progressiveThumbnailsTakeTheDCPathAndMatchLibjpeg() throws {
        // Given the 5250×3450 progressive photo and a 256-px target (1/8 scale is 657×432)
        let data = try corpusData("formats/TestImageLarge.jpg")
        let options = DecodingOptions(targetSize: PixelSize(width: 256, height: 256))
        // When decoded with and without the DC reader
        let fast = try JPEGDecoder().decodeReportingPath(data, options: options)
        let libjpeg = F.libjpegOnly
        let slow = try libjpeg.decodeReportingPath(data, options: options)
        // Then the DC path was taken, and the thumbnails are identical (same 1/8 image, same resampling)
        #expect(fast.path == .progressiveDC)
        #expect(slow.path == .libjpeg)
        #expect(fast.container.image == slow.container.image)
        #expect(fast.container.image.size == PixelSize(width: 256, height: 168))
        #expect(fast.container.originalSize == PixelSize(width: 5250, height: 3450))
        #expect(fast.container.image.isKnownOpaque)
    }

    @Test func orientedProgressiveThumbnailIsTurnedAsLibjpegsIs() throws {
        // Given a progressive 4:4:4 Kodak photo (768×512) tagged EXIF orientation 6 (displayed 512×768)
        let data = TestImages.jpeg(try Self.fixture("kodak 444"), withOrientation: 6)
        // When fitted to 64×96 (stored 96×64: exactly 1/8 scale), with and without the DC reader
        let options = DecodingOptions(targetSize: PixelSize(width: 64, height: 96))
        let fast = try JPEGDecoder().decodeReportingPath(data, options: options)
        let libjpeg = F.libjpegOnly
        let slow = try libjpeg.decode(data, options: options)
        // Then the DC path turned the image exactly as the libjpeg path did
        #expect(fast.path == .progressiveDC)
        #expect(fast.container.image.size == PixelSize(width: 64, height: 96))
        #expect(fast.container.image == slow.image)
        #expect(fast.container.originalSize == slow.originalSize)
        #expect(fast.container.orientation == slow.orientation)
    }

    @Test func baselineFilesAndLargerScalesUseLibjpeg() throws {
        let decoder = JPEGDecoder()
        // Given a baseline 4032×3024 file at a 256 target: libjpeg (already 1 coefficient buffer row at a time)
        let baseline = try corpusData("formats/TestJFIF.jpg")
        let thumb = DecodingOptions(targetSize: PixelSize(width: 256, height: 256))
        #expect(try decoder.decodeReportingPath(baseline, options: thumb).path == .libjpeg)
        // Given the progressive photo at 1024 px (1/4 scale) and at full size: libjpeg
        let progressive = try corpusData("formats/TestImageLarge.jpg")
        let large = DecodingOptions(targetSize: PixelSize(width: 1024, height: 1024))
        #expect(try decoder.decodeReportingPath(progressive, options: large).path == .libjpeg)
        // Given a 4×4 progressive image asked for 1×1: TurboJPEG decodes it at 1/4 (also 1×1), so libjpeg
        let tiny = try F.oddSized(width: 4, height: 4, subsampling: TJSAMP_444)
        let one = DecodingOptions(targetSize: PixelSize(width: 1, height: 1))
        #expect(try decoder.decodeReportingPath(tiny, options: one).path == .libjpeg)
        // Given a 9×9 one asked for 2×2: 1/8 scale, the DC path, and libjpeg's pixels
        let nine = try F.oddSized(width: 9, height: 9, subsampling: TJSAMP_444)
        let two = DecodingOptions(targetSize: PixelSize(width: 2, height: 2))
        let result = try decoder.decodeReportingPath(nine, options: two)
        #expect(result.path == .progressiveDC)
        #expect(result.container.image == (try F.libjpegEighth(nine)))
    }

    @Test func corruptFirstScanDecodesExactlyAsLibjpegDoes() throws {
        // Given a small progressive file and three damaged versions of its first (DC) scan
        let data = try F.oddSized(width: 133, height: 77, subsampling: TJSAMP_444)
        let sos = try #require(Self.markerOffsets(data, 0xDA).first)
        let dht = try #require(Self.markerOffsets(data, 0xC4).first)
        var flipped = data
        for i in stride(from: sos + 20, to: sos + 60, by: 7) { flipped[i] ^= 0x5A }
        let truncated = data.prefix(sos + 40) + Data([0xFF, 0xD9])  // ends inside the first scan, EOI present
        let dhtLength = Int(data[dht + 2]) << 8 | Int(data[dht + 3])
        let withoutDHT = data.prefix(dht) + data.suffix(from: dht + 2 + dhtLength)
        let options = DecodingOptions(targetSize: PixelSize(width: 17, height: 10))
        let libjpeg = F.libjpegOnly
        for (name, variant) in [("flipped", flipped), ("truncated", truncated), ("no DHT", withoutDHT)] {
            // When decoded with the DC reader allowed and with libjpeg alone
            let fast = F.outcome(JPEGDecoder(), variant, options)
            let slow = F.outcome(libjpeg, variant, options)
            // Then the outcome (pixels, or the error) is the same
            #expect(fast == slow, "\(name): \(fast) vs \(slow)")
        }
        // And the reader itself refuses the truncated scan and the missing table
        #expect(JPEGProgressiveDC.decode(truncated) == nil)
        #expect(JPEGProgressiveDC.decode(withoutDHT) == nil)
    }

    @Test(arguments: ["odd 444", "odd gray"])
    func byteFlipSweepNeverDiffersFromLibjpeg(_ name: String) throws {
        try Self.sweep(Self.fixture(name))
    }

    @Test func byteFlipSweepWithRestartIntervalsNeverDiffersFromLibjpeg() throws {
        try Self.sweep(F.jpegtran(Self.fixture("odd 422"), ["-progressive", "-restart", "2B"]))
    }

    static func sweep(_ source: Data) throws {
        // Given a small progressive file and 600 variants with 1 to 3 bytes changed (deterministic LCG)
        var state: UInt64 = 0x1234_5678
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        let libjpeg = F.libjpegOnly
        let options = DecodingOptions(targetSize: PixelSize(width: 17, height: 10))
        var taken = 0
        for _ in 0..<600 {
            var variant = source
            for _ in 0...next(3) { variant[next(variant.count)] = UInt8(truncatingIfNeeded: next(256)) }
            // When decoded with the DC reader allowed and with libjpeg alone
            let fast = F.outcome(JPEGDecoder(), variant, options)
            let slow = F.outcome(libjpeg, variant, options)
            // Then the outcomes never differ (the reader gives up rather than guess)
            #expect(fast == slow)
            if (try? JPEGDecoder().decodeReportingPath(variant, options: options).path) == .progressiveDC { taken += 1 }
        }
        // And the sweep exercised the DC path itself, not only the fallback
        #expect(taken > 100, "DC path taken \(taken) times")
    }

    @Test func everyCorpusJPEGDecodesAtOneEighthAsLibjpegDoes() throws {
        // Given every JPEG of the corpus (reference, malformed, imagetestsuite, formats): 58 of them progressive
        let folders = [
            "jpeg/reference", "jpeg/reference/mozilla", "jpeg/malformed", "jpeg/malformed/imagetestsuite", "formats",
        ]
        let files = try folders.flatMap { try corpusFiles($0, ext: "jpg") }
        let libjpeg = F.libjpegOnly
        var dcPaths = 0
        for file in files {
            let data = try Data(contentsOf: file)
            // When decoded at exactly 1/8 scale (the size taken from a first decode) with and without the reader
            let probe = DecodingOptions(targetSize: PixelSize(width: 1, height: 1), pixelLimit: 20_000_000)
            guard let full = try? libjpeg.decode(data, options: probe).originalSize else {
                // Then a file libjpeg rejects is rejected with the same error
                #expect(
                    F.outcome(JPEGDecoder(), data, probe) == F.outcome(libjpeg, data, probe),
                    "\(file.lastPathComponent)")
                continue
            }
            let options = DecodingOptions(
                targetSize: PixelSize(width: (full.width + 7) / 8, height: (full.height + 7) / 8),
                pixelLimit: 20_000_000,
                appliesOrientation: false)
            let fast = try? JPEGDecoder().decodeReportingPath(data, options: options)
            let slow = try? libjpeg.decode(data, options: options)
            // Then both succeed or both fail, with the same size, and the same pixels unless the chroma is 4:2:0
            #expect((fast == nil) == (slow == nil), "\(file.lastPathComponent)")
            guard let fast, let slow else { continue }
            if fast.path == .progressiveDC { dcPaths += 1 }
            #expect(fast.container.image.size == slow.image.size, "\(file.lastPathComponent)")
            if fast.container.image != slow.image {
                let luma = JPEGProgressiveDC.decodeLuma(data)
                let is420 = F.subsampling(data) == Int32(TJSAMP_420.rawValue)
                #expect(
                    fast.path == .progressiveDC && is420 && luma == (try? F.libjpegEighth(data, gray: true)),
                    "\(file.lastPathComponent) differs from libjpeg beyond 4:2:0 chroma")
            }
        }
        // And the DC reader decoded at least the 5 intact progressive files (progressive3, non-interleaved-mcu,
        // mozilla/jpg-progressive, MonochromeTestImage, TestImageLarge); it refuses the broken ones, and
        // partial_progressive.jpg, whose missing AC scans make libjpeg smooth its blocks
        print("corpus: \(files.count) JPEGs, DC path for \(dcPaths)")
        #expect(dcPaths >= 5)
    }

    /// Offsets of every `FF code` marker before the first scan's data and between scans (a rough walk, test only).
    static func markerOffsets(_ data: Data, _ code: UInt8) -> [Int] {
        let bytes = [UInt8](data)
        return bytes.indices.dropLast().filter { bytes[$0] == 0xFF && bytes[$0 + 1] == code }
    }
}
