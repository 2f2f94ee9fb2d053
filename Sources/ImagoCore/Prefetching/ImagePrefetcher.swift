import Foundation

/// Loads images ahead of need (the rows below the visible ones) at low priority, a few at a time, into the disk
/// cache only or into both caches.
///
/// Thread-safe. Requests already cached (in memory, or on disk for ``Destination/diskCache``) are counted as
/// skipped without work; starting a request already pending or running does nothing; stopping cancels it (work
/// shared with a visible request goes on). A batch can report when every request of it has finished.
///
/// ```swift
/// let prefetcher = ImagePrefetcher(pipeline: pipeline, destination: .diskCache)
/// prefetcher.startPrefetching(with: upcomingURLs) { counts in print("batch done", counts) }
/// prefetcher.stopPrefetching(with: urlsScrolledPast)
/// ```
public final class ImagePrefetcher: Sendable {
    /// Where prefetched images go.
    public enum Destination: Sendable, Hashable {
        /// Decoded (and processed) into the memory cache, with the bytes on disk: ready to show at once.
        case memoryCache
        /// Only the encoded bytes, to the disk cache: nothing is decoded (cheaper; decoded when shown).
        case diskCache
    }

    /// The counters of a prefetcher (or of one batch).
    public struct Statistics: Sendable, Hashable {
        /// Requests loaded.
        public var completed = 0
        /// Requests that failed.
        public var failed = 0
        /// Requests stopped before they completed.
        public var cancelled = 0
        /// Requests waiting for a slot.
        public var pending = 0
        /// Requests loading now.
        public var running = 0
        /// Requests skipped because their image was already cached (in memory, or on disk for
        /// ``Destination/diskCache``).
        public var skipped = 0

        /// Counters with the given values (each default 0), for tests and callers that compare or sum them.
        public init(
            completed: Int = 0, failed: Int = 0, cancelled: Int = 0, pending: Int = 0, running: Int = 0,
            skipped: Int = 0
        ) {
            self.completed = completed
            self.failed = failed
            self.cancelled = cancelled
            self.pending = pending
            self.running = running
            self.skipped = skipped
        }
    }

    /// How one request ended.
    public enum Outcome: Sendable, Hashable {
        /// It loaded.
        case completed
        /// It failed.
        case failed
        /// It was stopped first.
        case cancelled
        /// Its image was already cached: nothing was loaded.
        case skipped
    }

    /// What `onComplete` receives for each request that ended by loading, failing or being skipped.
    public struct Completion: Sendable {
        /// The request, as started.
        public let request: ImageRequest
        /// How it ended (``Outcome/completed``, ``Outcome/failed`` or ``Outcome/skipped``).
        public let outcome: Outcome

        /// Whether its image is now where the prefetcher puts it (loaded or already cached).
        public var isSuccess: Bool { outcome != .failed }
    }

    /// A batch waiting for its requests (by key) to end; its completion gets the batch's own counts.
    private struct Batch {
        var remaining: Set<ImageCacheKey>
        var counts = Statistics()
        let completion: @Sendable (Statistics) -> Void
    }

    private struct State {
        var order: [ImageCacheKey] = []
        var pending: [ImageCacheKey: ImageRequest] = [:]
        var running: [ImageCacheKey: WorkSubscription] = [:]
        var counts = Statistics()
        var batches: [Int: Batch] = [:]
        var nextBatch = 0

        /// Records how `key` ended in the totals and in every batch waiting for it; returns the completions of
        /// the batches it finished (called by the caller outside the lock).
        mutating func end(_ key: ImageCacheKey, _ outcome: Outcome) -> [(@Sendable (Statistics) -> Void, Statistics)] {
            Self.add(outcome, to: &counts)
            var finished: [(@Sendable (Statistics) -> Void, Statistics)] = []
            for (id, var batch) in batches where batch.remaining.contains(key) {
                batch.remaining.remove(key)
                Self.add(outcome, to: &batch.counts)
                if batch.remaining.isEmpty {
                    batches[id] = nil
                    finished.append((batch.completion, batch.counts))
                } else {
                    batches[id] = batch
                }
            }
            return finished
        }

        static func add(_ outcome: Outcome, to counts: inout Statistics) {
            switch outcome {
            case .completed: counts.completed += 1
            case .failed: counts.failed += 1
            case .cancelled: counts.cancelled += 1
            case .skipped: counts.skipped += 1
            }
        }
    }

    /// The pipeline loading for it.
    public let pipeline: ImagePipeline
    /// Where images go. Default ``Destination/memoryCache``.
    public let destination: Destination
    /// How many requests run at once. Default 2.
    public let maximumConcurrentRequests: Int
    /// The priority prefetch loads run at. Default `.low`.
    public let priority: RequestPriority
    private let onComplete: (@Sendable (Completion) -> Void)?
    private let state = Locked(State())

    /// A prefetcher for `pipeline`.
    ///
    /// - Parameters:
    ///   - pipeline: the pipeline that loads (and caches) the images.
    ///   - destination: default `.memoryCache`.
    ///   - maximumConcurrentRequests: default 2.
    ///   - priority: default `.low`.
    ///   - onComplete: called (on an arbitrary thread) when a request completes, fails or is skipped, with the
    ///     request and how it ended (default `nil`).
    public init(
        pipeline: ImagePipeline, destination: Destination = .memoryCache, maximumConcurrentRequests: Int = 2,
        priority: RequestPriority = .low, onComplete: (@Sendable (Completion) -> Void)? = nil
    ) {
        self.pipeline = pipeline
        self.destination = destination
        self.maximumConcurrentRequests = max(1, maximumConcurrentRequests)
        self.priority = priority
        self.onComplete = onComplete
    }

    deinit { stopPrefetching() }

    /// The counters now.
    public var statistics: Statistics {
        state.withLock { s in
            var counts = s.counts
            counts.pending = s.pending.count
            counts.running = s.running.count
            return counts
        }
    }

    /// Whether nothing is pending or running.
    public var isIdle: Bool { state.withLock { $0.pending.isEmpty && $0.running.isEmpty } }

    /// Queues `requests` (in order) for prefetching; `completion` (default `nil`) is called once, on an
    /// arbitrary thread, when every one of them has completed, failed, been skipped or been stopped (at once
    /// for an empty batch), with the counts of this batch alone. A request already queued by an earlier batch
    /// counts for both.
    public func startPrefetching(
        with requests: [ImageRequest], completion: (@Sendable (Statistics) -> Void)? = nil
    ) {
        let isEmptyBatch = state.withLock { s -> Bool in
            var keys = Set<ImageCacheKey>()
            for var request in requests {
                request.priority = priority
                let key = self.key(request)
                keys.insert(key)
                guard s.pending[key] == nil, s.running[key] == nil else { continue }
                s.pending[key] = request
                s.order.append(key)
            }
            guard let completion, !keys.isEmpty else { return true }
            s.nextBatch += 1
            s.batches[s.nextBatch] = Batch(remaining: keys, completion: completion)
            return false
        }
        if isEmptyBatch, requests.isEmpty { completion?(Statistics()) }
        startNext()
    }

    /// Queues the images at `urls` for prefetching (see the variant that takes requests).
    public func startPrefetching(with urls: [URL], completion: (@Sendable (Statistics) -> Void)? = nil) {
        startPrefetching(with: urls.map { ImageRequest(url: $0) }, completion: completion)
    }

    /// Stops prefetching `requests` (pending ones are dropped, running ones cancelled).
    public func stopPrefetching(with requests: [ImageRequest]) {
        let keys = Set(requests.map(key))
        let (stopped, finished) = state.withLock { s in
            var stopped: [WorkSubscription] = []
            var finished: [(@Sendable (Statistics) -> Void, Statistics)] = []
            for key in keys {
                if s.pending.removeValue(forKey: key) != nil { finished += s.end(key, .cancelled) }
                if let subscription = s.running.removeValue(forKey: key) {
                    finished += s.end(key, .cancelled)
                    stopped.append(subscription)
                }
            }
            s.order.removeAll { keys.contains($0) }
            return (stopped, finished)
        }
        for subscription in stopped { subscription.unsubscribe() }
        for (completion, counts) in finished { completion(counts) }
        startNext()
    }

    /// Stops prefetching the images at `urls`.
    public func stopPrefetching(with urls: [URL]) {
        stopPrefetching(with: urls.map { ImageRequest(url: $0) })
    }

    /// Stops everything.
    public func stopPrefetching() {
        let (stopped, finished) = state.withLock { s in
            var finished: [(@Sendable (Statistics) -> Void, Statistics)] = []
            for key in Array(s.pending.keys) + Array(s.running.keys) { finished += s.end(key, .cancelled) }
            s.pending = [:]
            s.order = []
            defer { s.running = [:] }
            return (Array(s.running.values), finished)
        }
        for subscription in stopped { subscription.unsubscribe() }
        for (completion, counts) in finished { completion(counts) }
    }

    private func key(_ request: ImageRequest) -> ImageCacheKey {
        destination == .diskCache ? ImageCacheKey(request.sourceKey) : request.imageCacheKey
    }

    private func startNext() {
        while let (key, request) = takeNext() {
            if isCached(request) {
                finish(key, request, outcome: .skipped)
                continue
            }
            let subscription = pipeline.prefetch(request, intoMemory: destination == .memoryCache) { [self] ok in
                finish(key, request, outcome: ok ? .completed : .failed)
            }
            let stillWanted = state.withLock { s -> Bool in
                guard s.running[key] != nil else { return false }
                s.running[key] = subscription
                return true
            }
            if !stillWanted { subscription.unsubscribe() }
        }
    }

    /// Takes the next pending request if a slot is free, marking it running.
    private func takeNext() -> (ImageCacheKey, ImageRequest)? {
        state.withLock { s in
            guard s.running.count < maximumConcurrentRequests, !s.order.isEmpty else { return nil }
            let key = s.order.removeFirst()
            guard let request = s.pending.removeValue(forKey: key) else { return nil }
            s.running[key] = WorkSubscription(unsubscribe: {}, setPriority: { _ in })
            return (key, request)
        }
    }

    private func isCached(_ request: ImageRequest) -> Bool {
        switch destination {
        case .memoryCache: pipeline.cachedImage(for: request) != nil
        case .diskCache: pipeline.configuration.dataCache?.containsData(for: request.sourceKey) ?? false
        }
    }

    private func finish(_ key: ImageCacheKey, _ request: ImageRequest, outcome: Outcome) {
        let finished = state.withLock { s -> [(@Sendable (Statistics) -> Void, Statistics)]? in
            guard s.running.removeValue(forKey: key) != nil else { return nil }
            return s.end(key, outcome)
        }
        guard let finished else { return }
        onComplete?(Completion(request: request, outcome: outcome))
        for (completion, counts) in finished { completion(counts) }
        startNext()
    }
}

extension ImagePipeline {
    /// Loads `request` for the prefetcher: the final image into memory, or only the bytes (to disk).
    func prefetch(
        _ request: ImageRequest, intoMemory: Bool, completion: @escaping @Sendable (Bool) -> Void
    ) -> WorkSubscription {
        if isInvalidated {
            completion(false)
            return WorkSubscription(unsubscribe: {}, setPriority: { _ in })
        }
        if intoMemory {
            let task = loadImage(with: request)
            let events = task.events
            Task {
                for await event in events {
                    if case .finished(let result) = event { completion((try? result.get()) != nil) }
                }
            }
            return WorkSubscription(unsubscribe: { task.cancel() }, setPriority: { task.priority = $0 })
        }
        let (subscription, _) = subscribeData(request, priority: request.priority) { event in
            switch event {
            case .value: completion(true)
            case .failure: completion(false)
            default: break
            }
        }
        return subscription
    }
}
