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
/// Thread-safe. Handlers and observers run on the loader's delegate thread or the caller's, never under a lock.
///
/// ```swift
/// let loader = HTTPDataLoader()
/// let response = try await loader.data(for: DataRequest(url: url))
/// ```
public final class HTTPDataLoader: DataLoading {
    /// The settings this loader was created with.
    public let configuration: Configuration
    let session: URLSession
    let queue: LoadQueue
    let state = Locked(State())
    let observers = DataLoaderObservers()
    /// Where URLSession tasks are cancelled (see `perform`).
    let cancelQueue = DispatchQueue(label: "imago.HTTPDataLoader.cancel")
    private let delegate: SessionDelegate

    /// A loader with `configuration` (default: ``Configuration/init()``).
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        queue = LoadQueue(
            maximumConcurrentCount: configuration.maximumConcurrentTransfers, order: configuration.queueOrder)
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        sessionConfiguration.urlCache = nil
        sessionConfiguration.requestCachePolicy = .reloadIgnoringLocalCacheData
        sessionConfiguration.httpCookieStorage = nil
        sessionConfiguration.httpShouldSetCookies = false
        sessionConfiguration.httpCookieAcceptPolicy = .never
        sessionConfiguration.timeoutIntervalForRequest = Self.idleTimeoutSeconds(configuration.idleTimeout)
        sessionConfiguration.timeoutIntervalForResource = configuration.resourceTimeout.timeInterval
        // The queue bounds concurrency; URLSession must not queue behind it.
        sessionConfiguration.httpMaximumConnectionsPerHost = max(6, configuration.maximumConcurrentTransfers)
        delegate = SessionDelegate()
        let delegateQueue = OperationQueue()
        delegateQueue.maxConcurrentOperationCount = 1
        delegateQueue.name = "imago.HTTPDataLoader"
        session = URLSession(configuration: sessionConfiguration, delegate: delegate, delegateQueue: delegateQueue)
        delegate.setOwner(self)
    }

    deinit {
        let transfers = state.withLock { s -> [Transfer] in
            defer { s = State() }
            return Array(s.transfers.values)
        }
        for transfer in transfers {
            for subscriber in transfer.subscribers { subscriber.sink.cancel() }
        }
        // Each remaining task is cancelled once, on the serial cancel queue after the cancels already queued there,
        // and the session then finishes without cancelling again: `invalidateAndCancel()` would cancel tasks a
        // second time, and FoundationNetworking traps ("Trying to access a behaviour for a task that in not in the
        // registry") when two cancels of one task race.
        let tasks = transfers.compactMap(\.task)
        let session = session
        cancelQueue.async {
            for task in tasks { task.cancel() }
            session.finishTasksAndInvalidate()
        }
    }

    // MARK: - DataLoading

    /// Starts or joins a transfer for `request`; see the type's documentation for the events delivered.
    public func load(
        _ request: DataRequest, handler: @escaping @Sendable (DataLoadEvent) -> Void
    )
        -> any DataLoadTask
    {
        guard let scheme = request.url.scheme?.lowercased(), configuration.acceptedSchemes.contains(scheme) else {
            return OneShotLoadTask.failing(.unsupportedScheme(url: request.url), handler: handler)
        }
        let key = TransferKey(request, ignoring: configuration.coalescingIgnoredHeaders)
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
        if isNew {
            enqueue(transferID, priority: request.priority)
        }
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

    /// Removes a transfer and cancels its subscribers, task, timer and queue slot.
    func _cancel(_ transfer: Transfer, in s: inout State) -> Actions {
        var actions = Actions()
        s.remove(transfer)
        actions.cancelSinks = transfer.subscribers.map(\.sink)
        transfer.subscribers.removeAll()
        if let task = transfer.task { s.cancel(task, into: &actions) }
        if let timer = transfer.timeout { actions.cancelTimers.append(timer) }
        actions.finishQueueItems.append(transfer.id)
        if transfer.startTime != nil {
            actions.events.append(.failed(url: transfer.request.url.redactedString, error: .cancelled))
        }
        return actions
    }

    /// FoundationNetworking keeps the request timeout in whole seconds (truncating): round up, at least 1 s.
    static func idleTimeoutSeconds(_ timeout: Duration) -> TimeInterval {
        max(1, timeout.timeInterval.rounded(.up))
    }

    static func taskPriority(_ priority: RequestPriority) -> Float {
        Float(priority.rawValue) / Float(RequestPriority.veryHigh.rawValue)
    }

    /// Performs what was decided under the lock, with the lock released.
    func perform(_ actions: Actions) {
        // `URLSessionTask.cancel()` waits (`workQueue.sync`) behind every chunk FoundationNetworking has queued:
        // seconds under a fast body. Called here, it would stall the delegate queue and the callers' events, so
        // it runs on the loader's own serial queue (not a global one, whose few threads it could block); the
        // transfer is already detached, so its late chunks are ignored.
        if !actions.cancelTasks.isEmpty {
            let tasks = actions.cancelTasks
            cancelQueue.async { for task in tasks { task.cancel() } }
        }
        for timer in actions.cancelTimers { timer.cancel() }
        for (id, priority) in actions.reprioritize { queue.setPriority(priority, for: id) }
        for id in actions.finishQueueItems { queue.finish(id) }
        for sink in actions.cancelSinks { sink.cancel() }
        // Observers first: a caller resumed by its delivery may start the next load at once, and its `.started`
        // must not overtake this transfer's `.finished` (observers see a transfer end before its caller goes on).
        observers.emit(actions.events)
        for (sink, event) in actions.deliveries { sink.send(event) }
        if let retry = actions.retry { scheduleRetry(retry.id, after: retry.delay) }
    }
}

extension HTTPDataLoader {
    /// The handle returned by ``HTTPDataLoader/load(_:handler:)`` for one caller.
    final class Subscription: DataLoadTask {
        // Strong, like a URLSessionTask holding its session: a handle keeps its loader alive.
        private let loader: HTTPDataLoader
        private let transferID: UInt64
        private let subscriberID: UInt64
        private let sink: EventSink

        init(loader: HTTPDataLoader, transferID: UInt64, subscriberID: UInt64, sink: EventSink) {
            self.loader = loader
            self.transferID = transferID
            self.subscriberID = subscriberID
            self.sink = sink
        }

        func cancel() {
            loader.cancel(subscriberID: subscriberID, transferID: transferID, sink: sink)
        }

        func setPriority(_ priority: RequestPriority) {
            loader.setPriority(priority, subscriberID: subscriberID, transferID: transferID)
        }
    }
}
