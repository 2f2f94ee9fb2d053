import Foundation
import Testing

@testable import ImagoCore

@Suite struct ImageCacheKeyTests {
    @Test func equalTextsMadeSeparatelyAreEqualKeysWithEqualHashes() {
        // Given the same URL text built twice, and a text that differs in its last byte
        let a = ImageCacheKey(String(format: "https://images.example.com/photos/24/%08d-large.jpg", 17))
        let b = ImageCacheKey("https://images.example.com/photos/24/" + "00000017-large.jpg")
        let c = ImageCacheKey("https://images.example.com/photos/24/00000017-large.jpe")
        // Then the first two are one key, the third another
        #expect(a == b && a.precomputedHash == b.precomputedHash && a.hashValue == b.hashValue)
        #expect(a != c && a.precomputedHash != c.precomputedHash)
        // And the hash is this process's hash of the bytes, small (inline) strings included
        #expect(ImageCacheKey("k").precomputedHash == ImageCacheKey.hash("k"))
        #expect(ImageCacheKey("").precomputedHash == ImageCacheKey.hash(""))
    }

    @Test func comparesUTF8BytesNotUnicodeEquivalence() {
        // Given "café" precomposed (U+00E9) and decomposed (e + U+0301): equal as Strings, different bytes
        let composed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        #expect(composed == decomposed)
        // Then they are different keys, as they name different files on disk
        #expect(ImageCacheKey(composed) != ImageCacheKey(decomposed))
        #expect(ImageCacheKey(composed) == ImageCacheKey("caf\u{E9}"))
    }

    @Test func distinctKeysSpreadOverADictionary() {
        // Given 20,000 keys that differ only in a few digits
        let keys = (0..<20_000).map { ImageCacheKey("https://images.example.com/photos/\($0)/large.jpg?w=1200") }
        // Then no two share a 64-bit hash, and a dictionary finds each one
        #expect(Set(keys.map(\.precomputedHash)).count == keys.count)
        var table: [ImageCacheKey: Int] = [:]
        for (index, key) in keys.enumerated() { table[key] = index }
        #expect(keys.indices.allSatisfy { table[keys[$0]] == $0 })
    }
}

@Suite struct WyHashTests {
    @Test func matchesTheReferenceTestVectors() {
        // Given the wyhash 4.1 vectors (seed = index) that Zig's std.hash.Wyhash pins
        let vectors: [(String, UInt64)] = [
            ("", 0x0409_638E_E2BD_E459), ("a", 0xA841_2D09_1B5F_E0A9), ("abc", 0x32DD_92E4_B291_5153),
            ("message digest", 0x8619_1240_89A3_A16B), ("abcdefghijklmnopqrstuvwxyz", 0x7A43_AFB6_1D7F_5F40),
            ("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", 0xFF42_329B_90E5_0D58),
            (String(repeating: "1234567890", count: 8), 0xC39C_AB13_B115_AAD3),
        ]
        // Then each input hashes to its value, with the one-shot seed and the pre-mixed one alike
        for (seed, (text, expected)) in vectors.enumerated() {
            let bytes = Array(text.utf8)
            let hash = bytes.withUnsafeBytes { WyHash.hash($0, seed: UInt64(seed)) }
            let mixed = bytes.withUnsafeBytes { WyHash.hash($0, mixedSeed: WyHash.mixSeed(UInt64(seed))) }
            #expect(hash == expected, "\(text)")
            #expect(mixed == expected, "\(text)")
        }
    }
}
