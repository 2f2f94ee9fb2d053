extension MemoryCache {
    /// The cache's counters, read together under its lock.
    public struct Statistics: Sendable, Hashable {
        /// Lookups that returned an image.
        public var hits: Int
        /// Lookups that returned nothing (including expired entries).
        public var misses: Int
        /// Images dropped to stay within the limits (by stores, trims and memory pressure), not counting explicit
        /// removals or expiry.
        public var evictions: Int
        /// Images dropped because their TTL had passed.
        public var expirations: Int
        /// Bytes of pixels held now.
        public var currentCost: Int
        /// Images held now.
        public var currentCount: Int

        /// Counters with the given values (each default 0).
        public init(
            hits: Int = 0, misses: Int = 0, evictions: Int = 0, expirations: Int = 0, currentCost: Int = 0,
            currentCount: Int = 0
        ) {
            self.hits = hits
            self.misses = misses
            self.evictions = evictions
            self.expirations = expirations
            self.currentCost = currentCost
            self.currentCount = currentCount
        }
    }
}
