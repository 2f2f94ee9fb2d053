import Foundation

extension ImagePipeline {
    /// Metadata for a loaded response: validators, content type and freshness from its headers (see
    /// ``HTTPCacheControl``); `nil` when the response says `Cache-Control: no-store`.
    func makeMetadata(from response: DataResponse, now: Date = Date()) -> DataCacheMetadata? {
        DataCacheMetadata(responseHeaders: response.headers, validators: response.validators, now: now)
    }

    /// Metadata for a loaded response in a cache other users share: as ``makeMetadata(from:now:)``, but `nil` for
    /// `Cache-Control: private` too, and fresh for `s-maxage` when the response gives it.
    func makeSharedMetadata(from response: DataResponse, now: Date = Date()) -> DataCacheMetadata? {
        DataCacheMetadata(sharedResponseHeaders: response.headers, validators: response.validators, now: now)
    }

    /// Waits until every cache write and removal queued so far has been handed to the data cache: processed
    /// images being encoded for the disk, and downloads, encoded images and removals (a download that failed to
    /// decode is removed again) waiting for the disk queue. Writes happen after the image is delivered, so a
    /// caller that has its images may still have writes in flight.
    ///
    /// Call it before closing a ``DiskCache`` at the end of a program, as `imago fetch` does, so that nothing
    /// downloaded is lost; then ``DiskCache/flush()`` or ``DiskCache/close()`` puts staged writes on disk. Loads
    /// in flight are neither cancelled nor waited for (their writes are queued when they finish).
    public func waitForPendingCacheWrites() async {
        while true {
            await encodeQueue.waitUntilIdle()
            await diskQueue.waitUntilIdle()
            await sharedTier.waitUntilIdle()
            guard encodeQueue.isIdle && diskQueue.isIdle else { continue }
            // A write is recorded (other loads act on it) a moment before its job is queued: with the queues idle,
            // a recorded write is one in that moment, about to be queued.
            guard !cacheWrites.withLock(\.isSettled) else { return }
            try? await Task.sleep(for: .milliseconds(1))
        }
    }

    /// How many callers of ``waitForPendingCacheWrites()`` are waiting for the encode or disk queue now (for tests
    /// that must know a waiter is parked before they release the writes).
    package var pendingWriteWaiterCount: Int { encodeQueue.idleWaiterCount + diskQueue.idleWaiterCount }

    /// Stores loaded original bytes on disk (in the background) when the policy and the request allow it, and
    /// when some decoder claims their format (an HTML error page is never cached; bytes of a known format that
    /// then fail to decode are removed again).
    func storeOriginal(_ data: Data, metadata: DataCacheMetadata?, for request: ImageRequest) {
        guard let metadata, let dataCache = configuration.dataCache,
            !request.options.contains(.skipsDiskCacheWrites), !request.isLocalSource,
            configuration.decoders.decoder(for: configuration.decoders.format(of: data)) != nil
        else { return }
        switch configuration.dataCachePolicy {
        case .storeOriginalData, .storeAll: break
        case .storeEncodedImages: guard request.processors.isEmpty else { return }
        }
        let key = request.sourceKey
        cacheWrites.withLock {
            $0.originals[key] = .queued
            $0.queuedOriginals[key] = DataCacheEntry(data: data, metadata: metadata)
        }
        diskQueue.enqueue(priority: .normal) { [self] in
            let proceeds = cacheWrites.withLock { writes -> Bool in
                guard writes.originals[key] != .rejected else {
                    writes.originals[key] = nil
                    return false
                }
                writes.originals[key] = .writing
                return true
            }
            guard proceeds else { return }
            write(data, key: key, metadata: metadata, dataCache: dataCache, request: request)
            let isRejected = cacheWrites.withLock { writes -> Bool in
                writes.queuedOriginals[key] = nil
                guard writes.originals[key] == .rejectedWhileWriting else {
                    writes.originals[key] = nil
                    return false
                }
                writes.originals[key] = .removing
                return true
            }
            if isRejected { remove(key, dataCache: dataCache) }
        }
    }

    /// Removes the rejected original under `key` now, on the calling (disk queue) thread, then forgets that it was
    /// being removed (unless a new download of the source has been handed to the disk queue since).
    private func remove(_ key: String, dataCache: any DataCaching) {
        dataCache.removeData(for: key)
        cacheWrites.withLock { writes in
            if writes.originals[key] == .removing { writes.originals[key] = nil }
        }
    }

    /// Whether the original under `key` was rejected (its bytes did not decode) and is, or may still be, on disk
    /// until its removal runs: a read of the disk cache must then miss, as it will once the removal has run, so
    /// that the failure cache answers instead of the bytes (and their revalidation with the origin).
    func isRejectedOriginal(_ key: String) -> Bool {
        switch cacheWrites.withLock({ $0.originals[key] }) {
        case .rejected?, .rejectedWhileWriting?, .removing?: true
        case .queued?, .writing?, nil: false
        }
    }

    /// What the pipeline knows of its own data-cache writes. The three tables change with the same writes and are
    /// read by the same stages, so they share one lock (``ImagePipeline/cacheWrites``).
    struct DataCacheWrites: Sendable {
        /// Processed images being encoded for the disk right now (to encode each once).
        var processedInFlight: Set<ImageCacheKey> = []
        /// Downloads whose original bytes are handed to the disk queue while their decode may still reject them, and
        /// rejected ones until their removal has run (reads of the disk cache miss them meanwhile).
        var originals: [String: OriginalStore] = [:]
        /// Processed-image keys this pipeline stored on disk, by source key (the disk cache cannot be listed).
        var processedKeys: [String: Set<ImageCacheKey>] = [:]
        /// The bytes of each original in ``originals`` until they are on disk, by source key: a load that starts
        /// after an identical one ended, but before its write ran, reads them here instead of downloading again.
        var queuedOriginals: [String: DataCacheEntry] = [:]

        /// Whether no write or removal is recorded here: each is recorded before its job is queued and forgotten
        /// by the job, so with the queues idle a recorded one is about to be queued.
        var isSettled: Bool { originals.isEmpty && processedInFlight.isEmpty }
    }

    /// Where the disk write of downloaded bytes stands while their decode may still reject them. The disk queue
    /// runs two jobs at once, so a removal queued after a store could otherwise run first and leave undecodable
    /// bytes on disk.
    enum OriginalStore: Sendable, Equatable {
        /// The store is queued: it will skip if rejected before it starts.
        case queued
        /// The store is running: a rejection now is carried out by the store job when it ends.
        case writing
        /// Rejected before the store started.
        case rejected
        /// Rejected while the store was running.
        case rejectedWhileWriting
        /// Rejected after the store: the removal is queued or running.
        case removing
    }

    /// Downloaded bytes failed to decode: makes sure they do not stay on disk under `key`, whatever the order in
    /// which the disk queue runs the store and this removal.
    func rejectOriginal(for key: String, dataCache: any DataCaching) {
        let removesNow = cacheWrites.withLock { writes -> Bool in
            writes.queuedOriginals[key] = nil
            switch writes.originals[key] {
            case .queued?:
                writes.originals[key] = .rejected
                return false
            case .writing?:
                writes.originals[key] = .rejectedWhileWriting
                return false
            case .rejected?, .rejectedWhileWriting?, .removing?:
                return false
            case nil:
                writes.originals[key] = .removing
                return true
            }
        }
        if removesNow { diskQueue.enqueue(priority: .normal) { [self] in remove(key, dataCache: dataCache) } }
    }

    func writeToDisk(
        _ data: Data, key: String, metadata: DataCacheMetadata, dataCache: any DataCaching, request: ImageRequest
    ) {
        diskQueue.enqueue(priority: .normal) { [self] in
            write(data, key: key, metadata: metadata, dataCache: dataCache, request: request)
        }
    }

    /// Stores now, on the calling (disk queue) thread, counting and reporting the write.
    private func write(
        _ data: Data, key: String, metadata: DataCacheMetadata, dataCache: any DataCaching, request: ImageRequest
    ) {
        let started = ContinuousClock.now
        dataCache.store(data, for: key, metadata: metadata)
        let elapsed = ContinuousClock.now - started
        counters.withLock {
            $0.diskWrites += 1
            $0.diskWriteTime += elapsed
        }
        emit(.storedOnDisk(source: request.sourceDescription, bytes: data.count))
    }

    /// After delivery work: the final image to memory, and the processed image to disk when asked.
    func store(_ output: ImageOutput, for request: ImageRequest) {
        if !request.options.contains(.skipsMemoryCacheWrites), !output.isInMemoryCache, !output.image.isPreview,
            let cache = configuration.imageCache
        {
            cache.store(output.image, for: request.imageCacheKey)
        }
        guard usesProcessedDiskEntries(request), !output.isFromProcessedEntry, !output.isMemoryHit,
            !request.options.contains(.skipsDiskCacheWrites), !output.image.isPreview,
            let dataCache = configuration.dataCache,
            let format = processedFormat(for: output.image)
        else { return }
        let key = request.imageCacheKey
        let isNew = cacheWrites.withLock { $0.processedInFlight.insert(key).inserted }
        guard isNew else { return }
        var processedMetadata = output.metadata ?? DataCacheMetadata()
        processedMetadata.validators = HTTPValidators()  // validators belong to the original; freshness carries over
        let metadata = processedMetadata
        let options = configuration.encodingOptions
        encodeQueue.enqueue(priority: .low) { [self] in
            defer { _ = cacheWrites.withLock { $0.processedInFlight.remove(key) } }
            guard let data = try? configuration.encoders.encode(output.image, as: format, options: options)
            else { return }
            rememberProcessedKey(key)
            writeToDisk(data, key: key.dataCacheKey, metadata: metadata, dataCache: dataCache, request: request)
        }
    }

    /// The format a processed image is stored in: ``Configuration/processedImageFormat``, else the source format
    /// when an encoder for it is registered, else PNG. An animated image is stored only by an encoder that keeps
    /// its frames: without a configured format, the source format's when it does (GIF, WebP), else the newest
    /// such encoder (animated WebP); `nil` when there is none (or the configured format's encoder writes stills).
    func processedFormat(for image: ImageContainer) -> ImageFormat? {
        let encoders = configuration.encoders
        if let format = configuration.processedImageFormat {
            return !image.isAnimated || encoders.encoder(for: format)?.encodesAnimation == true ? format : nil
        }
        let still = encoders.encoder(for: image.format) != nil ? image.format : .png
        guard image.isAnimated else { return still }
        return encoders.encoder(for: still)?.encodesAnimation == true ? still : encoders.animatedFormat
    }
}
