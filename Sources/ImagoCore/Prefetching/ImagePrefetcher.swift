import Foundation

/// Loads images ahead of need (the rows below the visible ones) at low priority, a few at a time, into the disk
/// cache only or into both caches.
///
/// Thread-safe. Requests already cached are counted as completed without work; starting a request already
/// pending or running does nothing; stopping cancels it (work shared with a visible request goes on).
///
/// ```swift
/// let prefetcher = ImagePrefetcher(pipeline: pipeline, destination: .diskCache)
/// prefetcher.startPrefetching(with: upcomingURLs)
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

    /// The counters of a prefetcher.
    public struct Counts: Sendable, Hashable {
        /// Requests loaded (or found cached).
        public var completed = 0
        /// Requests that failed.
        public var failed = 0
        /// Requests stopped before they completed.
        public var cancelled = 0
        /// Requests waiting for a slot.
        public var pending = 0
        /// Requests loading now.
        public var running = 0
    }

    private struct State {
        var order: [String] = []
        var pending: [String: ImageRequest] = [:]
        var running: [String: WorkSubscription] = [:]
        var counts = Counts()
    }

    /// The pipeline loading for it.
    public let pipeline: ImagePipeline
    /// Where images go. Default ``Destination/memoryCache``.
    public let destination: Destination
    /// How many requests run at once. Default 2.
    public let maxConcurrentRequestCount: Int
    /// The priority prefetch loads run at. Default `.low`.
    public let priority: RequestPriority
    private let onComplete: (@Sendable (ImageRequest, Bool) -> Void)?
    private let state = Locked(State())

    /// A prefetcher for `pipeline`.
    ///
    /// - Parameters:
    ///   - pipeline: the pipeline that loads (and caches) the images.
    ///   - destination: default `.memoryCache`.
    ///   - maxConcurrentRequestCount: default 2.
    ///   - priority: default `.low`.
    ///   - onComplete: called (on an arbitrary thread) when a request completes, with whether it succeeded.
    public init(
        pipeline: ImagePipeline, destination: Destination = .memoryCache, maxConcurrentRequestCount: Int = 2,
        priority: RequestPriority = .low, onComplete: (@Sendable (ImageRequest, Bool) -> Void)? = nil
    ) {
        self.pipeline = pipeline
        self.destination = destination
        self.maxConcurrentRequestCount = max(1, maxConcurrentRequestCount)
        self.priority = priority
        self.onComplete = onComplete
    }

    deinit { stopPrefetching() }

    /// The counters now.
    public var counts: Counts {
        state.withLock { s in
            var counts = s.counts
            counts.pending = s.pending.count
            counts.running = s.running.count
            return counts
        }
    }

    /// Whether nothing is pending or running.
    public var isIdle: Bool { state.withLock { $0.pending.isEmpty && $0.running.isEmpty } }

    /// Queues `requests` (in order) for prefetching.
    public func startPrefetching(with requests: [ImageRequest]) {
        state.withLock { s in
            for var request in requests {
                request.priority = priority
                let key = self.key(request)
                guard s.pending[key] == nil, s.running[key] == nil else { continue }
                s.pending[key] = request
                s.order.append(key)
            }
        }
        startNext()
    }

    /// Queues the images at `urls` for prefetching.
    public func startPrefetching(with urls: [URL]) {
        startPrefetching(with: urls.map { ImageRequest(url: $0) })
    }

    /// Stops prefetching `requests` (pending ones are dropped, running ones cancelled).
    public func stopPrefetching(with requests: [ImageRequest]) {
        let keys = Set(requests.map(key))
        let stopped = state.withLock { s -> [WorkSubscription] in
            var stopped: [WorkSubscription] = []
            for key in keys {
                if s.pending.removeValue(forKey: key) != nil { s.counts.cancelled += 1 }
                if let subscription = s.running.removeValue(forKey: key) {
                    s.counts.cancelled += 1
                    stopped.append(subscription)
                }
            }
            s.order.removeAll { keys.contains($0) }
            return stopped
        }
        for subscription in stopped { subscription.unsubscribe() }
        startNext()
    }

    /// Stops prefetching the images at `urls`.
    public func stopPrefetching(with urls: [URL]) {
        stopPrefetching(with: urls.map { ImageRequest(url: $0) })
    }

    /// Stops everything.
    public func stopPrefetching() {
        let stopped = state.withLock { s -> [WorkSubscription] in
            s.counts.cancelled += s.pending.count + s.running.count
            s.pending = [:]
            s.order = []
            defer { s.running = [:] }
            return Array(s.running.values)
        }
        for subscription in stopped { subscription.unsubscribe() }
    }

    private func key(_ request: ImageRequest) -> String {
        destination == .diskCache ? request.sourceKey : request.imageCacheKey.string
    }

    private func startNext() {
        while let (key, request) = takeNext() {
            if isCached(request) {
                finish(key, request, success: true)
                continue
            }
            let subscription = pipeline.prefetch(request, intoMemory: destination == .memoryCache) { [self] ok in
                finish(key, request, success: ok)
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
    private func takeNext() -> (String, ImageRequest)? {
        state.withLock { s in
            guard s.running.count < maxConcurrentRequestCount, !s.order.isEmpty else { return nil }
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

    private func finish(_ key: String, _ request: ImageRequest, success: Bool) {
        let wasRunning = state.withLock { s -> Bool in
            guard s.running.removeValue(forKey: key) != nil else { return false }
            if success { s.counts.completed += 1 } else { s.counts.failed += 1 }
            return true
        }
        guard wasRunning else { return }
        onComplete?(request, success)
        startNext()
    }
}

extension ImagePipeline {
    /// Loads `request` for the prefetcher: the final image into memory, or only the bytes (to disk).
    func prefetch(
        _ request: ImageRequest, intoMemory: Bool, completion: @escaping @Sendable (Bool) -> Void
    ) -> WorkSubscription {
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
