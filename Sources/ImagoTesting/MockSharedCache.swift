import Foundation
import ImagoCore

/// An in-memory ``SharedDataCaching`` for tests: counts reads, writes and claims, can be made to fail every call
/// (as a Redis that is down), and coordinates fetches between the pipelines sharing it (the first claim of a key
/// gets a lease; later claims wait until it is released, then read the value).
public final class MockSharedCache: SharedDataCaching, Sendable {
    private struct State {
        var entries: [String: DataCacheEntry] = [:]
        var reads = 0
        var writes = 0
        var claims = 0
        var failure: SharedCacheError?
        var leases: [String: String] = [:]
        var waiters: [String: [CheckedContinuation<Void, Never>]] = [:]
        var nextToken = 0
        var holdsWrites = false
        var heldWrites: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Locked(State())

    /// An empty cache that answers every call.
    public init() {}

    /// Reads so far (hits and misses; failed calls not counted).
    public var readCount: Int { state.withLock { $0.reads } }
    /// Writes so far.
    public var writeCount: Int { state.withLock { $0.writes } }
    /// Fetch claims so far.
    public var claimCount: Int { state.withLock { $0.claims } }
    /// The keys held now.
    public var keys: [String] { state.withLock { Array($0.entries.keys) } }

    /// Makes every later call fail with `error` (`nil`: answer again).
    public func setFailure(_ error: SharedCacheError?) { state.withLock { $0.failure = error } }

    /// The entry for `key`.
    public func entry(for key: String) async throws(SharedCacheError) -> DataCacheEntry? {
        let result: Result<DataCacheEntry?, SharedCacheError> = state.withLock { s in
            if let failure = s.failure { return .failure(failure) }
            s.reads += 1
            return .success(s.entries[key])
        }
        return try result.get()
    }

    /// Makes later writes wait until ``releaseWrites()`` (a slow tier).
    public func holdWrites() { state.withLock { $0.holdsWrites = true } }

    /// Lets held and later writes through.
    public func releaseWrites() {
        let held = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.holdsWrites = false
            defer { s.heldWrites = [] }
            return s.heldWrites
        }
        for write in held { write.resume() }
    }

    /// How many writes wait now.
    public var heldWriteCount: Int { state.withLock { $0.heldWrites.count } }

    /// Stores `entry` (the time to live is ignored).
    public func store(_ entry: DataCacheEntry, for key: String, timeToLive: Duration?) async throws(SharedCacheError) {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let waits = state.withLock { s -> Bool in
                guard s.holdsWrites else { return false }
                s.heldWrites.append(continuation)
                return true
            }
            if !waits { continuation.resume() }
        }
        let failure: SharedCacheError? = state.withLock { s in
            if let failure = s.failure { return failure }
            s.entries[key] = entry
            s.writes += 1
            return nil
        }
        if let failure { throw failure }
    }

    /// Removes the value for `key`.
    public func removeEntry(for key: String) async throws(SharedCacheError) {
        let failure = state.withLock { s -> SharedCacheError? in
            if let failure = s.failure { return failure }
            s.entries[key] = nil
            return nil
        }
        if let failure { throw failure }
    }

    /// A lease for the first claim of `key`; later claims wait for its release and take the stored value.
    public func claimFetch(of key: String) async -> SharedFetchClaim {
        let lease = state.withLock { s -> SharedFetchLease? in
            s.claims += 1
            guard s.failure == nil, s.leases[key] != nil else {
                guard s.failure == nil else { return nil }
                s.nextToken += 1
                s.leases[key] = "\(s.nextToken)"
                return SharedFetchLease(key: key, token: "\(s.nextToken)")
            }
            return nil
        }
        if let lease { return .fetch(lease) }
        let holds = state.withLock { $0.failure == nil && $0.leases[key] != nil }
        guard holds else { return .fetch(nil) }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let waits = state.withLock { s -> Bool in
                guard s.leases[key] != nil else { return false }
                s.waiters[key, default: []].append(continuation)
                return true
            }
            if !waits { continuation.resume() }
        }
        return state.withLock { $0.entries[key] }.map { .filled($0) } ?? .fetch(nil)
    }

    /// Releases `lease` if it still holds its key, waking the waiters.
    public func releaseFetch(_ lease: SharedFetchLease) async {
        let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            guard s.leases[lease.key] == lease.token else { return [] }
            s.leases[lease.key] = nil
            return s.waiters.removeValue(forKey: lease.key) ?? []
        }
        for waiter in waiters { waiter.resume() }
    }
}
