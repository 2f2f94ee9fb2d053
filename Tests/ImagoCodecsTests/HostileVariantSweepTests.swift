import Foundation
import Imago
import ImagoCore
import ImagoTesting
import Testing

/// Small corpus files truncated at 10 points and with random byte flips (fixed seed) decode or fail with a
/// ``CodecError`` — never another error, never a crash. The full sweep (every corpus file, ~4,200 variants) runs
/// under AddressSanitizer in scripts/asan-sweep.sh; this in-suite part keeps to files under 24 KB.
@Suite struct HostileVariantSweepTests {
    static let folders = [
        "jpeg/malformed", "gif/malformed", "gif/stall", "gif/regression", "pngsuite/png", "jpeg/reference",
        "webp/images", "gif/samples", "formats",
    ]

    @Test func truncatedAndFlippedCorpusFilesDecodeOrFailCleanly() throws {
        // Given the small files of the sweep folders
        var files: [Data] = []
        for folder in Self.folders {
            for ext in ["jpg", "jpeg", "png", "gif", "webp"] {
                for url in try corpusFiles(folder, ext: ext) {
                    let data = try Data(contentsOf: url)
                    if data.count <= 24_000 { files.append(data) }
                }
            }
        }
        try #require(files.count > 150)

        // When each is decoded whole, truncated at 10 points and with 5 sets of flipped bytes
        let registry = ImageDecoderRegistry.makeDefault()
        let options = DecodingOptions(pixelLimit: 16_000_000, frameLimit: 100, animationByteLimit: 64 << 20)
        var rng = ImagoTesting.SeededGenerator(state: 20_261_130)
        var tried = 0
        var decoded = 0
        var foreignErrors: [String] = []
        for data in files {
            var variants = [data]
            for i in 1...10 { variants.append(data.prefix(data.count * i / 11)) }
            for _ in 0..<5 where !data.isEmpty {
                var bytes = [UInt8](data)
                for _ in 0..<Int.random(in: 1...16, using: &rng) {
                    bytes[Int.random(in: 0..<bytes.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
                }
                variants.append(Data(bytes))
            }
            for variant in variants {
                tried += 1
                do {
                    _ = try registry.decode(variant, options: options)
                    decoded += 1
                } catch is CodecError {
                } catch {
                    foreignErrors.append("\(error)")
                }
            }
        }

        // Then every failure is a CodecError, and the untouched files mostly decode
        #expect(foreignErrors.isEmpty, "\(foreignErrors.prefix(5))")
        #expect(tried >= 2_000)
        #expect(decoded >= files.count / 2)
    }
}
