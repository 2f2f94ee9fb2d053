import Synchronization

/// The default ``ImageCaching``: decoded images in memory, least recently used evicted first, bounded by total
/// cost (bytes of pixels), count and per-entry cost, with optional expiry.
///
/// Every operation is O(1) except trims, ``removeImages(where:)`` and ``removeAll()``: a hash map from key to an
/// entry in an intrusive doubly linked recency list (kept in one array, so a hit allocates nothing). A hit makes
/// the image the most recently used; stores evict from the least recently used end. Expired entries are misses
/// and are removed when next looked up or on a trim.
///
/// Thread-safe: all state sits behind one lock, taken once per call; images let go are released after the lock
/// is dropped. Responds to memory pressure (see ``Configuration/respondsToMemoryPressure``).
///
/// ```swift
/// let cache = MemoryCache()
/// cache.store(container, for: ImageCacheKey(url.absoluteString))
/// let hit = cache.image(for: ImageCacheKey(url.absoluteString))
/// ```
public final class MemoryCache: ImageCaching, MemoryPressureResponding {
    /// The limits this cache was made with.
    public let configuration: Configuration
    private let state: Locked<LRUCache<ImageCacheKey, ImageContainer>>
    // Set (never cleared) once an image with a deadline is stored; until then a hit never reads the clock.
    private let mayExpire = Atomic<Bool>(false)
    private let pressureMonitor: MemoryPressureMonitor?
    // The cache's tables keep times as durations since this instant (see LRUCache on why not instants).
    private static let epoch = ContinuousClock.now

    /// A cache with `configuration` (default: see ``Configuration``), subscribed to `pressureMonitor` (default
    /// ``MemoryPressureMonitor/shared``) when the configuration responds to memory pressure.
    public init(configuration: Configuration = Configuration(), pressureMonitor: MemoryPressureMonitor = .shared) {
        self.configuration = configuration
        self.state = Locked(
            LRUCache(
                costLimit: max(0, configuration.costLimit), countLimit: max(0, configuration.countLimit),
                entryCostLimit: max(0, configuration.effectiveEntryCostLimit)))
        self.pressureMonitor = configuration.respondsToMemoryPressure ? pressureMonitor : nil
        self.pressureMonitor?.subscribe(self)
    }

    deinit {
        pressureMonitor?.unsubscribe(id: ObjectIdentifier(self))
    }

    // MARK: - ImageCaching

    /// The image for `key`, now the most recently used; `nil` when absent or expired.
    public func image(for key: ImageCacheKey) -> ImageContainer? {
        // The clock is injectable, so it is read before the lock is taken. A store that races this lookup and is
        // not yet seen by `mayExpire` made an entry whose deadline lies after this moment: treating it as live
        // (`now` nil) is what reading the clock here would have decided.
        let time: Duration? = mayExpire.load(ordering: .acquiring) ? now() : nil
        var expired: [ImageContainer] = []
        let image = state.withLock { cache in
            let image = cache.value(for: key, now: { time })
            if !cache.released.isEmpty { expired = cache.takeReleased() }
            return image
        }
        _ = consume expired  // expired images are released here, after the lock
        return image
    }

    /// Stores `image` for `key` with the configured TTL; see ``store(_:for:ttl:)``.
    public func store(_ image: ImageContainer, for key: ImageCacheKey) {
        store(image, for: key, ttl: configuration.ttl)
    }

    /// Stores `image` for `key` as the most recently used, replacing any previous image, expiring per `ttl`, then
    /// evicts least recently used images until within the limits.
    ///
    /// An image costing more than the entry cost limit, or one whose TTL has already passed, is not stored, and
    /// any previous image for `key` is removed.
    public func store(_ image: ImageContainer, for key: ImageCacheKey, ttl: Expiration) {
        let cost = image.cost
        var deadline: Duration?
        if ttl != .never {
            let now = configuration.now()
            if let instant = ttl.deadline(storedAt: now) {
                guard instant > now else {
                    removeImage(for: key)
                    return
                }
                deadline = instant - Self.epoch
                mayExpire.store(true, ordering: .releasing)
            }
        }
        let dropped = state.withLock { $0.setValue(image, for: key, cost: cost, deadline: deadline) }
        _ = consume dropped
    }

    /// Removes the image for `key`, if any.
    public func removeImage(for key: ImageCacheKey) {
        let dropped = state.withLock { $0.removeValue(for: key) }
        _ = consume dropped
    }

    /// Removes every image whose key satisfies `predicate`; `predicate` runs without the lock held.
    public func removeImages(where predicate: (ImageCacheKey) -> Bool) {
        let keys = state.withLock { $0.keys }
        let doomed = keys.filter(predicate)
        guard !doomed.isEmpty else { return }
        let dropped = state.withLock { cache in doomed.compactMap { cache.removeValue(for: $0) } }
        _ = consume dropped
    }

    /// Removes every image and gives back the memory of the cache's tables.
    public func removeAll() {
        let dropped = state.withLock { $0.removeAll() }
        _ = consume dropped
    }

    // MARK: - Trimming and counters

    /// Removes expired images, then least recently used ones until the total cost is at most `cost` bytes.
    public func trim(toCost cost: Int) {
        let time = now()
        let dropped = state.withLock { $0.trim(toCost: cost, now: time) }
        _ = consume dropped
    }

    /// Removes expired images, then least recently used ones until at most `count` remain.
    public func trim(toCount count: Int) {
        let time = now()
        let dropped = state.withLock { $0.trim(toCount: count, now: time) }
        _ = consume dropped
    }

    /// Bytes of pixels held now (expired images not yet removed included).
    public var totalCost: Int { state.withLock { $0.totalCost } }

    /// Images held now (expired images not yet removed included).
    public var count: Int { state.withLock { $0.count } }

    /// The counters, read together.
    public var statistics: Statistics {
        state.withLock { cache in
            Statistics(
                hits: cache.hits, misses: cache.misses, evictions: cache.evictions, expirations: cache.expirations,
                currentCost: cache.totalCost, currentCount: cache.count)
        }
    }

    /// Reads like ``image(for:)``; assigning stores with the configured TTL, assigning `nil` removes.
    public subscript(key: ImageCacheKey) -> ImageContainer? {
        get { image(for: key) }
        set {
            if let newValue { store(newValue, for: key) } else { removeImage(for: key) }
        }
    }

    /// On `.warning` trims to half the current cost; on `.critical` removes everything; on `.normal` does nothing.
    public func didReceiveMemoryPressure(_ level: MemoryPressureLevel) {
        switch level {
        case .normal: break
        case .warning:
            let time = now()
            let dropped = state.withLock { $0.trim(toCost: $0.totalCost / 2, now: time) }
            _ = consume dropped
        case .critical: removeAll()
        }
    }

    // The configured clock's present, as the tables count time. Kept out of line: `ContinuousClock.Instant` is
    // resilient, and inlined into `image(for:)` it cost every hit a metadata lookup, even with no TTL set.
    @inline(never)
    private func now() -> Duration { configuration.now() - Self.epoch }

    /// The broken internal invariants, described (empty when sound; O(n), for tests).
    package func invariantViolations() -> [String] {
        state.withLock { $0.invariantViolations() }
    }

    /// The keys from most to least recently used (O(n), for tests).
    package var keysByRecency: [ImageCacheKey] { state.withLock { $0.keysByRecency } }
}
