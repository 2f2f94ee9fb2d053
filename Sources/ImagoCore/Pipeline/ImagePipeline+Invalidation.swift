import Foundation

extension ImagePipeline {
    /// Removes the image at `url` and every processed variant of it from both caches, and forgets any failure
    /// remembered for it. Uses the default key policy; pass a request for another one.
    public func removeAll(for url: URL) {
        removeAll(for: ImageRequest(url: url))
    }

    /// Removes `request`'s source (under its key policy) and every processed variant of it from both caches, and
    /// forgets any failure remembered for it.
    ///
    /// Processed images on disk are removed when this pipeline stored them (the disk cache cannot be listed) or
    /// when they are `request`'s own variant.
    public func removeAll(for request: ImageRequest) {
        let key = request.sourceKey
        configuration.imageCache?.removeImages { $0.source == key }
        if let dataCache = configuration.dataCache {
            dataCache.removeData(for: key)
            dataCache.removeData(for: request.processedDataCacheKey)
            for processed in takeProcessedKeys(of: key) { dataCache.removeData(for: processed.dataCacheKey) }
        }
        configuration.failureCache?.removeFailure(for: request.failureKey)
    }

    /// Empties both caches and the failure cache.
    public func removeAllCachedData() {
        configuration.imageCache?.removeAll()
        configuration.dataCache?.removeAll()
        configuration.failureCache?.removeAll()
        cacheWrites.withLock { $0.processedKeys = [:] }
    }

    func rememberProcessedKey(_ key: ImageCacheKey) {
        _ = cacheWrites.withLock { $0.processedKeys[key.source, default: []].insert(key) }
    }

    func takeProcessedKeys(of sourceKey: String) -> Set<ImageCacheKey> {
        cacheWrites.withLock { $0.processedKeys.removeValue(forKey: sourceKey) } ?? []
    }
}
