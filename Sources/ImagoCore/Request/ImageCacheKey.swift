#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A cache key whose hash is computed once, when the key is made.
///
/// Hashing a URL-sized string with `Hasher` (SipHash) costs more than taking a lock; a key built once per request
/// and then looked up, stored and compared several times should not pay that again, and building it should cost
/// less than that one `Hasher` pass: the key hashes its UTF-8 bytes with wyhash under a seed drawn at random once
/// per process (BENCHMARKS.md, `url-key` and figures from comments).
///
/// Keys compare their UTF-8 bytes: two texts that are canonically equivalent in Unicode but spelled with
/// different bytes (precomposed "é" against "e" + combining accent) are different keys, as they are on disk.
public struct ImageCacheKey: Sendable, Hashable, CustomStringConvertible {
    /// The full key text (compared on equality, so a hash collision never confuses two keys).
    public let string: String
    /// The precomputed hash of the UTF-8 bytes of `string` (seeded per process: never persist it).
    public let precomputedHash: Int

    /// Makes a key from its text, hashing it once.
    public init(_ string: String) {
        self.string = string
        self.precomputedHash = Self.hash(string)
    }

    /// Equal when the texts have the same UTF-8 bytes (the hashes are compared first, as a fast reject).
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.precomputedHash == rhs.precomputedHash && Self.bytesEqual(lhs.string, rhs.string)
    }

    /// Feeds the precomputed hash only.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(precomputedHash)
    }

    /// What `Dictionary` and `Set` call instead of `hash(into:)`: the precomputed hash mixed with the table's seed,
    /// without running a `Hasher` again (a noticeable share of a memory-cache hit). `precomputedHash` is
    /// already a hash under a secret per-process seed, so flooding a table with colliding keys needs that seed;
    /// the multiply-xorshift rounds spread the per-table seed over every bit, so two tables never order keys alike.
    public func _rawHashValue(seed: Int) -> Int {
        var x = UInt64(truncatingIfNeeded: precomputedHash ^ seed)
        x = (x ^ (x >> 32)) &* 0xD6E8_FEB8_6659_FD93
        x = (x ^ (x >> 32)) &* 0xD6E8_FEB8_6659_FD93
        return Int(truncatingIfNeeded: x ^ (x >> 32))
    }

    /// The key text.
    public var description: String { string }

    // Drawn once per process from the system's random source, like `Hasher`'s own seed, so that an attacker who
    // picks the URLs cannot precompute colliding ones (and already passed through wyhash's seed mix).
    private static let seed = WyHash.mixSeed(UInt64.random(in: .min ... .max))

    /// The hash ``init(_:)`` stores for `string` in this process (for tests).
    package static func hash(_ string: String) -> Int {
        let seed = Self.seed
        // Read in place: native strings, small ones included, are contiguous; anything else is made native once.
        let hash =
            string.utf8.withContiguousStorageIfAvailable { WyHash.hash(UnsafeRawBufferPointer($0), mixedSeed: seed) }
            ?? {
                var copy = string
                return copy.withUTF8 { WyHash.hash(UnsafeRawBufferPointer($0), mixedSeed: seed) }
            }()
        return Int(truncatingIfNeeded: hash)
    }

    // Byte equality with one memcmp when both texts are contiguous (String's own `==` also checks Unicode
    // canonical equivalence, which the hash above does not follow).
    private static func bytesEqual(_ a: String, _ b: String) -> Bool {
        let contiguous = a.utf8.withContiguousStorageIfAvailable { x in
            b.utf8.withContiguousStorageIfAvailable { y in
                x.count == y.count && (x.count == 0 || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0)
            }
        }
        if let contiguous, let equal = contiguous { return equal }
        return a.utf8.elementsEqual(b.utf8)
    }
}
