import Dispatch
import Foundation
import Synchronization

/// Loads images: memory cache → disk cache → loader → decode → process → both caches → caller, sharing identical
/// work between requests in flight at every stage.
///
/// Thread-safe; use one pipeline for the whole program (`Imago` provides `ImagePipeline.shared`). Two APIs over
/// one engine: `async` (``image(for:)-(ImageRequest)``, ``response(for:)``) and callbacks
/// (``loadImage(with:progress:updated:completion:)``), plus the synchronous ``cachedImage(for:)``.
///
/// ```swift
/// let cache = try DiskCache(directory: URL(fileURLWithPath: "/var/cache/images"))
/// let pipeline = ImagePipeline(configuration: .init(dataCache: cache))
/// let image = try await pipeline.image(for: ImageRequest(url: url, processors: [.resize(width: 256, height: 256)]))
/// ```
public final class ImagePipeline: Sendable {
    /// What the pipeline was made with.
    public let configuration: Configuration

    let graph = WorkGraph()
    let decodeQueue: WorkQueue
    let processQueue: WorkQueue
    let encodeQueue: WorkQueue
    /// Disk reads and writes (``Configuration/maximumConcurrentDiskOperations`` at once); the server reads its output
    /// cache on it too.
    package let diskQueue: WorkQueue
    // One lock per group of state that changes apart: revalidations in flight, the counters (touched by every
    // request, so kept alone), the event observers, and the record of the pipeline's data-cache writes.
    let revalidations = Locked<[String: Revalidation]>([:])
    let counters = Locked(Statistics())
    let observers = Locked<(next: Int, continuations: [Int: AsyncStream<Event>.Continuation])>((0, [:]))
    /// The pipeline's record of its own data-cache writes (``DataCacheWrites``), behind one lock.
    let cacheWrites = Locked(DataCacheWrites())
    private let taskIDs = Atomic<Int>(0)
    /// Tasks started and not yet ended (result delivered or cancelled); closed once invalidated.
    let runningTasks = TaskRegistry()
    /// Leases and background writes of ``Configuration/sharedCache`` (see `ImagePipeline+SharedTier.swift`).
    let sharedTier = SharedTierState()

    /// A pipeline made of `configuration`.
    public init(configuration: Configuration) {
        self.configuration = configuration
        decodeQueue =
            configuration.cpuQueue
            ?? WorkQueue(label: "imago.decode", maxConcurrentCount: configuration.maximumConcurrentDecodes)
        processQueue =
            configuration.cpuQueue
            ?? WorkQueue(label: "imago.process", maxConcurrentCount: configuration.maximumConcurrentProcessorRuns)
        encodeQueue = WorkQueue(label: "imago.encode", maxConcurrentCount: configuration.maximumConcurrentEncodes)
        diskQueue = WorkQueue(label: "imago.disk", maxConcurrentCount: configuration.maximumConcurrentDiskOperations)
        // Interrupted downloads resume from the disk cache's staging area rather than from the loader's memory.
        if let disk = configuration.dataCache as? DiskCache,
            let loader = configuration.dataLoader as? any ResumeStoreAdopting
        {
            loader.adoptResumeStore(disk.resumeStore)
        }
    }

    /// A pipeline with the default configuration changed by `configure`.
    public convenience init(_ configure: (inout Configuration) -> Void) {
        var configuration = Configuration()
        configure(&configuration)
        self.init(configuration: configuration)
    }

    // MARK: - Async API

    /// The image for `request`.
    ///
    /// A memory-cache hit returns without leaving the calling thread. Cancelling the calling Swift task cancels
    /// the request (work shared with other requests goes on).
    ///
    /// - Throws: ``Error`` (``Error/cancelled`` when the calling task is cancelled, ``Error/invalidated`` for a
    ///   load after ``invalidate()``; a memory-cache hit is still returned).
    public func image(for request: ImageRequest) async throws(Error) -> ImageContainer {
        // The memory check is repeated here rather than in a nested async call: one async frame less on a hit.
        if let response = cachedResponse(for: request) { return response.image }
        return try await loadResponse(for: request).image
    }

    /// The image at `url` (a request with every default).
    ///
    /// - Throws: ``Error``.
    public func image(for url: URL) async throws(Error) -> ImageContainer {
        try await image(for: ImageRequest(url: url))
    }

    /// The image for `request` with where it came from and what each stage cost.
    ///
    /// - Throws: ``Error``.
    public func response(for request: ImageRequest) async throws(Error) -> ImageResponse {
        if let response = cachedResponse(for: request) { return response }
        return try await loadResponse(for: request)
    }

    /// Runs `request` past the memory cache (already checked by the caller).
    private func loadResponse(for request: ImageRequest) async throws(Error) -> ImageResponse {
        let box = Locked<ImageTask?>(nil)
        do {
            // The continuation carries the bare response (an untyped error on failure, cast back below): a
            // `Result<ImageResponse, Error>` payload is larger and is copied at every hand-over of a burst.
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation {
                    (continuation: CheckedContinuation<ImageResponse, any Swift.Error>) in
                    var handlers = ImageTask.Handlers()
                    handlers.reportsCancellation = true
                    handlers.completion = { result in
                        switch result {
                        case .success(let response): continuation.resume(returning: response)
                        case .failure(let error): continuation.resume(throwing: error)
                        }
                    }
                    let task = makeTask(request, handlers: handlers)
                    box.withLock { $0 = task }
                    if Task.isCancelled {
                        task.cancel()
                    } else {
                        start(task, checkingMemory: false)
                    }
                }
            } onCancel: {
                box.withLock { $0 }?.cancel()
            }
        } catch let error as Error {
            throw error
        } catch {
            throw .cancelled  // unreachable: the completion only fails with `Error`
        }
    }

    // MARK: - Synchronous memory-cache check

    /// The image for `request` if the memory cache holds it (and the request may read it), else `nil`.
    /// Synchronous and lock-based: never hops to another thread.
    public func cachedImage(for request: ImageRequest) -> ImageContainer? {
        guard request.options.readsMemory, let cache = configuration.imageCache else { return nil }
        return cache.image(for: request.imageCacheKey)
    }

    /// The memory-cache hit for `request` as a response (counted in the statistics), else `nil`.
    public func cachedResponse(for request: ImageRequest) -> ImageResponse? {
        guard request.options.readsMemory, let cache = configuration.imageCache else { return nil }
        guard let image = cache.image(for: request.imageCacheKey) else {
            counters.withLock { $0.memoryMisses += 1 }
            emit(.memoryCacheMiss(source: request.sourceDescription))
            return nil
        }
        counters.withLock { $0.memoryHits += 1 }
        emit(.memoryCacheHit(source: request.sourceDescription))
        return ImageResponse(image: image, request: request, source: .memory)
    }

    // MARK: - Callback API

    /// Starts loading `request` and returns its task.
    ///
    /// - Parameters:
    ///   - request: what to load.
    ///   - progress: called with the bytes received so far (default `nil`).
    ///   - updated: called once more with the new image if a stale disk entry was delivered and revalidation
    ///     found new content (only for requests with ``ImageRequest/Options/deliversUpdates``; default `nil`).
    ///   - completion: called once with the result, unless the task is cancelled first.
    ///
    /// Every callback runs on ``Configuration/callbackQueue``, a task's callbacks in order. A memory-cache hit is
    /// delivered there too (use ``cachedImage(for:)`` to show it synchronously).
    @discardableResult
    public func loadImage(
        with request: ImageRequest,
        progress: (@Sendable (ImageTask.Progress) -> Void)? = nil,
        updated: (@Sendable (ImageResponse) -> Void)? = nil,
        completion: @escaping @Sendable (Result<ImageResponse, Error>) -> Void
    ) -> ImageTask {
        var handlers = ImageTask.Handlers()
        handlers.queue = configuration.callbackQueue
        handlers.progress = progress
        handlers.updated = updated
        handlers.completion = completion
        let task = makeTask(request, handlers: handlers)
        start(task, checkingMemory: true)
        return task
    }

    /// Starts loading `request` and returns its task: await ``ImageTask/image`` or ``ImageTask/response``, iterate
    /// ``ImageTask/previews`` or ``ImageTask/events``, change its ``ImageTask/priority`` or ``ImageTask/cancel()``
    /// it (Nuke's `imageTask(with:)`). A memory-cache hit finishes the task at once.
    ///
    /// ```swift
    /// let task = pipeline.imageTask(with: request)
    /// for await preview in task.previews { show(preview) }
    /// let image = try await task.image
    /// ```
    public func imageTask(with request: ImageRequest) -> ImageTask {
        loadImage(with: request)
    }

    /// Starts loading `request` with no callback; follow it through ``ImageTask/events`` (see also
    /// ``imageTask(with:)``).
    @discardableResult
    public func loadImage(with request: ImageRequest) -> ImageTask {
        let task = makeTask(request, handlers: ImageTask.Handlers(queue: configuration.callbackQueue))
        start(task, checkingMemory: true)
        return task
    }

    // MARK: - Observability

    /// The counters so far.
    public var statistics: Statistics { counters.withLock { $0 } }

    /// Zeroes the counters.
    public func resetStatistics() { counters.withLock { $0 = Statistics() } }

    /// A stream of every event from now on; it ends when you stop iterating (the stream is dropped).
    public func events() -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream<Event>.makeStream(bufferingPolicy: .bufferingNewest(10_000))
        let id = observers.withLock { o -> Int in
            o.next += 1
            o.continuations[o.next] = continuation
            return o.next
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.observers.withLock { $0.continuations.removeValue(forKey: id) }
        }
        return stream
    }

    /// Sends `event` to observers and the logger (only builds work when someone listens).
    func emit(_ event: @autoclosure () -> Event) {
        let listeners = observers.withLock { Array($0.continuations.values) }
        let logger = configuration.logger
        guard !listeners.isEmpty || logger != nil else { return }
        let event = event()
        for c in listeners { c.yield(event) }
        logger?(LogRecord(level: event.level, event: event))
    }

    // MARK: - Tasks

    func makeTask(_ request: ImageRequest, handlers: ImageTask.Handlers) -> ImageTask {
        let id = taskIDs.add(1, ordering: .relaxed).newValue
        var handlers = handlers
        handlers.onEnd = { [runningTasks] task in runningTasks.remove(task.id) }
        return ImageTask(id: id, request: request, handlers: handlers)
    }
}

extension ImagePipeline {
    /// Whether no shared work (load, decode, processing) is in flight. For tests and diagnostics.
    package var graphIsIdle: Bool { graph.inFlightCount == 0 }

    /// How many tasks are in flight: started and neither finished nor cancelled (memory-cache hits of the async
    /// API never count). For diagnostics and shutdown.
    public var tasksInFlightCount: Int { runningTasks.count }
}
