import Foundation

/// Per-node state of an image stage: the queued work item and the preview throttle.
final class StageContext: Sendable {
    struct State {
        /// Every item queued for the node (a disk read, then a decode …); finished ones are no-ops to cancel.
        var items: [(WorkQueue.Item, WorkQueue)] = []
        var isPreviewRunning = false
        var lastPreviewBytes = 0
        var expectedBytes: Int64?
    }
    let state = Locked(State())

    func setItem(_ item: WorkQueue.Item, on queue: WorkQueue) {
        state.withLock { $0.items.append((item, queue)) }
    }

    func cancel() {
        for (item, queue) in state.withLock({ $0.items }) { queue.cancel(item) }
    }

    func setPriority(_ priority: RequestPriority) {
        for (item, queue) in state.withLock({ $0.items }) { queue.setPriority(item, priority) }
    }
}

extension ImagePipeline {
    /// The name of the shared work producing `request`'s image after its first `n` processors.
    func imageNodeKey(_ request: ImageRequest, processorCount n: Int) -> WorkKey {
        let affecting: ImageRequest.Options = [.skipsMemoryCacheReads, .storesProcessedImageOnDisk, .keepsOriginalData]
        return .image(
            ImageWorkKey(
                load: request.loadKey, image: request.imageCacheKey(processorCount: n),
                options: request.options.intersection(affecting), decodingOptions: request.decodingOptions))
    }

    var coalescingEnabled: Bool { configuration.isCoalescingEnabled }

    /// Whether processed images are read from (and written to) the disk cache for `request`.
    func usesProcessedDiskEntries(_ request: ImageRequest) -> Bool {
        guard configuration.dataCache != nil, !request.processors.isEmpty, !request.isLocalSource else { return false }
        if request.options.contains(.storesProcessedImageOnDisk) { return true }
        return configuration.dataCachePolicy != .storeOriginalData
    }

    /// Subscribes to the image after `request`'s first `n` processors (0: the decoded image), starting it if needed.
    func subscribeImage(
        _ request: ImageRequest, processorCount n: Int, priority: RequestPriority,
        handler: @escaping @Sendable (WorkEvent<ImageOutput>) -> Void
    ) -> (WorkSubscription, joined: Bool) {
        let coalesces = coalescingEnabled && !request.options.contains(.disablesCoalescing)
        return graph.subscribe(
            key: imageNodeKey(request, processorCount: n), coalesces: coalesces, priority: priority, handler: handler
        ) { node in
            startImageNode(node, request: request, processorCount: n)
        }
    }

    private func startImageNode(_ node: WorkNode<ImageOutput>, request: ImageRequest, processorCount n: Int) {
        // An intermediate image may already be in memory (another request's final image). The final image may be
        // too: a request that missed the memory cache just before an identical node stored its image, and then
        // found that node gone, would otherwise download and decode again (seen: 2 of 1,000 concurrent requests).
        if request.options.readsMemory, let cache = configuration.imageCache,
            let image = cache.image(for: request.imageCacheKey(processorCount: n))
        {
            graph.emit(
                node, .value(ImageOutput(image: image, source: .memory, isMemoryHit: true, isInMemoryCache: true)))
            return
        }
        let context = StageContext()
        graph.onCancel(node) { context.cancel() }
        graph.onPriorityChange(node) { context.setPriority($0) }
        if n > 0, request.options.readsDisk, usesProcessedDiskEntries(request), let dataCache = configuration.dataCache
        {
            let key = request.imageCacheKey(processorCount: n).dataCacheKey
            let item = diskQueue.enqueue(priority: graph.priority(of: node)) { [self] in
                let started = ContinuousClock.now
                guard let entry = dataCache.entry(for: key), !entry.metadata.isStale() else {
                    counters.withLock { $0.diskMisses += 1 }
                    return startDependency(node, context, request: request, processorCount: n)
                }
                counters.withLock { $0.diskHits += 1 }
                emit(.diskCacheHit(source: request.sourceDescription, isStale: false))
                var metrics = ImageResponse.Metrics()
                metrics.diskRead = .now - started
                let output = DataOutput(data: entry.data, source: .disk, metadata: entry.metadata, metrics: metrics)
                decode(output, node: node, context: context, request: request, processedEntryOf: n)
            }
            context.setItem(item, on: diskQueue)
            return
        }
        startDependency(node, context, request: request, processorCount: n)
    }

    /// Subscribes the node to what it is made from: the data (decode stage) or the previous processor's image.
    private func startDependency(
        _ node: WorkNode<ImageOutput>, _ context: StageContext, request: ImageRequest, processorCount n: Int
    ) {
        let priority = graph.priority(of: node)
        let subscription: WorkSubscription
        if n == 0 {
            let (s, joined) = subscribeData(request, priority: priority) { [self] event in
                switch event {
                case .progress(let c, let t):
                    context.state.withLock { $0.expectedBytes = t }
                    graph.emit(node, .progress(completed: c, total: t))
                case .partialData(let data): decodePreview(data, node: node, context: context, request: request)
                case .preview: break
                case .value(let output): decode(output, node: node, context: context, request: request)
                case .failure(let error): graph.emit(node, .failure(error))
                }
            }
            if joined { noteJoin(.load, request) }
            subscription = s
        } else {
            let (s, joined) = subscribeImage(request, processorCount: n - 1, priority: priority) { [self] event in
                switch event {
                case .progress(let c, let t): graph.emit(node, .progress(completed: c, total: t))
                case .partialData: break
                case .preview(let image): processPreview(image, node: node, context: context, request: request, n)
                case .value(let output): process(output, node: node, context: context, request: request, n)
                case .failure(let error): graph.emit(node, .failure(error))
                }
            }
            if joined { noteJoin(n == 1 ? .decode : .process, request) }
            subscription = s
        }
        graph.onCancel(node) {
            subscription.unsubscribe()
            context.cancel()
        }
        graph.onPriorityChange(node) { p in
            subscription.setPriority(p)
            context.setPriority(p)
        }
    }

    private func decode(
        _ data: DataOutput, node: WorkNode<ImageOutput>, context: StageContext, request: ImageRequest,
        processedEntryOf processorCount: Int? = nil
    ) {
        let item = decodeQueue.enqueue(priority: graph.priority(of: node)) { [self] in
            guard !graph.isCancelled(node) else { return }
            let started = ContinuousClock.now
            let result = decodeImage(
                data.data, request: request, partial: false, derivesTarget: processorCount == nil)
            let elapsed = ContinuousClock.now - started
            counters.withLock {
                $0.decodeCount += 1
                $0.decodeTime += elapsed
            }
            switch result {
            case .success(let image):
                if image.isPreview, data.source == .network, let dataCache = configuration.dataCache {
                    rejectOriginal(for: request.sourceKey, dataCache: dataCache)  // incomplete bytes: off the disk
                }
                emit(.decoded(source: request.sourceDescription, duration: elapsed, isPreview: false))
                var metrics = data.metrics
                metrics.decode = elapsed
                let output = ImageOutput(
                    image: image, source: data.source, revalidation: data.revalidation, metrics: metrics,
                    data: data.data, metadata: data.metadata, isFromProcessedEntry: processorCount != nil)
                finishImageNode(node, output, request: request, processorCount: processorCount ?? 0)
            case .failure(let error):
                // Undecodable downloads are remembered like failed loads: fetching them again would not help.
                if data.source == .network, !request.options.contains(.skipsFailureCacheWrites) {
                    let why = if case .decodingFailed(_, let codec) = error { codec.description } else { "\(error)" }
                    configuration.failureCache?.record(.decode(why), for: request.failureKey)
                }
                if data.source == .network, let dataCache = configuration.dataCache {
                    rejectOriginal(for: request.sourceKey, dataCache: dataCache)
                }
                graph.emit(node, .failure(error))
            }
        }
        context.setItem(item, on: decodeQueue)
    }

    /// Decodes with the request's options (target size, first frame, partial data). Without a target size, the
    /// first processor's decode target applies (`derivesTarget`; not for a stored processed image, already final).
    func decodeImage(
        _ data: Data, request: ImageRequest, partial: Bool, derivesTarget: Bool = true
    ) -> Result<ImageContainer, Error> {
        var options = request.decodingOptions ?? configuration.decodingOptions
        if let size = request.targetSize {
            options.targetSize = size
        } else if derivesTarget, options.targetSize == nil, let target = request.derivedDecodeTarget,
            target.shrinking == .any || target.applies(to: configuration.decoders.format(of: data))
        {
            // A target reached only by a reduced decode goes to JPEGs (and SVGs) only, one that rasters may not
            // shrink to SVGs only; other formats decode at full size.
            options.targetSize = target.size
            options.targetMode = target.mode
            options.shrinksOnlyWhileDecoding = target.shrinksOnlyWhileDecoding
        }
        if request.options.contains(.decodesFirstFrameOnly) { options.decodesFirstFrameOnly = true }
        // Data that ran out fails the final decode, unless the request's own decoding options allow partial
        // data; a partial result is then a preview, which no cache stores.
        options.allowsPartialData = partial || (request.decodingOptions?.allowsPartialData ?? false)
        do {
            var image = try configuration.decoders.decode(data, options: options)
            if request.options.contains(.keepsOriginalData), !partial { image.originalData = data }
            return .success(image)
        } catch let error as CodecError {
            return .failure(.decodingFailed(source: request.sourceDescription, underlying: error))
        } catch {
            let codec = CodecError.corrupt(format: configuration.decoders.format(of: data), reason: "\(error)")
            return .failure(.decodingFailed(source: request.sourceDescription, underlying: codec))
        }
    }

    private func process(
        _ input: ImageOutput, node: WorkNode<ImageOutput>, context: StageContext, request: ImageRequest, _ n: Int
    ) {
        let processor = request.processors[n - 1]
        let item = processQueue.enqueue(priority: graph.priority(of: node)) { [self] in
            guard !graph.isCancelled(node) else { return }
            let started = ContinuousClock.now
            do {
                let profile = input.image.colorProfile
                let image = try input.image.mapFramesLazily { try processor.process($0, profile: profile) }
                let elapsed = ContinuousClock.now - started
                counters.withLock {
                    $0.processCount += 1
                    $0.processTime += elapsed
                }
                emit(.processed(identifier: processor.identifier, duration: elapsed))
                var output = input
                output.image = image
                output.isMemoryHit = false
                output.isInMemoryCache = false
                output.metrics.process = (input.metrics.process ?? .zero) + elapsed
                finishImageNode(node, output, request: request, processorCount: n)
            } catch {
                graph.emit(node, .failure(.processingFailed(identifier: processor.identifier, reason: "\(error)")))
            }
        }
        context.setItem(item, on: processQueue)
    }

    /// Delivers a node's image. When the node makes its creator's final image, it goes to the memory cache first:
    /// a request arriving between the node's end and the delivery then hits the cache instead of starting over.
    private func finishImageNode(
        _ node: WorkNode<ImageOutput>, _ output: ImageOutput, request: ImageRequest, processorCount n: Int
    ) {
        var output = output
        if n == request.processors.count, !graph.isCancelled(node), !request.options.contains(.skipsMemoryCacheWrites),
            !output.image.isPreview, let cache = configuration.imageCache
        {
            cache.store(output.image, for: request.imageCacheKey)
            output.isInMemoryCache = true
        }
        graph.emit(node, .value(output))
    }
}
