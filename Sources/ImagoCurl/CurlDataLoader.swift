import CCurl
import Foundation
import ImagoCore

/// A ``DataLoading`` on libcurl's multi interface: HTTP/2 multiplexed over TLS, connection reuse, per-transfer
/// timings, an address policy against SSRF, TLS pinning and proxy control, at a fraction of URLSession's CPU on
/// Linux. It keeps the contract and the behaviour of ``HTTPDataLoader`` (priority queue, coalescing, validation,
/// retries, progress, events), configured by the same ``HTTPDataLoader/Configuration`` in
/// ``Configuration/loading``.
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
///   remote address).
///
/// ```swift
/// var configuration = CurlDataLoader.Configuration()
/// configuration.addressPolicy = .publicOnly   // a link-preview service must not reach 169.254.169.254
/// let loader = CurlDataLoader(configuration: configuration)
/// let response = try await loader.data(for: DataRequest(url: url))
/// print(response.metrics?.httpVersion)  // HTTP/2
/// ```
public final class CurlDataLoader: ObservableDataLoading {
    /// The settings this loader was created with.
    public let configuration: Configuration
    let queue: LoadQueue
    let state = Locked(State())
    let observers = DataLoaderObservers()
    let multi: CurlMulti?

    /// A loader with `configuration` (default: ``Configuration/init()``). Starts its network thread.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        let loading = configuration.loading
        queue = LoadQueue(maximumConcurrentCount: loading.maximumConcurrentTransfers, order: loading.queueOrder)
        multi = CurlMulti(
            maximumConnectionsPerHost: configuration.maximumConnectionsPerHost,
            maximumConnections: configuration.maximumConnections,
            multiplexes: configuration.httpVersion == .http2OverTLS)
    }

    deinit {
        let transfers = state.withLock { s -> [Transfer] in
            defer { s = State() }
            return Array(s.transfers.values)
        }
        for transfer in transfers {
            for subscriber in transfer.subscribers { subscriber.sink.cancel() }
        }
        multi?.stop()
    }

    // MARK: - DataLoading

    /// Starts or joins a transfer for `request`; see the type's documentation for the events delivered.
    public func load(_ request: DataRequest, handler: @escaping @Sendable (DataLoadEvent) -> Void) -> any DataLoadTask {
        guard let scheme = request.url.scheme?.lowercased(), configuration.loading.acceptedSchemes.contains(scheme),
            scheme == "http" || scheme == "https"
        else {
            return OneShotLoadTask.failing(.unsupportedScheme(url: request.url), handler: handler)
        }
        let key = HTTPDataLoader.TransferKey(request, ignoring: configuration.loading.coalescingIgnoredHeaders)
        let sink = EventSink(handler)
        var actions = Actions()
        let (transferID, subscriberID, isNew) = state.withLock { s -> (UInt64, UInt64, Bool) in
            s.nextID += 1
            let subscriber = Subscriber(
                id: s.nextID, sink: sink, priority: request.priority, reportsPartialData: request.reportsPartialData)
            if let id = s.byKey[key], let transfer = s.transfers[id] {
                transfer.subscribers.append(subscriber)
                actions.merge(_updatePriority(transfer))
                actions.events.append(.coalesced(url: request.url.redactedString))
                if transfer.received > 0 {
                    actions.deliveries.append(
                        (sink, .progress(received: transfer.received, expected: transfer.expectedLength)))
                }
                return (id, subscriber.id, false)
            }
            s.nextID += 1
            let transfer = Transfer(id: s.nextID, key: key, request: request, subscriber: subscriber)
            s.transfers[transfer.id] = transfer
            s.byKey[key] = transfer.id
            return (transfer.id, subscriber.id, true)
        }
        if isNew { enqueue(transferID, priority: request.priority) }
        perform(actions)
        return Subscription(loader: self, transferID: transferID, subscriberID: subscriberID, sink: sink)
    }

    // MARK: - Control

    /// Stops starting queued transfers (those running continue) until ``resume()``.
    public func suspend() { queue.suspend() }

    /// Starts queued transfers again.
    public func resume() { queue.resume() }

    /// Whether the queue is suspended.
    public var isSuspended: Bool { queue.isSuspended }

    /// Cancels every queued and running transfer; every caller receives `.failed(.cancelled)`.
    public func cancelAll() {
        var actions = Actions()
        state.withLock { s in
            for transfer in s.transfers.values { actions.merge(_cancel(transfer, in: &s)) }
        }
        perform(actions)
    }

    /// The number of transfers queued or running (coalesced requests count once).
    public var transferCount: Int { state.withLock { $0.transfers.count } }

    /// The most transfers that ever ran at the same time.
    public var maximumObservedConcurrency: Int { queue.maximumObservedRunningCount }

    /// Adds an observer of ``DataLoaderEvent``s, called outside any lock; returns the token to remove it.
    @discardableResult
    public func addObserver(_ observer: @escaping @Sendable (DataLoaderEvent) -> Void) -> DataLoaderObserverToken {
        observers.add(observer)
    }

    /// Removes the observer added with `token`.
    public func removeObserver(_ token: DataLoaderObserverToken) { observers.remove(token) }

    // MARK: - Subscribers

    func cancel(subscriberID: UInt64, transferID: UInt64, sink: EventSink) {
        guard sink.cancel() else { return }
        var actions = Actions()
        state.withLock { s in
            guard let transfer = s.transfers[transferID] else { return }
            transfer.subscribers.removeAll { $0.id == subscriberID }
            if transfer.subscribers.isEmpty {
                actions.merge(_cancel(transfer, in: &s))
            } else {
                actions.merge(_updatePriority(transfer))
            }
        }
        perform(actions)
    }

    func setPriority(_ priority: RequestPriority, subscriberID: UInt64, transferID: UInt64) {
        let actions = state.withLock { s -> Actions in
            guard let transfer = s.transfers[transferID],
                let index = transfer.subscribers.firstIndex(where: { $0.id == subscriberID })
            else { return Actions() }
            transfer.subscribers[index].priority = priority
            return _updatePriority(transfer)
        }
        perform(actions)
    }

    /// Recomputes a transfer's priority from its subscribers; re-sorts it in the queue when it waits there.
    func _updatePriority(_ transfer: Transfer) -> Actions {
        var actions = Actions()
        let priority = transfer.maximumPriority
        guard priority != transfer.priority else { return actions }
        transfer.priority = priority
        if transfer.phase == .queued { actions.reprioritize.append((transfer.id, priority)) }
        return actions
    }

    /// Removes a transfer and cancels its subscribers, curl transfer and queue slot.
    func _cancel(_ transfer: Transfer, in s: inout State) -> Actions {
        var actions = Actions()
        _keepPartial(of: transfer, in: &s)
        s.remove(transfer)
        actions.cancelSinks = transfer.subscribers.map(\.sink)
        transfer.subscribers.removeAll()
        if let easy = transfer.easy { actions.removeEasies.append(easy) }
        transfer.easy = nil
        actions.finishQueueItems.append(transfer.id)
        if transfer.startTime != nil {
            actions.events.append(.failed(url: transfer.request.url.redactedString, error: .cancelled))
        }
        return actions
    }

    /// Performs what was decided under the lock, with the lock released.
    func perform(_ actions: Actions) {
        for easy in actions.removeEasies { multi?.remove(easy) }
        for (id, priority) in actions.reprioritize { queue.setPriority(priority, for: id) }
        for id in actions.finishQueueItems { queue.finish(id) }
        for sink in actions.cancelSinks { sink.cancel() }
        // Observers first, as in HTTPDataLoader: a caller resumed by its delivery may start the next load at once.
        observers.emit(actions.events)
        for (sink, event) in actions.deliveries { sink.send(event) }
        if let retry = actions.retry { scheduleRetry(retry.id, after: retry.delay) }
    }
}

extension CurlDataLoader {
    /// The handle returned by ``CurlDataLoader/load(_:handler:)`` for one caller.
    final class Subscription: DataLoadTask {
        // Strong: a handle keeps its loader alive, like HTTPDataLoader's.
        private let loader: CurlDataLoader
        private let transferID: UInt64
        private let subscriberID: UInt64
        private let sink: EventSink

        init(loader: CurlDataLoader, transferID: UInt64, subscriberID: UInt64, sink: EventSink) {
            self.loader = loader
            self.transferID = transferID
            self.subscriberID = subscriberID
            self.sink = sink
        }

        func cancel() { loader.cancel(subscriberID: subscriberID, transferID: transferID, sink: sink) }

        func setPriority(_ priority: RequestPriority) {
            loader.setPriority(priority, subscriberID: subscriberID, transferID: transferID)
        }
    }
}
