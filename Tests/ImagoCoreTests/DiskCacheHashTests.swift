import Foundation
import Testing

@testable import ImagoCore

@Suite struct SHA256Tests {
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (
            "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        ),
        (
            "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"
        ),
    ])
    func matchesTheFIPSVectors(message: String, hex: String) {
        #expect(SHA256.hash(message).hex == hex)
        #expect(SHA256.hash(Array(message.utf8)).hex == hex)
    }

    @Test func hashesOneMillionAs() {
        let message = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
        #expect(SHA256.hash(message).hex == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func matchesReferenceDigestsAroundThePaddingBoundaries() {
        // Lengths 55/56 and 119/120 switch between one and two padding blocks; 64 and 128 fill blocks exactly.
        let expected: [(Int, String)] = [
            (55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"),
            (56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"),
            (63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"),
            (64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"),
            (65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0"),
            (119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb"),
            (120, "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c"),
            (128, "6836cf13bac400e9105071cd6af47084dfacad4e5e302c94bfed24e013afb73e"),
        ]
        for (length, hex) in expected {
            #expect(SHA256.hash([UInt8](repeating: 0x61, count: length)).hex == hex, "length \(length)")
        }
    }

    @Test func hexRoundTripsAndRejectsNonHex() {
        let digest = SHA256.hash("https://example.com/a.jpg")
        #expect(SHA256Digest(hex: digest.hex) == digest)
        #expect(SHA256Digest(hex: digest.hex.uppercased()) == digest)
        #expect(SHA256Digest(hex: String(digest.hex.dropLast())) == nil)
        #expect(SHA256Digest(hex: String(digest.hex.dropLast()) + "g") == nil)
        #expect(digest.bytes.count == 32)
    }
}

@Suite struct XXH64Tests {
    /// The sanity buffer of xxHash's reference test: 101 bytes from squaring a 32-bit prime.
    static let sanityBuffer: [UInt8] = {
        var generator: UInt32 = 2_654_435_761
        return (0..<101).map { _ in
            defer { generator = generator &* generator }
            return UInt8(truncatingIfNeeded: generator >> 24)
        }
    }()

    @Test func matchesTheReferenceVectors() {
        let prime: UInt64 = 2_654_435_761
        #expect(XXH64.hash([]) == 0xEF46_DB37_51D8_E999)
        #expect(XXH64.hash([], seed: prime) == 0xAC75_FDA2_929B_17EF)
        #expect(XXH64.hash(Array("a".utf8)) == 0xD24E_C4F1_A98C_6E5B)
        #expect(XXH64.hash(Array("abc".utf8)) == 0x44BC_2CF5_AD77_0999)
        #expect(XXH64.hash(Array("Nobody inspects the spammish repetition".utf8)) == 0xFBCE_A83C_8A37_8BF1)
        #expect(XXH64.hash(Array(Self.sanityBuffer.prefix(1))) == 0x4FCE_394C_C889_52D8)
        #expect(XXH64.hash(Array(Self.sanityBuffer.prefix(14))) == 0xCFFA_8DB8_81BC_3A3D)
        #expect(XXH64.hash(Array(Self.sanityBuffer.prefix(14)), seed: prime) == 0x5B96_1158_5EFC_C9CB)
        #expect(XXH64.hash(Self.sanityBuffer) == 0x0EAB_5433_84F8_78AD)
        #expect(XXH64.hash(Self.sanityBuffer, seed: prime) == 0xCAA6_5939_306F_1E21)
    }
}

@Suite struct LaneChecksumTests {
    static func checksum(_ bytes: [UInt8]) -> UInt64 { bytes.withUnsafeBytes { LaneChecksum.hash($0) } }

    @Test func changesWithEverySingleBitFlipAndEveryLength() {
        let bytes = (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 151 &+ 7) }
        let reference = Self.checksum(bytes)
        var missed = 0
        for index in bytes.indices {
            for bit in 0..<8 {
                var flipped = bytes
                flipped[index] ^= 1 << bit
                if Self.checksum(flipped) == reference { missed += 1 }
            }
        }
        #expect(missed == 0)
        // Zero padding of the last block does not hide a length change.
        let zeros = (0...130).map { Self.checksum([UInt8](repeating: 0, count: $0)) }
        #expect(Set(zeros).count == zeros.count)
    }

    @Test func detectsSwappedWordsAndIsStable() {
        var bytes = (0..<256).map { UInt8(truncatingIfNeeded: $0) }
        let reference = Self.checksum(bytes)
        bytes.swapAt(0, 64)  // same lane, different blocks: caught by the positional sums
        #expect(Self.checksum(bytes) != reference)
        #expect(Self.checksum([]) != Self.checksum([0]))
    }

    @Test func keepsTheValuesPinnedByTheEntryFileFormat() {
        // Given inputs ending mid-block, on a block and past two-block turns (values of the first implementation)
        let long = (0..<(200 * 1024 + 37)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 5) }
        let mid = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 151 &+ 7) }
        // Then every stored checksum still verifies
        #expect(Self.checksum(Array("Imago".utf8)) == 0xFD91_BF56_0BFA_0791)
        #expect(Self.checksum([]) == 0xF276_D46D_DC91_2F23)
        #expect(Self.checksum(mid) == 0xA6C8_FD8A_A0B1_C5A7)
        #expect(Self.checksum(long) == 0xA1EF_32DA_157B_EF01)
    }
}

@Suite struct DiskCacheDigestMemoTests {
    @Test func remembersDigestsWithoutEverMixingUpKeys() throws {
        // Given a cache asked for more keys than its digest memo holds, some twice
        let directory = makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        let cache = try DiskCache(directory: directory, configuration: testConfiguration())
        defer { cache.close() }
        let keys = (0..<(DiskCache.maxMemoizedDigests + 500)).map { "https://example.com/\($0).jpg" }
        // Then every digest is the SHA-256 of its key, the first time and from the memo
        #expect(keys.allSatisfy { cache.digest(for: $0) == SHA256.hash($0) })
        #expect(keys.suffix(100).allSatisfy { cache.digest(for: $0) == SHA256.hash($0) })
        let long = String(repeating: "x", count: DiskCache.maxMemoizedKeyLength + 1)
        #expect(cache.digest(for: long) == SHA256.hash(long))
    }

    @Test func keysSpelledWithDifferentBytesNameDifferentEntries() throws {
        // Given an entry stored under "café" with a precomposed é
        let directory = makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        let cache = try DiskCache(directory: directory, configuration: testConfiguration())
        defer { cache.close() }
        try cache.storeSynchronously(Data("composed".utf8), for: "caf\u{E9}")
        // When read under the canonically equivalent spelling e + U+0301 (an equal String, other bytes)
        let other = cache.entry(for: "cafe\u{301}")
        // Then that is another key: a miss, while the stored spelling still hits
        #expect(other == nil)
        #expect(cache.entry(for: "caf\u{E9}")?.data == Data("composed".utf8))
    }
}

@Suite struct DiskCacheFileNamingTests {
    @Test func namesEntryFilesByTheHexDigestInOneFolder() {
        // Given the digest of "abc" (the FIPS 180-4 example)
        let digest = SHA256.hash("abc")
        let hex = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        // Then the entry lives directly in entries/, for absolute and relative roots alike
        #expect(digest.hex == hex)
        #expect(DiskCacheDirectory(root: "/var/cache/imago").entryPath(digest) == "/var/cache/imago/entries/" + hex)
        #expect(DiskCacheDirectory(root: "cache").entryPath(digest) == "cache/entries/" + hex)
    }

    @Test func writesEveryPartInOrderWithOneCall() throws {
        // Given a header, an empty part and a payload larger than a page
        let directory = makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        let path = directory.deletingLastPathComponent().path + "/file"
        let header = (0..<100).map { UInt8($0) }
        let payload = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        // When written as one new file
        let code = header.withUnsafeBytes { head in
            payload.withUnsafeBytes { body in
                DiskCacheDirectory.writeNewFile(
                    path: path, parts: [head, UnsafeRawBufferPointer(start: nil, count: 0), body], sync: false)
            }
        }
        // Then the file holds exactly the parts in order, and a second write to the same name is refused
        #expect(code == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(header + payload))
        let again = header.withUnsafeBytes { DiskCacheDirectory.writeNewFile(path: path, parts: [$0], sync: false) }
        #expect(again == EEXIST)
    }
}
