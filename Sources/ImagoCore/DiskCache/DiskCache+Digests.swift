// File names are the SHA-256 of the key (in pure Swift, a small share of reading an entry; BENCHMARKS.md). A process asks about the same keys again and again (a read that misses, then the store; a read
// per decode of a cached image), so each DiskCache remembers the digests of the keys it hashed last.

extension DiskCache {
    /// The most digests remembered; past it the memo is emptied and starts over (cheaper than an LRU order).
    static let maxMemoizedDigests = 4096
    /// Keys longer than this (UTF-8 bytes) are hashed every time, so the memo stays small (≤ ~1.5 MB).
    static let maxMemoizedKeyLength = 256

    /// The SHA-256 of the UTF-8 bytes of `key`, remembered for the next call with the same bytes.
    func digest(for key: String) -> SHA256Digest {
        // ImageCacheKey compares bytes, as the digest does (String's `==` would equate canonically equivalent
        // spellings that name different files), and hashes faster than String.
        let memoKey = ImageCacheKey(key)
        if let known = digests.withLock({ $0[memoKey] }) { return known }
        let digest = SHA256.hash(key)
        guard key.utf8.count <= Self.maxMemoizedKeyLength else { return digest }
        digests.withLock { memo in
            if memo.count >= Self.maxMemoizedDigests { memo.removeAll(keepingCapacity: true) }
            memo[memoKey] = digest
        }
        return digest
    }
}
