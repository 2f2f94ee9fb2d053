import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

// A transfer's life: queued → starting (request modifiers) → running (URLSession task) → completed, or back to
// queued through waitingRetry after a transient failure.
extension HTTPDataLoader {
    func enqueue(_ id: UInt64, priority: RequestPriority) {
        queue.enqueue(id: id, priority: priority) { [weak self] in self?.start(id) }
    }

    /// Called by the queue once the transfer holds a slot.
    func start(_ id: UInt64) {
        let now = ContinuousClock.now
        let begun = state.withLock { s -> (request: DataRequest, attempt: Int, event: DataLoaderEvent?)? in
            guard let transfer = s.transfers[id], transfer.phase == .queued else { return nil }
            transfer.phase = .starting
            transfer.attempt += 1
            var event: DataLoaderEvent?
            if transfer.startTime == nil {
                transfer.startTime = now
                event = .started(url: transfer.request.url.redactedString, priority: transfer.priority)
            }
            return (transfer.request, transfer.attempt, event)
        }
        guard let begun else {
            // Cancelled between leaving the queue and starting: give the slot back.
            queue.finish(id)
            return
        }
        if let event = begun.event { observers.emit([event]) }
        let modifiers = configuration.requestModifiers
        if modifiers.isEmpty {
            createTask(id, for: begun.request, attempt: begun.attempt)
            return
        }
        Task {
            var request = begun.request
            do {
                for modify in modifiers { request = try await modify(request) }
            } catch {
                let failure = DataLoadingError.requestModifierFailed(url: begun.request.url, reason: "\(error)")
                fail(id, attempt: begun.attempt, with: failure, when: .starting)
                return
            }
            createTask(id, for: request, attempt: begun.attempt)
        }
    }

    /// Builds the URL request (headers, validators, idle timeout).
    func urlRequest(for request: DataRequest) -> URLRequest {
        var urlRequest = URLRequest(
            url: request.url, cachePolicy: .reloadIgnoringLocalCacheData,
            timeoutInterval: Self.idleTimeoutSeconds(configuration.idleTimeout))
        let given = Set(request.headers.keys.map { $0.lowercased() })
        for (name, value) in configuration.additionalHeaders where !given.contains(name.lowercased()) {
            urlRequest.setValue(value, forHTTPHeaderField: name)
        }
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        if let validators = request.validators {
            if let etag = validators.etag { urlRequest.setValue(etag, forHTTPHeaderField: "If-None-Match") }
            if let date = validators.lastModified { urlRequest.setValue(date, forHTTPHeaderField: "If-Modified-Since") }
        }
        return urlRequest
    }

    func createTask(_ id: UInt64, for request: DataRequest, attempt: Int) {
        let task = session.dataTask(with: urlRequest(for: request))
        // A timer source, not asyncAfter: a cancelled DispatchWorkItem stays queued (with what it captured) until
        // its deadline, so every finished transfer kept ~0.5 KB alive for the whole resource timeout (the soak's
        // heap grew by that per request); a cancelled source is released at once.
        let timer = DispatchSource.makeTimerSource(queue: .global())
        timer.setEventHandler { [weak self] in
            self?.fail(id, attempt: attempt, with: .timedOut(url: request.url), when: .running)
        }
        timer.schedule(deadline: .now() + configuration.resourceTimeout.timeInterval)
        timer.resume()
        let (isCurrent, priority) = state.withLock { s -> (Bool, RequestPriority) in
            guard let transfer = s.transfers[id], transfer.phase == .starting, transfer.attempt == attempt else {
                return (false, .normal)
            }
            transfer.phase = .running
            transfer.task = task
            transfer.taskID = task.taskIdentifier
            transfer.timeout = timer
            s.byTask[task.taskIdentifier] = id
            return (true, transfer.priority)
        }
        guard isCurrent else {
            timer.cancel()
            task.cancel()
            return
        }
        task.priority = Self.taskPriority(priority)
        task.resume()
    }

    /// Fails attempt `attempt` of transfer `id` if it is still in `phase` (a late timer or modifier is ignored).
    func fail(_ id: UInt64, attempt: Int, with error: DataLoadingError, when phase: Phase) {
        let actions = state.withLock { s -> Actions in
            guard let transfer = s.transfers[id], transfer.attempt == attempt, transfer.phase == phase else {
                return Actions()
            }
            return _complete(transfer, .failure(error), in: &s)
        }
        perform(actions)
    }

    /// Ends the current attempt: delivers the response or error to every subscriber, or schedules a retry.
    func _complete(
        _ transfer: Transfer, _ result: Result<DataResponse, DataLoadingError>, in s: inout State
    )
        -> Actions
    {
        var actions = Actions()
        if let timer = transfer.timeout { actions.cancelTimers.append(timer) }
        if let taskID = transfer.taskID { s.byTask[taskID] = nil }
        actions.finishQueueItems.append(transfer.id)
        let url = transfer.request.url.redactedString
        let elapsed = transfer.startTime.map { ContinuousClock.now - $0 } ?? .zero
        switch result {
        case .success(let response):
            s.remove(transfer)
            actions.deliveries = transfer.progressEvents(now: .now, interval: .zero, force: true)
            for subscriber in transfer.subscribers { actions.deliveries.append((subscriber.sink, .finished(response))) }
            actions.events.append(
                .finished(url: url, bytes: response.data.count, duration: elapsed, status: response.statusCode))
        case .failure(let error):
            if let task = transfer.task { s.cancel(task, into: &actions) }
            let retryAfter = transfer.response?.value(forHTTPHeaderField: "Retry-After")
            if let delay = configuration.retryPolicy.delay(
                forRetry: transfer.attempt, after: error, retryAfter: retryAfter)
            {
                transfer.phase = .waitingRetry
                transfer.resetAttempt()
                actions.retry = (transfer.id, delay)
                actions.events.append(.retried(url: url, attempt: transfer.attempt, delay: delay))
            } else {
                s.remove(transfer)
                for subscriber in transfer.subscribers { actions.deliveries.append((subscriber.sink, .failed(error))) }
                actions.events.append(.failed(url: url, error: error))
            }
        }
        return actions
    }

    func scheduleRetry(_ id: UInt64, after delay: Duration) {
        DispatchQueue.global().asyncAfter(deadline: .now() + delay.timeInterval) { [weak self] in
            guard let self else { return }
            let priority = state.withLock { s -> RequestPriority? in
                guard let transfer = s.transfers[id], transfer.phase == .waitingRetry else { return nil }
                transfer.phase = .queued
                return transfer.priority
            }
            if let priority { enqueue(id, priority: priority) }
        }
    }
}
