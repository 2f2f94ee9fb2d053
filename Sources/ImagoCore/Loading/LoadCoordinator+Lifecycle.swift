import Foundation

// A transfer's life: queued → starting (request modifiers) → running (on the transport) → completed, or back to
// queued through waitingRetry after a transient failure.
extension LoadCoordinator {
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
                if isObserved {
                    event = .started(url: transfer.request.url.redactedString, priority: transfer.priority)
                }
            }
            return (transfer.request, transfer.attempt, event)
        }
        guard let begun else {
            queue.finish(id)  // cancelled between leaving the queue and starting: give the slot back
            return
        }
        if let event = begun.event { observers.emit([event]) }
        let modifiers = configuration.requestModifiers
        if modifiers.isEmpty {
            begin(id, request: begun.request, attempt: begun.attempt)
            return
        }
        Task {
            var request = begun.request
            do {
                for modify in modifiers { request = try await modify(request) }
            } catch {
                let failure = DataLoadingError.requestModifierFailed(url: begun.request.url, reason: "\(error)")
                fail(id, attempt: begun.attempt, with: failure)
                return
            }
            begin(id, request: request, attempt: begun.attempt)
        }
    }

    /// Makes the attempt and its transport handle and starts it; continues an interrupted body when one is kept.
    func begin(_ id: UInt64, request: DataRequest, attempt number: Int) {
        var request = request
        var partial: PartialBody?
        let store = currentResumeStore
        if resumableBytesLimit > 0, request.validators?.isEmpty != false,
            !request.headers.keys.contains(where: { $0.lowercased() == "range" }),
            let key = state.withLock({ $0.transfers[id]?.key })
        {
            partial = store.take(key)
        }
        if let partial {
            request.headers["Range"] = "bytes=\(partial.data.count)-"
            request.headers["If-Range"] = partial.validator
        }
        let attempt = LoadAttempt(request: request, transferID: id, number: number, coordinator: self)
        guard let handle = transport.makeHandle(for: attempt) else {
            let error = DataLoadingError.connectionFailed(url: request.url, reason: "the transport could not start")
            fail(id, attempt: number, with: error)
            return
        }
        let key = state.withLock { s -> TransferKey? in
            guard let transfer = s.transfers[id], transfer.phase == .starting, transfer.attempt == number else {
                return nil
            }
            transfer.phase = .running
            transfer.current = attempt
            transfer.handle = handle
            transfer.resumedFrom = partial
            return transfer.key
        }
        guard key != nil else {
            handle.cancel()
            return
        }
        handle.start()
    }

    /// Fails attempt `attempt` of transfer `id` while it is starting (a late modifier is ignored).
    func fail(_ id: UInt64, attempt: Int, with error: DataLoadingError) {
        let actions = state.withLock { s -> Actions in
            guard let transfer = s.transfers[id], transfer.attempt == attempt, transfer.phase == .starting else {
                return Actions()
            }
            return _complete(transfer, .failure(error), in: &s)
        }
        perform(actions)
    }

    /// Ends the current attempt: delivers the response or error to every subscriber, or schedules a retry.
    func _complete(_ transfer: Transfer, _ result: Result<DataResponse, DataLoadingError>, in s: inout State) -> Actions
    {
        var actions = Actions()
        _complete(transfer, result, in: &s, into: &actions)
        return actions
    }

    func _complete(
        _ transfer: Transfer, _ result: Result<DataResponse, DataLoadingError>, in s: inout State,
        into actions: inout Actions
    ) {
        if let handle = transfer.handle { actions.cancelHandles.append(handle) }
        transfer.handle = nil
        actions.finishQueueItems.append(transfer.id)
        // Events are built only for observers (redacting a URL and reading the clock are not free).
        let observed = isObserved
        let url = observed ? transfer.request.url.redactedString : ""
        switch result {
        case .success(let response):
            s.remove(transfer)
            transfer.progressEvents(interval: .zero, force: true, into: &actions.deliveries)
            for subscriber in transfer.subscribers { actions.deliveries.append((subscriber.sink, .finished(response))) }
            if observed {
                let elapsed = transfer.startTime.map { ContinuousClock.now - $0 } ?? .zero
                actions.events.append(
                    .finished(url: url, bytes: response.data.count, duration: elapsed, status: response.statusCode))
            }
        case .failure(let error):
            _keepPartial(of: transfer, into: &actions)
            let retryAfter = transfer.head?.headers["retry-after"]
            if let delay = configuration.retryPolicy.delay(
                forRetry: transfer.attempt, after: error, retryAfter: retryAfter)
            {
                transfer.phase = .waitingRetry
                transfer.resetAttempt()
                actions.retry = (transfer.id, delay)
                if observed { actions.events.append(.retried(url: url, attempt: transfer.attempt, delay: delay)) }
            } else {
                s.remove(transfer)
                transfer.current = nil
                for subscriber in transfer.subscribers { actions.deliveries.append((subscriber.sink, .failed(error))) }
                if observed { actions.events.append(.failed(url: url, error: error)) }
            }
        }
    }

    /// Keeps the bytes of an interrupted response that can be resumed (see ``resumableBytesLimit``).
    func _keepPartial(of transfer: Transfer, into actions: inout Actions) {
        guard resumableBytesLimit > 0, let head = transfer.head, head.status == 200 || head.status == 206,
            transfer.received > 0, let total = transfer.expectedLength, transfer.received < total,
            transfer.request.validators == nil
        else { return }
        let validator: String
        if let partial = transfer.resumedFrom {
            validator = partial.validator
        } else {
            guard head.headers["accept-ranges"]?.lowercased().contains("bytes") == true else { return }
            if let etag = head.headers["etag"], !etag.hasPrefix("W/") {
                validator = etag
            } else if let date = head.headers["last-modified"] {
                validator = date
            } else {
                return
            }
        }
        actions.keep = (transfer.key, PartialBody(data: transfer.body.take(), validator: validator, total: total))
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

// MARK: - Reports from the transport

extension LoadCoordinator {
    /// Validates the head (and a resumed range); returns whether to receive the body.
    func attempt(_ attempt: LoadAttempt, didReceiveHead head: LoadResponseHead) -> Bool {
        let (isAccepted, actions) = state.withLock { s -> (Bool, Actions) in
            guard let transfer = s.transfer(of: attempt) else { return (false, Actions()) }
            transfer.head = head
            if let error = validate(head, for: transfer.request) {
                return (false, _complete(transfer, .failure(error), in: &s))
            }
            let coding = head.headers["content-encoding"]?.lowercased()
            if head.contentLength >= 0, coding == nil || coding == "identity" {
                transfer.expectedLength = head.contentLength
            }
            if let partial = transfer.resumedFrom {
                // A 206 continuing the kept bytes is appended to them; anything else starts over.
                guard head.status == 206 else {
                    transfer.resumedFrom = nil
                    return (true, Actions())
                }
                guard let range = Self.contentRange(head.headers["content-range"]),
                    range.start == Int64(partial.data.count), range.total == partial.total, coding == nil
                else {
                    transfer.resumedFrom = nil
                    let error = DataLoadingError.connectionFailed(
                        url: transfer.request.url, reason: "the server's range does not continue the kept bytes")
                    return (false, _complete(transfer, .failure(error), in: &s))
                }
                let limit = configuration.maximumBodySize
                guard partial.total <= limit else {
                    let error = DataLoadingError.bodyTooLarge(url: transfer.request.url, limit: limit)
                    return (false, _complete(transfer, .failure(error), in: &s))
                }
                guard transfer.body.replace(with: partial.data, reserving: Int(partial.total)) else {
                    transfer.resumedFrom = nil
                    let error = DataLoadingError.connectionFailed(
                        url: transfer.request.url, reason: "no memory for the \(partial.total)-byte body")
                    return (false, _complete(transfer, .failure(error), in: &s))
                }
                transfer.received = Int64(partial.data.count)
                transfer.expectedLength = partial.total
                return (true, Actions())
            }
            // Reserve for the announced body, but not more than 16 MiB on the server's word alone.
            if head.contentLength > 0, head.status != 304 {
                transfer.body.reserve(Int(min(head.contentLength, configuration.maximumBodySize, 16 << 20)))
            }
            return (true, Actions())
        }
        perform(actions)
        return isAccepted
    }

    /// The error a response head deserves, or `nil` when the body should be read.
    func validate(_ head: LoadResponseHead, for request: DataRequest) -> DataLoadingError? {
        let status = head.status
        if status == 304 {
            return request.validators?.isEmpty == false ? nil : .statusCode(304, url: request.url)
        }
        guard (200..<300).contains(status) else { return .statusCode(status, url: request.url) }
        let contentType = head.headers["content-type"]
        guard configuration.contentTypeValidation.accepts(contentType) else {
            return .unacceptableContentType(contentType ?? "", url: request.url)
        }
        if head.contentLength > configuration.maximumBodySize {
            return .bodyTooLarge(url: request.url, limit: configuration.maximumBodySize)
        }
        return nil
    }

    /// Appends a chunk, enforces the size limit and reports throttled progress; returns whether to go on.
    func attempt(_ attempt: LoadAttempt, didReceive bytes: UnsafeRawBufferPointer) -> Bool {
        var actions = Actions()
        let isAccepted = state.withLock { s -> Bool in
            guard let transfer = s.transfer(of: attempt), transfer.head != nil else { return false }
            transfer.received += Int64(bytes.count)
            let limit = configuration.maximumBodySize
            if transfer.received > limit {
                let error = DataLoadingError.bodyTooLarge(url: transfer.request.url, limit: limit)
                _complete(transfer, .failure(error), in: &s, into: &actions)
                return false
            }
            guard transfer.body.append(bytes) else {
                let error = DataLoadingError.connectionFailed(
                    url: transfer.request.url, reason: "no memory for \(transfer.received) bytes of body")
                _complete(transfer, .failure(error), in: &s, into: &actions)
                return false
            }
            transfer.progressEvents(interval: configuration.progressInterval, force: false, into: &actions.deliveries)
            return true
        }
        if !actions.isEmpty { perform(actions) }
        return isAccepted
    }

    /// Ends the attempt: a complete body, a 304, or an error (a short body becomes `.truncated`).
    func attempt(_ attempt: LoadAttempt, didFinish result: LoadTransportResult) {
        let actions = state.withLock { s -> Actions in
            guard let transfer = s.transfer(of: attempt) else { return Actions() }
            transfer.handle = nil  // ended on the wire: nothing to cancel
            var actions = Actions()
            let url = transfer.request.url
            if let metrics = result.metrics, isObserved {
                actions.events.append(.measured(url: url.redactedString, metrics: metrics))
            }
            switch result {
            case .failed(let error, _):
                _complete(transfer, .failure(error), in: &s, into: &actions)
            case .broken(let reason, _):
                let error: DataLoadingError
                if let expected = transfer.expectedLength, transfer.received < expected {
                    error = .truncated(url: url, expected: expected, received: transfer.received)
                } else {
                    error = .connectionFailed(url: url, reason: reason)
                }
                _complete(transfer, .failure(error), in: &s, into: &actions)
            case .completed(let finalURL, let metrics):
                guard let head = transfer.head else {
                    let error = DataLoadingError.connectionFailed(url: url, reason: "the server sent no response")
                    _complete(transfer, .failure(error), in: &s, into: &actions)
                    return actions
                }
                if let expected = transfer.expectedLength, transfer.received < expected, head.status != 304 {
                    let error = DataLoadingError.truncated(url: url, expected: expected, received: transfer.received)
                    _complete(transfer, .failure(error), in: &s, into: &actions)
                    return actions
                }
                var status = head.status
                var headers = head.headers
                if let partial = transfer.resumedFrom, status == 206 {  // a resumed body reads as the whole 200
                    status = 200
                    headers["content-range"] = nil
                    headers["content-length"] = String(partial.total)
                }
                var response = DataResponse(
                    data: status == 304 ? Data() : transfer.body.take(), url: finalURL ?? head.url ?? url,
                    statusCode: status, lowercasedHeaders: headers)
                response.metrics = metrics
                _complete(transfer, .success(response), in: &s, into: &actions)
            }
            return actions
        }
        perform(actions)
    }

    /// `start` and `total` of a `Content-Range: bytes start-end/total` answer whose range runs to the last byte;
    /// `nil` when malformed, unknown (`*`), negative, or not ending at `total - 1`. The numbers are the server's:
    /// every comparison is made so that none of them can overflow (`total` may be `Int64.min`).
    package static func contentRange(_ value: String?) -> (start: Int64, total: Int64)? {
        guard let value, value.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = value.dropFirst(6).split(separator: "/")
        guard spec.count == 2, let total = Int64(spec[1].trimmingCharacters(in: .whitespaces)) else { return nil }
        let bounds = spec[0].split(separator: "-")
        guard bounds.count == 2, let start = Int64(bounds[0].trimmingCharacters(in: .whitespaces)),
            let end = Int64(bounds[1].trimmingCharacters(in: .whitespaces)), 0 <= start, start <= end, end < total,
            end + 1 == total
        else { return nil }
        return (start, total)
    }
}
