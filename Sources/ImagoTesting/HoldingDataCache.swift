import Foundation
import ImagoCore

/// A data cache whose `store` and `removeData` can be held (blocking the disk-queue thread): a decode failure can
/// land while the store of the same bytes is still running, a test can hold writes queued after delivery, or a
/// read can run while a removal is.
public final class HoldingDataCache: DataCaching, Sendable {
    /// Where the entries go once a held call passes; its counts are the writes that reached the cache.
    public let inner = MockDataCache()
    /// Holds ``store(_:for:metadata:)``.
    public let gate = HoldGate()
    /// Holds ``removeData(for:)``.
    public let removalGate = HoldGate()

    /// An empty cache, both gates open.
    public init() {}

    /// The entry for `key` in ``inner``.
    public func entry(for key: String) -> DataCacheEntry? { inner.entry(for: key) }
    /// Stores into ``inner`` once ``gate`` lets it through.
    public func store(_ data: Data, for key: String, metadata: DataCacheMetadata) {
        gate.passThrough()
        inner.store(data, for: key, metadata: metadata)
    }
    /// Updates ``inner``'s metadata at once.
    public func updateMetadata(_ metadata: DataCacheMetadata, for key: String) {
        inner.updateMetadata(metadata, for: key)
    }
    /// Whether ``inner`` holds `key`.
    public func containsData(for key: String) -> Bool { inner.containsData(for: key) }
    /// Removes from ``inner`` once ``removalGate`` lets it through.
    public func removeData(for key: String) {
        removalGate.passThrough()
        inner.removeData(for: key)
    }
    /// Empties ``inner`` at once.
    public func removeAll() { inner.removeAll() }
}
