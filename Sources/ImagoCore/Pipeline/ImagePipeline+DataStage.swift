import Foundation

extension ImagePipeline {
    /// Subscribes to the encoded bytes for `request` (disk cache, failure cache, then the source), sharing one
    /// load among identical requests.
    func subscribeData(
        _ request: ImageRequest, priority: RequestPriority, handler: @escaping @Sendable (WorkEvent<DataOutput>) -> Void
    ) -> (WorkSubscription, joined: Bool) {
        let coalesces = coalescingEnabled && !request.options.contains(.disablesCoalescing)
        return graph.subscribe(key: .data(request.loadKey), coalesces: coalesces, priority: priority, handler: handler)
        {
            node in
            startDataNode(node, request: request)
        }
    }

    private func startDataNode(_ node: WorkNode<DataOutput>, request: ImageRequest) {
        switch request.source {
        case .data(_, let data):
            return graph.emit(node, .value(DataOutput(data: data, source: .custom, metadata: nil)))
        case .invalidURL(let text):
            return graph.emit(node, .failure(.invalidURL(text)))
        case .url, .loader: break
        }
        // Local bytes are never stored on disk, so there is nothing to read there.
        guard request.options.readsDisk, !request.isLocalSource, let dataCache = configuration.dataCache else {
            return loadFromSharedTier(node, request: request)
        }
        let key = request.sourceKey
        // Bytes an earlier load handed to the disk queue and that are not written yet: the disk cache's own, early
        // (and as stale as they would be on disk: a response with `max-age=0` is revalidated here too).
        if let queued = cacheWrites.withLock({ $0.queuedOriginals[key] }) {
            return deliver(queued, to: node, request: request, readStarted: nil)
        }
        let item = diskQueue.enqueue(priority: graph.priority(of: node)) { [self] in
            guard !graph.isCancelled(node) else { return }
            let started = ContinuousClock.now
            // Bytes rejected as undecodable read as the miss they are about to be (the disk queue may run this read
            // beside their removal).
            guard !isRejectedOriginal(key), let entry = dataCache.entry(for: key) else {
                counters.withLock { $0.diskMisses += 1 }
                emit(.diskCacheMiss(source: request.sourceDescription))
                return loadFromSharedTier(node, request: request)
            }
            deliver(entry, to: node, request: request, readStarted: started)
        }
        graph.onCancel(node) { [diskQueue] in diskQueue.cancel(item) }
        graph.onPriorityChange(node) { [diskQueue] in diskQueue.setPriority(item, $0) }
    }

    /// Emits the disk cache's `entry` (read from disk from `readStarted`, or still queued for its write when `nil`)
    /// as `node`'s value: counted as a disk hit, fresh or stale; a stale entry of a URL is revalidated, and with
    /// ``ImageRequest/Options/revalidatesBeforeDelivery`` emitted only once the origin has answered.
    private func deliver(
        _ entry: DataCacheEntry, to node: WorkNode<DataOutput>, request: ImageRequest,
        readStarted: ContinuousClock.Instant?
    ) {
        let isStale = isStale(entry.metadata)
        counters.withLock {
            $0.diskHits += 1
            if isStale { $0.staleDiskHits += 1 }
        }
        emit(.diskCacheHit(source: request.sourceDescription, isStale: isStale))
        var output = DataOutput(data: entry.data, source: .disk, metadata: entry.metadata)
        if let readStarted { output.metrics.diskRead = .now - readStarted }
        if isStale, configuration.isRevalidationEnabled, case .url(let url) = request.source,
            request.options.isDisjoint(with: [.skipsRevalidation, .skipsLoading])
        {
            let revalidation = revalidate(request, url: url, entry: entry)
            output.revalidation = revalidation
            if request.options.contains(.revalidatesBeforeDelivery) {
                // The entry with its renewed metadata, or the new bytes; the origin's 404 or 410 when the source
                // is gone, and its other lasting 4xx when it refuses; the stale entry when the request failed.
                let started = readStarted ?? .now
                return revalidation.onComplete { [graph, output] outcome, current in
                    switch outcome {
                    case .gone(let error), .refused(let error):
                        return graph.emit(node, .failure(.dataLoadingFailed(url: url, underlying: error)))
                    case .notModified, .updated, .failed: break
                    }
                    guard var current else { return graph.emit(node, .value(output)) }
                    current.metrics.diskRead = output.metrics.diskRead
                    if current.source == .network { current.metrics.load = .now - started }
                    graph.emit(node, .value(current))
                }
            }
        }
        graph.emit(node, .value(output))
    }

    /// Whether a disk entry is past its freshness under the configured ``Freshness``.
    func isStale(_ metadata: DataCacheMetadata, now: Date = Date()) -> Bool {
        switch configuration.freshness {
        case .alwaysFresh: return false
        case .fixed(let lifetime): return now >= metadata.storedAt.addingTimeInterval(lifetime.timeInterval)
        case .httpHeaders(let fallback):
            if let expiresAt = metadata.expiresAt { return now >= expiresAt }
            guard let fallback else { return false }
            return now >= metadata.storedAt.addingTimeInterval(fallback.timeInterval)
        }
    }

    func loadFromSource(_ node: WorkNode<DataOutput>, request: ImageRequest) {
        guard !request.options.contains(.skipsLoading) else {
            return graph.emit(node, .failure(.notCached(request.sourceDescription)))
        }
        switch request.source {
        case .data(_, let data):
            graph.emit(node, .value(DataOutput(data: data, source: .custom, metadata: nil)))
        case .invalidURL(let text):
            graph.emit(node, .failure(.invalidURL(text)))
        case .loader(let id, let body):
            let started = ContinuousClock.now
            let task = Task { [self] in
                do {
                    let data = try await body()
                    var output = DataOutput(data: data, source: .custom, metadata: DataCacheMetadata())
                    output.metrics.load = .now - started
                    storeOriginal(data, metadata: output.metadata, for: request)
                    graph.emit(node, .value(output))
                } catch {
                    graph.emit(node, .failure(.dataSourceFailed(id: id, reason: "\(error)")))
                }
            }
            graph.onCancel(node) { task.cancel() }
        case .url(let url):
            if let remembered = rememberedFailure(for: request) {
                counters.withLock { $0.failureCacheHits += 1 }
                releaseSharedLease(for: request)
                let error = Error.failedRecently(url: url, until: remembered.expiresAt, reason: remembered.reason)
                return graph.emit(node, .failure(error))
            }
            load(url, node: node, request: request)
        }
    }

    private func load(_ url: URL, node: WorkNode<DataOutput>, request: ImageRequest) {
        let started = ContinuousClock.now
        counters.withLock { $0.networkLoads += 1 }
        emit(.loadStarted(source: request.sourceDescription))
        let dataRequest = DataRequest(
            url: url, headers: request.headers, priority: graph.priority(of: node),
            reportsPartialData: request.options.contains(.deliversPreviews))
        let task = configuration.dataLoader.load(dataRequest) { [self] event in
            switch event {
            case .progress(let received, let expected):
                graph.emit(node, .progress(completed: received, total: expected))
            case .partialData(let data):
                graph.emit(node, .partialData(data))
            case .finished(let response):
                let elapsed = ContinuousClock.now - started
                counters.withLock { $0.networkBytes += Int64(response.data.count) }
                emit(.loadFinished(source: request.sourceDescription, bytes: response.data.count, duration: elapsed))
                forgetFailure(for: request)
                let metadata = makeMetadata(from: response)
                shareOriginal(response.data, metadata: makeSharedMetadata(from: response), for: request)
                storeOriginal(response.data, metadata: metadata, for: request)
                var output = DataOutput(data: response.data, source: .network, metadata: metadata)
                output.metrics.load = elapsed
                graph.emit(node, .value(output))
            case .failed(let error):
                let failure = Error.dataLoadingFailed(url: url, underlying: error)
                releaseSharedLease(for: request)
                if error != .cancelled {
                    rememberFailure(error, for: request)
                    emit(.loadFailed(source: request.sourceDescription, error: failure))
                }
                graph.emit(node, .failure(failure))
            }
        }
        graph.onCancel(node) { task.cancel() }
        graph.onPriorityChange(node) { task.setPriority($0) }
    }

    // MARK: - Failure cache

    private func rememberedFailure(for request: ImageRequest) -> FailureCache.Failure? {
        guard let failureCache = configuration.failureCache,
            request.options.isDisjoint(with: [.skipsFailureCacheReads, .reloadsIgnoringCaches])
        else { return nil }
        return failureCache.failure(for: request.failureKey)
    }

    private func rememberFailure(_ error: DataLoadingError, for request: ImageRequest) {
        guard !request.options.contains(.skipsFailureCacheWrites) else { return }
        configuration.failureCache?.record(error, for: request.failureKey)
    }

    private func forgetFailure(for request: ImageRequest) {
        configuration.failureCache?.removeFailure(for: request.failureKey)
    }
}
