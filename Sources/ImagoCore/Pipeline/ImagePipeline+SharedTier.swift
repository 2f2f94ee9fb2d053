import Foundation

// The shared tier's place in the data stage: after a local disk miss (or with no disk cache) and before the
// source. Its calls are asynchronous and every failure is a miss, so a tier that is down costs at most its
// timeouts; its writes run in the background after delivery.
extension ImagePipeline {
    /// Looks in ``Configuration/sharedCache`` for the original bytes of `request`, then loads from the source
    /// (after claiming the fetch, so that one process of the fleet loads each source).
    func loadFromSharedTier(_ node: WorkNode<DataOutput>, request: ImageRequest) {
        guard let shared = configuration.sharedCache, usesSharedTier(request), request.options.readsDisk else {
            return loadFromSource(node, request: request)
        }
        let key = request.sourceKey
        let task = Task { [self] in
            let started = ContinuousClock.now
            if let entry = await sharedEntry(shared, key: key, request: request) {
                return deliverShared(entry, node: node, request: request, started: started)
            }
            guard !graph.isCancelled(node), !request.options.contains(.skipsLoading) else {
                return loadFromSource(node, request: request)
            }
            switch await shared.claimFetch(of: key) {
            case .filled(let entry):
                countShared(hit: true, request: request)
                deliverShared(entry, node: node, request: request, started: started)
            case .fetch(let lease):
                guard !graph.isCancelled(node) else {
                    if let lease { await shared.releaseFetch(lease) }
                    return
                }
                if let lease { sharedTier.hold(lease, for: key) }
                loadFromSource(node, request: request)
            }
        }
        graph.onCancel(node) { task.cancel() }
    }

    /// Whether `request`'s original bytes go through the shared tier: remote URLs loaded without credentials.
    /// Bytes fetched with a password in the URL or with an `Authorization`, `Proxy-Authorization` or `Cookie`
    /// header may be one user's own, so they are neither shared with other processes nor answered from the tier
    /// (RFC 9111 §3.5); the local caches still keep them.
    func usesSharedTier(_ request: ImageRequest) -> Bool {
        guard case .url(let url) = request.source, !request.isLocalSource, url.user == nil, url.password == nil
        else { return false }
        return !request.headers.keys.contains { Self.credentialHeaders.contains($0.lowercased()) }
    }

    /// Request header fields (lowercased) that carry a user's credentials.
    private static let credentialHeaders: Set<String> = ["authorization", "proxy-authorization", "cookie"]

    /// The entry for `key`, counting the hit or miss; a failure counts and reads as a miss.
    private func sharedEntry(
        _ shared: any SharedDataCaching, key: String, request: ImageRequest
    ) async
        -> DataCacheEntry?
    {
        do {
            let entry = try await shared.entry(for: key)
            countShared(hit: entry != nil, request: request)
            return entry
        } catch {
            noteSharedFailure(error, request: request)
            return nil
        }
    }

    private func countShared(hit: Bool, request: ImageRequest) {
        counters.withLock { hit ? ($0.sharedCacheHits += 1) : ($0.sharedCacheMisses += 1) }
        emit(
            hit
                ? .sharedCacheHit(source: request.sourceDescription)
                : .sharedCacheMiss(source: request.sourceDescription))
    }

    private func noteSharedFailure(_ error: SharedCacheError, request: ImageRequest) {
        counters.withLock { $0.sharedCacheErrors += 1 }
        emit(.sharedCacheFailed(source: request.sourceDescription, error: error))
    }

    /// Delivers a shared-tier hit and copies it into the local disk cache (under the same policy as a download).
    private func deliverShared(
        _ entry: DataCacheEntry, node: WorkNode<DataOutput>, request: ImageRequest, started: ContinuousClock.Instant
    ) {
        var output = DataOutput(data: entry.data, source: .sharedCache, metadata: entry.metadata)
        output.metrics.diskRead = .now - started
        if let dataCache = configuration.dataCache, !request.options.contains(.skipsDiskCacheWrites),
            storesOriginalsOnDisk(request)
        {
            writeToDisk(
                entry.data, key: request.sourceKey, metadata: entry.metadata, dataCache: dataCache, request: request)
        }
        graph.emit(node, .value(output))
    }

    private func storesOriginalsOnDisk(_ request: ImageRequest) -> Bool {
        switch configuration.dataCachePolicy {
        case .storeOriginalData, .storeAll: true
        case .storeEncodedImages: request.processors.isEmpty
        }
    }

    /// After a source load: writes the bytes to the shared tier in the background (whatever the local disk
    /// policy, when a decoder claims their format and a shared cache may store the response: `metadata` from
    /// ``makeSharedMetadata(from:now:)``), then releases the lease. Never delays delivery.
    func shareOriginal(_ data: Data, metadata: DataCacheMetadata?, for request: ImageRequest) {
        guard let shared = configuration.sharedCache, usesSharedTier(request) else { return }
        let key = request.sourceKey
        let lease = sharedTier.take(for: key)
        let isStorable =
            metadata != nil && !request.options.contains(.skipsDiskCacheWrites)
            && configuration.decoders.decoder(for: configuration.decoders.format(of: data)) != nil
        guard isStorable || lease != nil else { return }
        let entry = DataCacheEntry(data: data, metadata: metadata ?? DataCacheMetadata())
        let timeToLive = configuration.sharedCacheTimeToLive
        let source = request.sourceDescription
        sharedTier.run { [self] in
            if isStorable {
                do throws(SharedCacheError) {
                    try await shared.store(entry, for: key, timeToLive: timeToLive)
                    counters.withLock { $0.sharedCacheWrites += 1 }
                    emit(.storedInSharedCache(source: source, bytes: data.count))
                } catch {
                    counters.withLock { $0.sharedCacheErrors += 1 }
                    emit(.sharedCacheFailed(source: source, error: error))
                }
            }
            if let lease { await shared.releaseFetch(lease) }
        }
    }

    /// A source load failed: gives up its lease at once, so that waiting processes try for themselves.
    func releaseSharedLease(for request: ImageRequest) {
        guard let shared = configuration.sharedCache, let lease = sharedTier.take(for: request.sourceKey) else {
            return
        }
        sharedTier.run { await shared.releaseFetch(lease) }
    }
}

/// The pipeline's shared-tier bookkeeping: leases held for loads in flight, and background writes not yet done
/// (so that ``ImagePipeline/waitForPendingCacheWrites()`` waits for them).
final class SharedTierState: Sendable {
    private let leases = Locked<[String: SharedFetchLease]>([:])
    private let writes = BackgroundTasks()

    func hold(_ lease: SharedFetchLease, for key: String) { leases.withLock { $0[key] = lease } }

    func take(for key: String) -> SharedFetchLease? { leases.withLock { $0.removeValue(forKey: key) } }

    /// Runs `work` in a task of its own, counted until it ends.
    func run(_ work: @escaping @Sendable () async -> Void) { writes.run(work) }

    /// Returns once no background write runs.
    func waitUntilIdle() async { await writes.waitUntilIdle() }
}
