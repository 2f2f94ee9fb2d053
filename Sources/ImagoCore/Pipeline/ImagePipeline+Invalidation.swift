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

extension ImagePipeline {
    /// Bytes of `request`'s source that this caller downloaded (``data(for:)``, source ``ImageResponse/Source/network``)
    /// and then failed to decode, given back to the pipeline as ``ImageRequest/Source/data(id:_:)``: treated as the
    /// pipeline treats an undecodable download of its own. The failure is remembered and the bytes do not stay in
    /// the disk cache (each unless the request skips writes to that cache), so the next request fetches the source
    /// again rather than decoding the same bad bytes. `error` is why they did not decode (remembered with the
    /// failure).
    package func rejectDownloadedOriginal(for request: ImageRequest, undecodableBecause error: CodecError) {
        if !request.options.contains(.skipsFailureCacheWrites) {
            configuration.failureCache?.record(.decode(error.description), for: request.failureKey)
        }
        if !request.options.contains(.skipsDiskCacheWrites), let dataCache = configuration.dataCache {
            rejectOriginal(for: request.sourceKey, dataCache: dataCache)
        }
    }
}
