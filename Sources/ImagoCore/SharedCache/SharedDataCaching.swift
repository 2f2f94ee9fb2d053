import Foundation

/// A byte cache shared by several processes or hosts (Redis, for instance), asked after the local disk cache:
/// memory → local disk → shared tier → network.
///
/// Every call is asynchronous (unlike ``DataCaching``, whose synchronous reads run on the disk workers, a network
/// round trip must never block a thread) and every failure is a typed ``SharedCacheError`` that the pipeline
/// treats as a miss: a shared tier that is down, slow or refusing never fails a request. Implementations are
/// thread-safe. The pipeline stores original bytes under ``ImageRequest/sourceKey``; `imago serve` also stores
/// its encoded outputs.
///
/// One fetch per fleet: before loading a source the tier does not hold, the pipeline calls
/// ``claimFetch(of:)``; a tier that coordinates processes answers ``SharedFetchClaim/filled(_:)`` when another
/// process stored the value meanwhile, and the holder of a lease releases it with ``releaseFetch(_:)`` after
/// storing (or failing). The default implementations do no coordination.
///
/// ```swift
/// var configuration = ImagePipeline.Configuration(dataCache: disk)
/// configuration.sharedCache = try RedisCache(urls: ["redis://cache-1:6379/0"])   // ImagoRedis
/// ```
public protocol SharedDataCaching: Sendable {
    /// The entry stored for `key`, or `nil` when absent, expired or found invalid (an invalid value is removed).
    func entry(for key: String) async throws(SharedCacheError) -> DataCacheEntry?

    /// Stores `entry` for `key`, replacing any previous value; it expires after `timeToLive` (`nil`: the tier's
    /// default).
    func store(_ entry: DataCacheEntry, for key: String, timeToLive: Duration?) async throws(SharedCacheError)

    /// Removes the value for `key`, if any.
    func removeEntry(for key: String) async throws(SharedCacheError)

    /// Called before loading `key` from its source after a miss: either go ahead (holding a lease when the tier
    /// hands one out) or take the value another process stored while this one waited. Never throws: a tier that
    /// cannot coordinate says ``SharedFetchClaim/fetch(_:)`` with no lease. Default: `.fetch(nil)`.
    func claimFetch(of key: String) async -> SharedFetchClaim

    /// Gives up a lease from ``claimFetch(of:)`` (only if still held), waking processes waiting for `key`. Called
    /// after the value is stored, or after the load failed. Default: nothing.
    func releaseFetch(_ lease: SharedFetchLease) async

    /// The tier's counters and per-node breaker state now, for metrics (`imago serve`'s `/metrics`); `nil` when
    /// the tier keeps none. Default: `nil`.
    var metrics: SharedCacheMetrics? { get }
}

extension SharedDataCaching {
    /// No coordination: every process fetches for itself.
    public func claimFetch(of key: String) async -> SharedFetchClaim { .fetch(nil) }

    /// Nothing to release.
    public func releaseFetch(_ lease: SharedFetchLease) async {}

    /// No counters.
    public var metrics: SharedCacheMetrics? { nil }
}

/// What ``SharedDataCaching/claimFetch(of:)`` says to do after a miss.
public enum SharedFetchClaim: Sendable {
    /// Load the source; with a lease, other processes wait for this one (release it with
    /// ``SharedDataCaching/releaseFetch(_:)``); with `nil`, nothing is coordinated.
    case fetch(SharedFetchLease?)
    /// Another process loaded and stored the value while this one waited: use it.
    case filled(DataCacheEntry)
}

/// A lease on fetching one key: who holds it (`token`, random per claim) and for which key.
public struct SharedFetchLease: Sendable, Hashable {
    /// The key being fetched.
    public var key: String
    /// The holder's random token, compared before the lease is released.
    public var token: String

    /// A lease from its parts.
    public init(key: String, token: String) {
        self.key = key
        self.token = token
    }
}
