/// A cache key whose hash is computed once, when the key is made.
///
/// A 55-byte URL string costs ~100 ns to hash, more than taking a lock; a key built once per request and then
/// looked up, stored and compared several times should not pay that again.
public struct ImageCacheKey: Sendable, Hashable, CustomStringConvertible {
    /// The full key text (compared on equality, so a hash collision never confuses two keys).
    public let string: String
    /// The precomputed hash of `string` (process-seeded: never persist it).
    public let precomputedHash: Int

    /// Makes a key from its text, hashing it once.
    public init(_ string: String) {
        self.string = string
        self.precomputedHash = string.hashValue
    }

    /// Equal when the texts are equal (the hashes are compared first, as a fast reject).
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.precomputedHash == rhs.precomputedHash && lhs.string == rhs.string
    }

    /// Feeds the precomputed hash only.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(precomputedHash)
    }

    /// What `Dictionary` and `Set` call instead of `hash(into:)`: the precomputed hash mixed with the table's seed,
    /// without running a `Hasher` again (that cost a memory-cache hit ~15 % of its time). `precomputedHash` is
    /// already a per-process seeded SipHash of the text, so it stays resistant to collision flooding; the
    /// multiply-xorshift rounds spread the per-table seed over every bit, so two tables never order keys alike.
    public func _rawHashValue(seed: Int) -> Int {
        var x = UInt64(truncatingIfNeeded: precomputedHash ^ seed)
        x = (x ^ (x >> 32)) &* 0xD6E8_FEB8_6659_FD93
        x = (x ^ (x >> 32)) &* 0xD6E8_FEB8_6659_FD93
        return Int(truncatingIfNeeded: x ^ (x >> 32))
    }

    /// The key text.
    public var description: String { string }
}
