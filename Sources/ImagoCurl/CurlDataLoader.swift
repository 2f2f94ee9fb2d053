import CCurl
import Foundation
import ImagoCore

/// A ``DataLoading`` on libcurl's multi interface: HTTP/2 multiplexed over TLS, connection reuse, per-transfer
/// timings, an address policy against SSRF, TLS pinning and proxy control, at a fraction of URLSession's CPU on
/// Linux. The priority queue, coalescing, validation, retries, resume, progress and events are ImagoCore's
/// `LoadCoordinator`, the same as ``HTTPDataLoader``'s, configured by the same ``HTTPDataLoader/Configuration`` in
/// ``Configuration/loading``; this module adds the libcurl transport.
///
/// - Threads: every transfer runs on one dedicated thread (`curl_multi_poll`, woken by `curl_multi_wakeup` for new
///   work and cancellations). Handlers and observers run on it or on the caller's thread, never under a lock; a
///   slow handler delays the other transfers, so hand heavy work off.
/// - Cancellation: the last subscriber's cancel removes the transfer from curl at once; the server sees its
///   connection (HTTP/1.1) or stream (HTTP/2) closed.
/// - Limits: at most ``HTTPDataLoader/Configuration/maximumConcurrentTransfers`` transfers (default 6), at most
///   ``Configuration/maximumConnectionsPerHost`` connections per host; the body limit applies to `Content-Length`
///   first, then to the decoded bytes as they arrive (a gzip bomb stops at the limit); at most
///   ``HTTPDataLoader/Configuration/maximumRedirects`` redirects, to `http`/`https` only.
/// - Metrics: every response carries ``DataResponse/metrics`` (DNS, connect, TLS, first byte, total, HTTP version,
///   remote address), and observers added with `addObserver(includingMetrics: true)` receive them for every
///   attempt as ``DataLoaderEvent/measured(url:metrics:)``.
/// - Resume: interrupted bodies are kept in memory (``Configuration/resumableBytesLimit``), or in the disk cache's
///   staging area once an ``ImagePipeline`` with a ``DiskCache`` adopts this loader.
///
/// ```swift
/// var configuration = CurlDataLoader.Configuration()
/// configuration.addressPolicy = .publicOnly   // a link-preview service must not reach 169.254.169.254
/// let loader = CurlDataLoader(configuration: configuration)
/// let response = try await loader.data(for: DataRequest(url: url))
/// print(response.metrics?.httpVersion)  // HTTP/2
/// ```
public final class CurlDataLoader: ObservableDataLoading, ResumeStoreAdopting {
    /// The settings this loader was created with.
    public let configuration: Configuration
    let coordinator: LoadCoordinator

    /// A loader with `configuration` (default: ``Configuration/init()``). Starts its network thread.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        let schemes = configuration.loading.acceptedSchemes.intersection(["http", "https"])
        coordinator = LoadCoordinator(
            configuration: configuration.loading, transport: CurlTransport(configuration: configuration),
            acceptedSchemes: schemes, resumableBytesLimit: configuration.resumableBytesLimit)
    }

    deinit { coordinator.close() }

    // MARK: - DataLoading

    /// Starts or joins a transfer for `request`; see the type's documentation for the events delivered.
    public func load(_ request: DataRequest, handler: @escaping @Sendable (DataLoadEvent) -> Void) -> any DataLoadTask {
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

    /// Adds an observer that also receives each attempt's ``DataLoaderEvent/measured(url:metrics:)`` when
    /// `includingMetrics` (default for ``addObserver(_:)``: without); returns the token to remove it.
    @discardableResult
    public func addObserver(
        includingMetrics: Bool, _ observer: @escaping @Sendable (DataLoaderEvent) -> Void
    ) -> DataLoaderObserverToken {
        coordinator.addObserver(includingMetrics: includingMetrics, observer)
    }

    /// Removes the observer added with `token`.
    public func removeObserver(_ token: DataLoaderObserverToken) { coordinator.removeObserver(token) }

    /// Keeps interrupted bodies in `store` (a pipeline's disk cache) from now on.
    package func adoptResumeStore(_ store: any ResumeStoring) { coordinator.adoptResumeStore(store) }
}
