import Foundation

/// The bytes a load produced, shared by every decode that needs them.
struct DataOutput: Sendable {
    var data: Data
    var source: ImageResponse.Source
    /// What to store beside the bytes (or what the disk said); `nil` when they must not be stored.
    var metadata: DataCacheMetadata?
    /// Set when the bytes came from a stale disk entry now being revalidated.
    var revalidation: Revalidation?
    var metrics = ImageResponse.Metrics()
}

/// An image a decode or processor produced, shared by every request that needs it.
struct ImageOutput: Sendable {
    var image: ImageContainer
    var source: ImageResponse.Source
    var revalidation: Revalidation?
    var metrics = ImageResponse.Metrics()
    /// The original bytes and their metadata (for storing under the data-cache policy).
    var data: Data?
    var metadata: DataCacheMetadata?
    /// The image was decoded from a stored processed image (nothing left to store).
    var isFromProcessedEntry = false
    /// The image is a memory-cache hit itself (an intermediate found there): no work was done.
    var isMemoryHit = false
    /// The image is already in the memory cache under the request's key (a hit, or stored by the node before it
    /// was delivered), so storing it again is pointless.
    var isInMemoryCache = false
}

extension ImagePipeline {
    /// Runs `task`: memory cache (unless the caller already looked), then the shared work for its final image.
    func start(_ task: ImageTask, checkingMemory: Bool) {
        let request = task.request
        guard runningTasks.insert(task) else {  // invalidated: fail at once
            return task.deliverResult(.failure(.invalidated), awaitsUpdate: false)
        }
        emit(.taskStarted(taskID: task.id, source: request.sourceDescription))
        if checkingMemory, let response = cachedResponse(for: request) {
            finish(task, .success(response), revalidation: nil)
            return
        }
        let joinedBox = Locked(false)
        let (subscription, joined) = subscribeImage(
            request, processorCount: request.processors.count, priority: task.priority
        ) { [self] event in
            switch event {
            case .progress(let completed, let total):
                task.deliverProgress(ImageTask.Progress(completed: completed, total: total))
            case .preview(let image):
                counters.withLock { $0.previewsDelivered += 1 }
                task.deliverPreview(image)
            case .partialData: break
            case .value(let output):
                var response = ImageResponse(
                    image: output.image, request: request, source: output.source,
                    isCoalesced: joinedBox.withLock { $0 },
                    isStale: output.revalidation != nil, metrics: output.metrics)
                response.metrics.total = .now - task.startTime
                store(output, for: request)
                finish(task, .success(response), revalidation: output.revalidation)
            case .failure(let error):
                finish(task, .failure(error), revalidation: nil)
            }
        }
        if joined {
            joinedBox.withLock { $0 = true }
            noteJoin(request.processors.isEmpty ? .decode : .process, request)
        }
        task.attach(subscription)
    }

    private func finish(
        _ task: ImageTask, _ result: Result<ImageResponse, Error>, revalidation: Revalidation?
    ) {
        switch result {
        case .success: break
        case .failure(let error): counters.withLock { $0.failures[error.kind, default: 0] += 1 }
        }
        emit(.taskFinished(taskID: task.id, source: task.request.sourceDescription, result: result.map(\.source)))
        let awaitsUpdate = revalidation != nil && task.request.options.contains(.deliversUpdates)
        task.deliverResult(result, awaitsUpdate: awaitsUpdate)
        guard awaitsUpdate, let revalidation else { return }
        revalidation.onComplete { [self] outcome, _ in
            guard outcome == .updated else { return task.deliverUpdate(nil) }
            // The caches now hold the new content: run the request again past the memory cache (purged anyway).
            var again = task.request
            again.options.insert([.skipsMemoryCacheReads, .skipsRevalidation])
            var handlers = ImageTask.Handlers()
            handlers.completion = { result in task.deliverUpdate(try? result.get()) }
            start(makeTask(again, handlers: handlers), checkingMemory: false)
        }
    }

    /// Records that a request joined shared work instead of starting its own.
    func noteJoin(_ stage: Stage, _ request: ImageRequest) {
        counters.withLock { $0.coalescedJoins += 1 }
        emit(.coalesced(stage: stage, source: request.sourceDescription))
    }
}
