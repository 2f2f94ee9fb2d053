import Foundation
import ImagoCore
import Testing

@testable import ImagoCodecs

/// PNG thumbnails read row by row and shrunk while reading (`cimago_png_read_shrunk`), never holding the full image.
@Suite struct PNGShrinkTests {
    let decoder = PNGDecoder()

    /// The PngSuite files compared with the simplified API: well formed and not interlaced (the simplified API reads
    /// 16-bit interlaced files wrongly, libpng#853; interlaced files are compared with their sequential twins).
    func rowReadFiles() throws -> [URL] {
        try corpusFiles("pngsuite/png", ext: "png").filter { url in
            let name = url.lastPathComponent
            guard !name.hasPrefix("x"), let data = try? Data(contentsOf: url), data.count > 28 else { return false }
            return data[28] == 0
        }
    }

    @Test func atFactorOneTheRowReaderGivesTheSimplifiedAPIsSamples() throws {
        // The transforms (palette, tRNS, low-bit gray, gray to RGB, filler) are the simplified API's, byte for byte
        // wherever a pixel is not fully transparent (the row reader writes those as 0, 0, 0, 0)
        let files = try rowReadFiles()
        try #require(files.count > 90, "\(files.count) files")
        var colorProfileFree = DecodingOptions()
        colorProfileFree.colorPolicy = .ignore
        for url in files {
            let data = try Data(contentsOf: url)
            let reference = try decoder.decode(data, options: colorProfileFree).image
            let read = try data.withUnsafeBytes {
                try PNGDecoder.shrunk($0, by: 1, full: reference.size, pixelFormat: reference.format, format: .png)
            }
            let image = try #require(read, "\(url.lastPathComponent) was left to the simplified API")
            var mismatches = 0
            for y in 0..<image.height {
                for x in 0..<image.width {
                    let (p, q) = (image[pixel: x, y], reference[pixel: x, y])
                    if q.a == 0 ? p.a != 0 : p != q { mismatches += 1 }
                }
            }
            #expect(mismatches == 0, "\(url.lastPathComponent): \(mismatches) pixels differ")
        }
    }

    @Test func blockMeansAreTheAreaAverageAtAPowerOfTwo() throws {
        // Opaque photos and PngSuite's transparent, palette, low-bit and 16-bit files, shrunk by 2, 4 and 8 (sizes they
        // divide): each block mean is the area average of its block, colour weighted by alpha, within rounding
        var ignoringProfiles = DecodingOptions()
        ignoringProfiles.colorPolicy = .ignore
        let suite =
            ["basn6a08.png", "tbrn2c08.png", "tbbn3p08.png", "basn3p02.png", "basn0g04.png", "tp1n3p08.png"]
            + ["basn6a16.png", "basn0g16.png"]
        let files = ["kodak/01.png", "kodak/04.png"] + suite.map { "pngsuite/png/" + $0 }
        for path in files {
            let data = try corpusData(path)
            let full = try decoder.decode(data, options: ignoringProfiles).image
            for factor in [2, 4, 8] {
                let size = PixelSize(width: full.width / factor, height: full.height / factor)
                let shrunk = try #require(
                    try data.withUnsafeBytes {
                        try PNGDecoder.shrunk($0, by: factor, full: full.size, pixelFormat: full.format, format: .png)
                    })
                let expected = try full.resampled(to: size)
                #expect(shrunk.size == size)
                var worst = 0
                for y in 0..<size.height {
                    for x in 0..<size.width {
                        let (p, q) = (shrunk[pixel: x, y], expected[pixel: x, y])
                        worst = max(worst, abs(Int(p.a) - Int(q.a)))
                        guard q.a > 8 else { continue }  // colour under almost no alpha is rounding noise in both
                        worst = max(worst, abs(Int(p.r) - Int(q.r)), abs(Int(p.g) - Int(q.g)), abs(Int(p.b) - Int(q.b)))
                    }
                }
                #expect(worst <= 1, "\(path) / \(factor): worst channel difference \(worst)")
            }
        }
    }

    @Test func aThumbnailStaysCloseToTheFullDecodesAreaAverage() throws {
        // Block means then an area average of a ratio of at least 2, against one area average of the full image
        var options = DecodingOptions()
        options.colorPolicy = .ignore
        for (name, side) in [("01", 160), ("04", 90), ("13", 64), ("23", 100)] {
            let data = try corpusData("kodak/\(name).png")
            let full = try decoder.decode(data, options: options).image
            var shrinking = options
            shrinking.targetSize = PixelSize(width: side, height: side)
            let thumbnail = try decoder.decode(data, options: shrinking).image
            #expect(thumbnail.size == full.size.fitted(within: PixelSize(width: side, height: side)))
            #expect(thumbnail.isKnownOpaque)
            let error = try #require(meanChannelError(thumbnail, try full.resampled(to: thumbnail.size)))
            #expect(error < 1.2, "kodak/\(name) at \(side): mean error \(error)")
        }
    }

    @Test func theRowReaderIsTakenOnlyWhereItCanBe() throws {
        // The decoder's output for a shrink is the row reader's block means, area-averaged to the target: 100 × 67
        // from 768 × 512 by a factor of 2 (4 would leave less than twice the target)
        let data = try corpusData("kodak/01.png")  // 768 × 512
        var options = DecodingOptions(targetSize: PixelSize(width: 100, height: 100))
        options.colorPolicy = .ignore
        let decoded = try decoder.decode(data, options: options).image
        let blocks = try #require(
            try data.withUnsafeBytes {
                try PNGDecoder.shrunk(
                    $0, by: 2, full: PixelSize(width: 768, height: 512), pixelFormat: .rgba8, format: .png)
            })
        #expect(blocks.size == PixelSize(width: 384, height: 256))
        #expect(decoded.bytes == (try blocks.assumingOpaque().resampled(to: decoded.size)).bytes)

        // Interlaced and 16-bit files are read too (16-bit rounded to 8 bits); a layout that does not match the
        // asked-for channels is left to the simplified API
        for name in ["basi2c08.png", "basi6a16.png", "basn2c16.png"] {
            let file = try corpusData("pngsuite/png/" + name)
            let read = try file.withUnsafeBytes {
                try PNGDecoder.shrunk(
                    $0, by: 2, full: PixelSize(width: 32, height: 32), pixelFormat: .rgba8, format: .png)
            }
            #expect(read != nil, "\(name)")
        }
        let colour = try corpusData("pngsuite/png/basi2c08.png")
        let asGray = try colour.withUnsafeBytes {
            try PNGDecoder.shrunk($0, by: 2, full: PixelSize(width: 32, height: 32), pixelFormat: .gray8, format: .png)
        }
        #expect(asGray == nil)
    }

    @Test func anInterlacedFileShrinksToTheSameBytesAsItsSequentialTwin() throws {
        // Every PngSuite file stored with Adam7 and without (basi/basn, bgai/bgan, sNNi/sNNn: 1 to 40 pixels a
        // side, so passes are empty and blocks are cut at the edges), at factors that divide the side and that do
        // not: the same block means, byte for byte, though the interlaced file comes in seven passes
        var ignoring = DecodingOptions()
        ignoring.colorPolicy = .ignore
        let interlaced = try corpusFiles("pngsuite/png", ext: "png").filter {
            let name = Array($0.lastPathComponent)
            return name[0] != "x" && name.count > 3 && name[3] == "i"
        }
        var pairs = 0
        for url in interlaced {
            var name = Array(url.lastPathComponent)
            name[3] = "n"
            let twinURL = url.deletingLastPathComponent().appendingPathComponent(String(name))
            guard let twin = try? Data(contentsOf: twinURL) else { continue }
            let data = try Data(contentsOf: url)
            let reference = try decoder.decode(twin, options: ignoring).image
            for factor in [1, 2, 3, 4, 8] {
                func shrunk(_ file: Data) throws -> PixelBuffer? {
                    try file.withUnsafeBytes {
                        try PNGDecoder.shrunk(
                            $0, by: factor, full: reference.size, pixelFormat: reference.format, format: .png)
                    }
                }
                let expected = try #require(try shrunk(twin), "\(twinURL.lastPathComponent)")
                let read = try #require(try shrunk(data), "\(url.lastPathComponent) / \(factor) was declined")
                #expect(read.size == expected.size)
                #expect(firstDifference(read, expected) == nil, "\(url.lastPathComponent) / \(factor)")
            }
            pairs += 1
        }
        #expect(pairs >= 30, "\(pairs) pairs")
    }

    @Test func anInterlacedPhotoDecodesToTheSameThumbnailAsASequentialOne() throws {
        // A Kodak photo written both ways by PNGEncoder: thumbnails and byte-limited decodes agree byte for byte
        let photo = try decoder.decode(try corpusData("kodak/03.png"), options: DecodingOptions()).image
        let sequential = try PNGEncoder().encode(photo, options: EncodingOptions())
        let interlaced = try PNGEncoder(interlaced: true).encode(photo, options: EncodingOptions())
        try #require(interlaced[28] == 1 && sequential[28] == 0)  // IHDR's interlace method
        var thumbnail = DecodingOptions(targetSize: PixelSize(width: 90, height: 90))
        var limited = DecodingOptions()
        limited.decodedByteLimit = 16 << 10
        for options in [thumbnail, limited] {
            let expected = try decoder.decode(sequential, options: options).image
            let image = try decoder.decode(interlaced, options: options).image
            #expect(image.size == expected.size)
            #expect(firstDifference(image, expected) == nil)
            #expect(image.isKnownOpaque)
        }
        thumbnail.colorPolicy = .ignore
        let blocks = try #require(
            try interlaced.withUnsafeBytes {
                try PNGDecoder.shrunk($0, by: 4, full: photo.size, pixelFormat: .rgba8, format: .png)
            })
        let decoded = try decoder.decode(interlaced, options: thumbnail).image
        #expect(decoded.bytes == (try blocks.assumingOpaque().resampled(to: decoded.size)).bytes)
    }

    @Test func aCorruptStreamFailsTheShrunkReadAsItFailsTheFullOne() throws {
        // A flipped byte inside the image data: libpng's error, not a partial image
        var data = try corpusData("kodak/01.png")
        let idat = try #require(data.range(of: Data("IDAT".utf8)))
        data[idat.upperBound + 5_000] ^= 0xFF
        var options = DecodingOptions(targetSize: PixelSize(width: 64, height: 64))
        options.colorPolicy = .ignore
        #expect(throws: CodecError.self) { try decoder.decode(data, options: options) }
        #expect(throws: CodecError.self) { try decoder.decode(data, options: DecodingOptions()) }
    }

    @Test func theDecodedByteLimitShrinksAPNGWhileItIsRead() throws {
        // 768 × 512 RGBA is 1.5 MiB; a 20 KiB limit gets at most 20 KiB of pixels (87 × 58), read at a quarter
        let data = try corpusData("kodak/02.png")
        var options = DecodingOptions()
        options.decodedByteLimit = 20 << 10
        let image = try decoder.decode(data, options: options).image
        #expect(image.size == PixelSize(width: 87, height: 58))
        let blocks = try #require(
            try data.withUnsafeBytes {
                try PNGDecoder.shrunk(
                    $0, by: 4, full: PixelSize(width: 768, height: 512), pixelFormat: .rgba8, format: .png)
            })
        var ignoring = options
        ignoring.colorPolicy = .ignore
        let unconverted = try decoder.decode(data, options: ignoring).image
        #expect(unconverted.bytes == (try blocks.assumingOpaque().resampled(to: image.size)).bytes)
    }
}
