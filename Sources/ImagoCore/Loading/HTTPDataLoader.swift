import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The default ``DataLoading``: HTTP(S) over `URLSession`, with a bounded priority queue, coalescing of identical
/// requests, response validation, retries, timeouts, a body-size limit and observable events.
///
/// - Concurrency: at most ``Configuration/maximumConcurrentTransfers`` (default 6) transfers run; the rest wait,
///   highest priority first. ``DataLoadTask/setPriority(_:)`` reorders a waiting request.
/// - Coalescing: requests in flight at the same time for the same URL, headers and validators share one transfer.
///   Each caller gets its own progress and completion; cancelling one ends only that caller (with
///   `.failed(.cancelled)` at once); the transfer is cancelled when its last caller cancels. A shared transfer runs
///   at the highest priority of its callers.
/// - Validation: 2xx only (a `304` only for a request with validators, reported as
///   ``DataResponse/isNotModified``), an image or binary content type, the whole `Content-Length` (a short body is
///   `.truncated`, never returned as complete), at most ``Configuration/maximumBodySize`` bytes.
/// - No HTTP cache and no cookie storage are used: caching belongs to the pipeline's caches.
///
/// The queue, coalescing, validation, retries and events are the `LoadCoordinator`'s, shared with the libcurl
/// loader; this type adds the URLSession transport. Thread-safe. Handlers and observers run on the loader's
/// delegate thread or the caller's, never under a lock.
///
/// ```swift
/// let loader = HTTPDataLoader()
/// let response = try await loader.data(for: DataRequest(url: url))
/// ```
public final class HTTPDataLoader: DataLoading {
    /// What makes two requests the same transfer (see `LoadCoordinator.TransferKey`).
    package typealias TransferKey = LoadCoordinator.TransferKey

    /// The settings this loader was created with.
    public let configuration: Configuration
    let coordinator: LoadCoordinator

    /// A loader with `configuration` (default: ``Configuration/init()``).
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        coordinator = LoadCoordinator(
            configuration: configuration, transport: URLSessionTransport(configuration: configuration))
    }

    deinit { coordinator.close() }

    // MARK: - DataLoading

    /// Starts or joins a transfer for `request`; see the type's documentation for the events delivered.
    public func load(
        _ request: DataRequest, handler: @escaping @Sendable (DataLoadEvent) -> Void
    )
        -> any DataLoadTask
    {
        coordinator.load(request, owner: self, handler: handler)
    }

    // MARK: - Control

    /// Stops starting queued transfers (those running continue) until ``resume()``.
    public func suspend() { coordinator.suspend() }

    /// Starts queued transfers again.
    public func resume() { coordinator.resume() }

    /// Whether the queue is suspended.
    public var isSuspended: Bool { coordinator.isSuspended }

    /// Cancels every queued and running transfer; every caller receives `.failed(.cancelled)`.
    public func cancelAll() { coordinator.cancelAll() }

    /// The number of transfers queued or running (coalesced requests count once).
    public var transferCount: Int { coordinator.transferCount }

    /// The most transfers that ever ran at the same time.
    public var maximumObservedConcurrency: Int { coordinator.maximumObservedConcurrency }

    /// Adds an observer of ``DataLoaderEvent``s, called outside any lock; returns the token to remove it.
    @discardableResult
    public func addObserver(_ observer: @escaping @Sendable (DataLoaderEvent) -> Void) -> DataLoaderObserverToken {
        coordinator.addObserver(observer)
    }

    /// Removes the observer added with `token`.
    public func removeObserver(_ token: DataLoaderObserverToken) { coordinator.removeObserver(token) }

    /// FoundationNetworking keeps the request timeout in whole seconds (truncating): round up, at least 1 s.
    static func idleTimeoutSeconds(_ timeout: Duration) -> TimeInterval {
        max(1, timeout.timeInterval.rounded(.up))
    }
}
