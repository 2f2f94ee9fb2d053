import Foundation

extension MemoryCache {
    /// An entry's lifetime; see ``CacheExpiration``.
    public typealias Expiration = CacheExpiration

    /// The limits and behaviour of a ``MemoryCache``; every field states its default.
    ///
    /// ```swift
    /// var configuration = MemoryCache.Configuration()
    /// configuration.costLimit = 256 << 20         // 256 MiB of pixels
    /// configuration.ttl = .after(.seconds(600))
    /// let cache = MemoryCache(configuration: configuration)
    /// ```
    public struct Configuration: Sendable {
        /// The most bytes of pixels (``ImageContainer/cost``) kept; storing beyond it evicts the least recently
        /// used images. Default ``defaultCostLimit``: 15 % of the memory available to the process, clamped to
        /// 16 MiB … 1 GiB.
        public var costLimit: Int
        /// The most images kept, whatever their cost. Default 1000 (the cost limit binds first for images larger
        /// than about 270 × 270 pixels at the 1 GiB cap).
        public var countLimit: Int
        /// The most one image may cost; a larger one is not stored at all (and evicts nothing). Default `nil`:
        /// a quarter of ``costLimit``, so that one huge image cannot flush everything else.
        public var entryCostLimit: Int?
        /// How long an entry lives unless ``MemoryCache/store(_:for:ttl:)`` says otherwise. Default `.never`.
        public var ttl: Expiration
        /// Whether the cache subscribes to the pressure monitor it is given (``MemoryPressureMonitor/shared``
        /// unless another is passed): on `.warning` it trims to half its current cost, on `.critical` it empties.
        /// Default `true`; tests that must not react to the machine's real pressure set it to `false`.
        public var respondsToMemoryPressure: Bool
        /// The clock expiry is measured on. Default `ContinuousClock.now`; tests inject a clock they move by hand.
        /// Read only when an entry has a deadline, so a cache without TTLs never reads the clock.
        public var now: @Sendable () -> ContinuousClock.Instant

        /// A configuration; each parameter defaults as its property documents.
        public init(
            costLimit: Int = Configuration.defaultCostLimit, countLimit: Int = 1000, entryCostLimit: Int? = nil,
            ttl: Expiration = .never, respondsToMemoryPressure: Bool = true,
            now: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }
        ) {
            self.costLimit = costLimit
            self.countLimit = countLimit
            self.entryCostLimit = entryCostLimit
            self.ttl = ttl
            self.respondsToMemoryPressure = respondsToMemoryPressure
            self.now = now
        }

        /// ``entryCostLimit``, or a quarter of ``costLimit`` when it is `nil`.
        public var effectiveEntryCostLimit: Int { entryCostLimit ?? costLimit / 4 }

        /// The default cost limit: 15 % of ``availableMemory``, clamped to 16 MiB … 1 GiB (computed once).
        public static let defaultCostLimit = defaultCostLimit(availableMemory: availableMemory)

        /// 15 % of `availableMemory`, at least 16 MiB and at most 1 GiB.
        public static func defaultCostLimit(availableMemory: Int) -> Int {
            min(max(availableMemory / 100 * 15, 16 << 20), 1 << 30)
        }

        /// The memory the process may use: its cgroup's hard limit (v2 `memory.max`, or v1
        /// `memory.limit_in_bytes`) when set and smaller than the machine's, else
        /// `ProcessInfo.physicalMemory` (computed once).
        public static let availableMemory: Int = {
            let physical = Int(clamping: ProcessInfo.processInfo.physicalMemory)
            return min(physical, LinuxMemoryPressureSource.cgroupMemoryLimit() ?? .max)
        }()
    }
}
