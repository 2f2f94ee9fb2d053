import Foundation

/// What every network loader does above the wire, written once: a bounded priority queue (``LoadQueue``),
/// coalescing of identical requests, request modifiers, response validation, retries, resumable bodies, progress
/// and ``DataLoaderEvent``s. The bytes move through a swappable ``LoadTransporting`` (URLSession for
/// ``HTTPDataLoader``, libcurl for `ImagoCurl`'s loader), so both loaders behave alike by construction.
///
/// - Concurrency: at most `maximumConcurrentTransfers` transfers hold a slot; the rest wait, highest priority first.
/// - Coalescing: requests in flight at the same time with the same ``TransferKey`` share one transfer. Each caller
///   gets its own progress and completion; cancelling one ends only that caller (with `.failed(.cancelled)` at
///   once); the transfer is cancelled when its last caller cancels. A shared transfer runs at the highest priority
///   of its callers.
/// - Validation: 2xx only (a `304` only for a request with validators), the configured content types, the whole
///   `Content-Length` (a short body is `.truncated`), at most `maximumBodySize` bytes.
/// - Resume: when `resumableBytesLimit` > 0, the bytes of an interrupted response that has a strong `ETag` or a
///   `Last-Modified` and `Accept-Ranges: bytes` are kept in the resume store, and the next attempt for the same key
///   asks for the rest with `Range`/`If-Range`: a `206` continues them, a `200` starts over.
///
/// Thread-safe: every decision is made under one lock; handlers, observers and transport calls run after it is
/// released.
package final class LoadCoordinator: Sendable {
    /// The settings shared by every loader.
    package let configuration: HTTPDataLoader.Configuration
    let transport: any LoadTransporting
    let queue: LoadQueue
    let state = Locked(State())
    let observers = DataLoaderObservers()
    /// The schemes this loader accepts (the configuration's, narrowed by the transport).
    let acceptedSchemes: Set<String>
    /// The most bytes of interrupted bodies kept (0: resuming off).
    let resumableBytesLimit: Int
    private let resumeStore: Locked<any ResumeStoring>

    /// A coordinator over `transport`; `acceptedSchemes` narrows the configuration's (default: as configured).
    package init(
        configuration: HTTPDataLoader.Configuration, transport: any LoadTransporting,
        acceptedSchemes: Set<String>? = nil, resumableBytesLimit: Int = 0
    ) {
        self.configuration = configuration
        self.transport = transport
        self.acceptedSchemes = acceptedSchemes ?? configuration.acceptedSchemes
        self.resumableBytesLimit = min(resumableBytesLimit, Int(clamping: configuration.maximumBodySize))
        resumeStore = Locked(MemoryResumeStore())
        queue = LoadQueue(
            maximumConcurrentCount: configuration.maximumConcurrentTransfers, order: configuration.queueOrder)
    }

    /// Ends every transfer (each caller receives `.failed(.cancelled)`), cancels their handles and closes the
    /// transport. For the owning loader's `deinit`.
    package func close() {
        let transfers = state.withLock { s -> [Transfer] in
            defer { s = State() }
            return Array(s.transfers.values)
        }
        for transfer in transfers {
            for subscriber in transfer.subscribers { subscriber.sink.cancel() }
            transfer.handle?.cancel()
        }
        transport.close()
    }

    /// Keeps interrupted bodies in `store` from now on.
    package func adoptResumeStore(_ store: any ResumeStoring) { resumeStore.withLock { $0 = store } }

    var currentResumeStore: any ResumeStoring { resumeStore.withLock { $0 } }

    /// Whether any observer listens (events are built only then).
    var isObserved: Bool { !observers.isEmpty }

    // MARK: - Loading

    /// Starts or joins a transfer for `request`; the returned handle keeps `owner` (the loader) alive.
    package func load(
        _ request: DataRequest, owner: any AnyObject & Sendable, handler: @escaping @Sendable (DataLoadEvent) -> Void
    ) -> any DataLoadTask {
        guard let scheme = request.url.scheme?.lowercased(), acceptedSchemes.contains(scheme) else {
            return OneShotLoadTask.failing(.unsupportedScheme(url: request.url), handler: handler)
        }
        var request = request
        do {
            request.url = try HostName.resolvable(request.url)
        } catch {
            return OneShotLoadTask.failing(.invalidURL(url: request.url, reason: error.reason), handler: handler)
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
                if isObserved { actions.events.append(.coalesced(url: request.url.redactedString)) }
                if transfer.received > 0 {
                    actions.deliveries.append(
                        (sink, .progress(received: transfer.received, expected: transfer.expectedLength)))
                }
                return (id, subscriber.id, false)
            }
            s.nextID += 1
            let transfer = Transfer(
                id: s.nextID, key: key, request: request, subscriber: subscriber,
                bodyLimit: configuration.maximumBodySize)
            s.transfers[transfer.id] = transfer
            s.byKey[key] = transfer.id
            return (transfer.id, subscriber.id, true)
        }
        if isNew { enqueue(transferID, priority: request.priority) }
        perform(actions)
        return Subscription(
            owner: owner, coordinator: self, transferID: transferID, subscriberID: subscriberID, sink: sink)
    }

    // MARK: - Control

    /// Stops starting queued transfers (those running continue) until ``resume()``.
    package func suspend() { queue.suspend() }

    /// Starts queued transfers again.
    package func resume() { queue.resume() }

    /// Whether the queue is suspended.
    package var isSuspended: Bool { queue.isSuspended }

    /// Cancels every queued and running transfer; every caller receives `.failed(.cancelled)`.
    package func cancelAll() {
        var actions = Actions()
        state.withLock { s in
            for transfer in s.transfers.values { actions.merge(_cancel(transfer, in: &s)) }
        }
        perform(actions)
    }

    /// The number of transfers queued or running (coalesced requests count once).
    package var transferCount: Int { state.withLock { $0.transfers.count } }

    /// The most transfers that ever ran at the same time.
    package var maximumObservedConcurrency: Int { queue.maximumObservedRunningCount }

    /// Adds an observer of ``DataLoaderEvent``s; `includingMetrics` adds ``DataLoaderEvent/measured(url:metrics:)``.
    package func addObserver(
        includingMetrics: Bool = false, _ observer: @escaping @Sendable (DataLoaderEvent) -> Void
    ) -> DataLoaderObserverToken {
        observers.add(includingMetrics: includingMetrics, observer)
    }

    /// Removes the observer added with `token`.
    package func removeObserver(_ token: DataLoaderObserverToken) { observers.remove(token) }

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

    /// Removes a transfer and cancels its subscribers, handle and queue slot (keeping its bytes to resume).
    func _cancel(_ transfer: Transfer, in s: inout State) -> Actions {
        var actions = Actions()
        _keepPartial(of: transfer, into: &actions)
        s.remove(transfer)
        actions.cancelSinks = transfer.subscribers.map(\.sink)
        transfer.subscribers.removeAll()
        if let handle = transfer.handle { actions.cancelHandles.append(handle) }
        transfer.handle = nil
        transfer.current = nil
        actions.finishQueueItems.append(transfer.id)
        if transfer.startTime != nil, isObserved {
            actions.events.append(.failed(url: transfer.request.url.redactedString, error: .cancelled))
        }
        return actions
    }

    /// Performs what was decided under the lock, with the lock released.
    func perform(_ actions: Actions) {
        for handle in actions.cancelHandles { handle.cancel() }
        if let (key, partial) = actions.keep {
            currentResumeStore.keep(partial, for: key, limit: resumableBytesLimit)
        }
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

extension LoadCoordinator {
    /// The handle returned by ``LoadCoordinator/load(_:handler:)`` for one caller.
    final class Subscription: DataLoadTask {
        // Strong, like a URLSessionTask holding its session: a handle keeps its loader alive (whose `deinit`
        // closes the coordinator).
        private let owner: any AnyObject & Sendable
        private let coordinator: LoadCoordinator
        private let transferID: UInt64
        private let subscriberID: UInt64
        private let sink: EventSink

        init(
            owner: any AnyObject & Sendable, coordinator: LoadCoordinator, transferID: UInt64, subscriberID: UInt64,
            sink: EventSink
        ) {
            self.owner = owner
            self.coordinator = coordinator
            self.transferID = transferID
            self.subscriberID = subscriberID
            self.sink = sink
        }

        func cancel() { coordinator.cancel(subscriberID: subscriberID, transferID: transferID, sink: sink) }

        func setPriority(_ priority: RequestPriority) {
            coordinator.setPriority(priority, subscriberID: subscriberID, transferID: transferID)
        }
    }
}
