import Foundation

extension DiskCache {
    /// How much a ``DiskCache`` keeps, how durable its writes are, and where it reports problems.
    ///
    /// ```swift
    /// var configuration = DiskCache.Configuration()
    /// configuration.sizeLimit = 64 * 1024 * 1024
    /// configuration.onError = { error in print("disk cache: \(error)") }
    /// let cache = try DiskCache(directory: cachesURL.appendingPathComponent("images"), configuration: configuration)
    /// ```
    public struct Configuration: Sendable {
        /// The most bytes the entry files may take (headers included). A write that goes over it evicts the
        /// least recently used entries down to ``lowWaterFraction`` of it. Default: 256 MB (256 × 1024 × 1024).
        public var sizeLimit: Int = 256 * 1024 * 1024

        /// After a write goes over ``sizeLimit``, eviction continues down to this fraction of it, so that the
        /// next writes do not each evict again. Default: 0.8.
        public var lowWaterFraction: Double = 0.8

        /// How long an entry is kept without being read or written, measured from its last access (a read or
        /// a store), not from when it was stored: HTTP freshness is `DataCacheMetadata.expiresAt`'s job, this is
        /// garbage collection. Older entries read as misses and are evicted as writes happen. `nil`: no limit.
        /// Default: 7 days.
        public var maxAge: Duration? = .seconds(7 * 24 * 3600)

        /// Whether every read recomputes the payload checksum. When `false`, a read skips it for an entry file
        /// version known good in this boot of the machine: one this cache verified or wrote itself, or one whose
        /// seal another process (or an earlier one) recorded in the shared index after verifying or writing it.
        /// A version is the file's device, inode, size and nanosecond modification and status-change times: any
        /// replacement, truncation or write through the file system changes it, and a seal names the boot, so
        /// after a crash or restart of the machine every file is checked again on its first read. The header, its
        /// checksum, the lengths and the key are checked on every read. Only damage that bypasses the file system
        /// within one boot (bad media under an unchanged file, a failed write-back) could then go unnoticed; set
        /// `true` to check for that too, at the cost of a checksum pass over every read (see BENCHMARKS.md).
        /// Default: `false`.
        public var verifiesEveryRead = false

        /// What a completed write survives. Default: ``Durability/processCrash``.
        public var durability: Durability = .processCrash

        /// The most bytes of `store` calls kept in memory while the background queue writes them; past it,
        /// `store` writes synchronously on the caller's thread (back-pressure). Default: 32 MB.
        public var maxStagedBytes: Int = 32 * 1024 * 1024

        /// How long recorded reads (the LRU order) may stay in memory before they are appended to the shared
        /// journal. They are also appended with every write and by `flush()`. Default: 1 second.
        public var accessPersistenceDelay: Duration = .seconds(1)

        /// The journal is compacted into the index snapshot when it holds more records than this or than the
        /// index has entries, whichever is larger, and when the cache closes. Default: 16,384.
        public var journalCompactionThreshold: Int = 16_384

        /// Called (never under a lock, on the thread that hit the problem, often the background writer) for
        /// every failure that a non-throwing call could not report: failed background writes, full disk, a
        /// corrupt index that was rebuilt. Default: `nil`.
        public var onError: (@Sendable (DiskCache.Error) -> Void)? = nil

        /// Called (never under a lock) with one human-readable line for notable events: index rebuilt, journal
        /// repaired, corrupt entries removed. Default: `nil`.
        public var log: (@Sendable (String) -> Void)? = nil

        /// The clock, as seconds since the reference date (as `Date.timeIntervalSinceReferenceDate`). Tests
        /// inject one to move time. Default: the system clock.
        public var clock: @Sendable () -> Double = { Date().timeIntervalSinceReferenceDate }

        // Test seam: when set, called before each entry write; a non-nil errno makes the write fail as if
        // write(2) had returned it (for ENOSPC on systems where a tiny file system cannot be mounted).
        package var writeFault: (@Sendable () -> Int32?)? = nil

        // Test seam: when set, called on the storing thread after a store or removal is staged (visible to reads)
        // and before its write is queued: the window in which another thread can see it and flush.
        package var afterStaging: (@Sendable () -> Void)? = nil

        // Test seam: when set, stands for the identity of this boot of the machine, which every seal names (tests
        // set another to stand for a restart); shorter than 16 bytes, as an unknown boot: no seals, no trust beyond
        // this cache's own memo.
        package var bootIdentityOverride: [UInt8]? = nil

        /// The defaults listed on each property.
        public init() {}
    }

    /// What a completed write survives.
    public enum Durability: Sendable, Hashable {
        /// No fsync: each entry is written to a temporary file and renamed into place, so a crash or kill of
        /// the process leaves either the old entry or the whole new one, never a mix; after a power loss or
        /// kernel crash, recently written entries may be missing or read as corrupt (and are then removed). The
        /// default: fast, and the right trade for a cache.
        case processCrash
        /// fsync of each entry file before its rename, of the directory after it, and of the index snapshot:
        /// completed writes also survive a power loss (at several milliseconds per write on most disks).
        case powerLoss
    }
}
