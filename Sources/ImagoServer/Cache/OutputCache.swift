import Foundation
import ImagoCore

/// The cache of encoded outputs: a memory LRU in front of an optional disk cache and an optional shared tier
/// (Redis), so that a repeated request is answered without loading, decoding or encoding. Thread-safe; the memory
/// tier is bounded by `memoryCostLimit` bytes (default 64 MiB), the disk and shared tiers by their own
/// configuration. Outputs made with the client's cookies (``OutputKey/cookie``) are neither kept nor answered.
public final class OutputCache: Sendable {
    /// Which tier answered a lookup.
    enum Tier: String, Sendable {
        case memory, disk
    }

    private let memory: Locked<LRUCache<OutputKey, Rendition>>
    private let disk: (any DataCaching)?
    private let shared: (any SharedDataCaching)?
    /// The copies sent to the shared tier in the background, until each ends.
    private let sharedWrites = BackgroundTasks()

    /// A cache holding up to `memoryCostLimit` bytes in memory (default 64 MiB) and, when `disk` is given, every
    /// output on disk too; when `shared` is given (default `nil`), outputs are also written to and read from that
    /// tier, after the disk.
    public init(
        memoryCostLimit: Int = 64 << 20, disk: (any DataCaching)? = nil, shared: (any SharedDataCaching)? = nil
    ) {
        memory = Locked(LRUCache(costLimit: memoryCostLimit, countLimit: 100_000))
        self.disk = disk
        self.shared = shared
    }

    /// The output for `key` in the shared tier, copied into memory and onto disk; `nil` on a miss or when the
    /// tier fails (a failure is never the request's).
    func sharedRendition(for key: OutputKey) async -> Rendition? {
        guard key.cookie == nil, let shared, let entry = try? await shared.entry(for: key.diskKey) else { return nil }
        let rendition = Self.rendition(entry, key: key)
        storeInMemory(rendition, for: key)
        disk?.store(entry.data, for: key.diskKey, metadata: entry.metadata)
        return rendition
    }

    private static func rendition(_ entry: DataCacheEntry, key: OutputKey) -> Rendition {
        let format = ImageFormat(sniffing: entry.data)
        var rendition =
            entry.metadata.validators.etag.map { Rendition(data: entry.data, format: format, etag: $0) }
            ?? Rendition(data: entry.data, format: format, key: key)
        rendition.sourceLastModified = entry.metadata.validators.lastModified
        rendition.sourceExpiresAt = entry.metadata.expiresAt
        rendition.facts = RenditionFacts(decoding: entry.metadata.extra)
        return rendition
    }

    /// The output for `key` if the memory tier holds it: no I/O, so a server may call it on its event thread.
    func memoryRendition(for key: OutputKey) -> Rendition? {
        guard key.cookie == nil else { return nil }
        return memory.withLock { $0.value(for: key, now: { .zero }) }
    }

    /// The output for `key` and the tier that held it (a disk hit is copied into memory): the memory tier on the
    /// calling task, the disk tier's file read on `diskQueue` (the pipeline's, sized for disk I/O), so that a slow
    /// disk holds none of the threads of Swift's executor.
    func rendition(for key: OutputKey, diskQueue: WorkQueue) async -> (Rendition, Tier)? {
        if let hit = memoryRendition(for: key) { return (hit, .memory) }
        guard key.cookie == nil, let disk else { return nil }
        guard let entry = await diskQueue.value(priority: .normal, { disk.entry(for: key.diskKey) }) else { return nil }
        let rendition = Self.rendition(entry, key: key)
        storeInMemory(rendition, for: key)
        return (rendition, .disk)
    }

    /// Stores `rendition` in every tier (the shared one in the background).
    func store(_ rendition: Rendition, for key: OutputKey) {
        guard key.cookie == nil else { return }
        storeInMemory(rendition, for: key)
        // The entry's validators and freshness are the output's ETag and the source's facts, read back above; the
        // other facts ride in `extra`.
        let metadata = DataCacheMetadata(
            expiresAt: rendition.sourceExpiresAt,
            validators: HTTPValidators(etag: rendition.etag, lastModified: rendition.sourceLastModified),
            contentType: rendition.format.mimeType, extra: rendition.facts.encoded)
        disk?.store(rendition.data, for: key.diskKey, metadata: metadata)
        if let shared {
            let entry = DataCacheEntry(data: rendition.data, metadata: metadata)
            let name = key.diskKey
            sharedWrites.run { try? await shared.store(entry, for: name, timeToLive: nil) }
        }
    }

    /// Waits until the copies sent to the shared tier so far are done (or failed), then puts a ``DiskCache`` used as
    /// the disk tier on disk (``DiskCache/flush()``, on the queue for blocking work): for a server's stop, before
    /// the tiers are closed.
    public func flush() async {
        await sharedWrites.waitUntilIdle()
        await DiskCache.flush(disk)
    }

    private func storeInMemory(_ rendition: Rendition, for key: OutputKey) {
        let released = memory.withLock { $0.setValue(rendition, for: key, cost: rendition.data.count + 256) }
        _ = released  // let go here, outside the lock
    }
}
