import Foundation
import ImagoCore

/// An in-memory ``ImageCaching`` counting hits, misses and stores (no limits, no eviction).
public final class MockImageCache: ImageCaching, Sendable {
    private struct State {
        var images: [ImageCacheKey: ImageContainer] = [:]
        var hits = 0
        var misses = 0
        var stores = 0
    }

    private let state = Locked(State())

    /// An empty cache.
    public init() {}

    /// Lookups that found an image.
    public var hitCount: Int { state.withLock { $0.hits } }
    /// Lookups that found nothing.
    public var missCount: Int { state.withLock { $0.misses } }
    /// Stores so far.
    public var storeCount: Int { state.withLock { $0.stores } }
    /// The keys held now.
    public var keys: [ImageCacheKey] { state.withLock { Array($0.images.keys) } }

    /// The image for `key`, counting a hit or a miss.
    public func image(for key: ImageCacheKey) -> ImageContainer? {
        state.withLock { s in
            let image = s.images[key]
            if image == nil { s.misses += 1 } else { s.hits += 1 }
            return image
        }
    }

    /// Stores `image`.
    public func store(_ image: ImageContainer, for key: ImageCacheKey) {
        state.withLock { s in
            s.images[key] = image
            s.stores += 1
        }
    }

    /// Removes the entry for `key`.
    public func removeImage(for key: ImageCacheKey) { _ = state.withLock { $0.images.removeValue(forKey: key) } }

    /// Removes every entry whose key satisfies `predicate`.
    public func removeImages(where predicate: (ImageCacheKey) -> Bool) {
        state.withLock { s in
            for key in s.images.keys where predicate(key) { s.images[key] = nil }
        }
    }

    /// Removes everything.
    public func removeAll() { state.withLock { $0.images = [:] } }
}

/// An in-memory ``DataCaching`` with metadata, counting reads, writes and metadata updates.
public final class MockDataCache: DataCaching, Sendable {
    private struct State {
        var entries: [String: DataCacheEntry] = [:]
        var reads = 0
        var writes = 0
        var metadataUpdates = 0
    }

    private let state = Locked(State())

    /// An empty cache.
    public init() {}

    /// Reads so far (hits and misses).
    public var readCount: Int { state.withLock { $0.reads } }
    /// Writes so far.
    public var writeCount: Int { state.withLock { $0.writes } }
    /// Metadata updates so far.
    public var metadataUpdateCount: Int { state.withLock { $0.metadataUpdates } }
    /// The keys held now.
    public var keys: [String] { state.withLock { Array($0.entries.keys) } }

    /// The entry for `key`.
    public func entry(for key: String) -> DataCacheEntry? {
        state.withLock { s in
            s.reads += 1
            return s.entries[key]
        }
    }

    /// Stores `data` with `metadata`.
    public func store(_ data: Data, for key: String, metadata: DataCacheMetadata) {
        state.withLock { s in
            s.entries[key] = DataCacheEntry(data: data, metadata: metadata)
            s.writes += 1
        }
    }

    /// Replaces the metadata of an existing entry.
    public func updateMetadata(_ metadata: DataCacheMetadata, for key: String) {
        state.withLock { s in
            guard s.entries[key] != nil else { return }
            s.entries[key]?.metadata = metadata
            s.metadataUpdates += 1
        }
    }

    /// Whether `key` has an entry (not counted as a read).
    public func containsData(for key: String) -> Bool { state.withLock { $0.entries[key] != nil } }

    /// Removes the entry for `key`.
    public func removeData(for key: String) { _ = state.withLock { $0.entries.removeValue(forKey: key) } }

    /// Removes everything.
    public func removeAll() { state.withLock { $0.entries = [:] } }
}
