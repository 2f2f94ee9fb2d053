import CCurl
import Foundation
import ImagoCore

// A transfer's life, as in HTTPDataLoader: queued → starting (request modifiers) → running (on the multi thread)
// → completed, or back to queued through waitingRetry after a transient failure.
extension CurlDataLoader {
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
            queue.finish(id)  // cancelled between leaving the queue and starting: give the slot back
            return
        }
        if let event = begun.event { observers.emit([event]) }
        let modifiers = configuration.loading.requestModifiers
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

    /// Makes the easy handle and hands it to the multi thread; continues an interrupted body when one is kept.
    func begin(_ id: UInt64, request: DataRequest, attempt: Int) {
        var request = request
        let partial = state.withLock { s -> PartialBody? in
            guard let transfer = s.transfers[id], request.validators?.isEmpty != false,
                !request.headers.keys.contains(where: { $0.lowercased() == "range" })
            else { return nil }
            return s.take(transfer.key)
        }
        if let partial {
            request.headers["Range"] = "bytes=\(partial.data.count)-"
            request.headers["If-Range"] = partial.validator
        }
        guard let multi,
            let easy = CurlEasy(
                request: request, transferID: id, attempt: attempt, configuration: configuration, delegate: self)
        else {
            let error = DataLoadingError.connectionFailed(
                url: request.url, reason: "libcurl could not start a transfer")
            fail(id, attempt: attempt, with: error)
            return
        }
        let isCurrent = state.withLock { s -> Bool in
            guard let transfer = s.transfers[id], transfer.phase == .starting, transfer.attempt == attempt else {
                return false
            }
            transfer.phase = .running
            transfer.easy = easy
            transfer.resumedFrom = partial
            return true
        }
        if isCurrent { multi.add(easy) }
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
        if let easy = transfer.easy { actions.removeEasies.append(easy) }  // ignored when curl already ended it
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
            _keepPartial(of: transfer, in: &s)
            let retryAfter = transfer.head?.headers["retry-after"]
            if let delay = configuration.loading.retryPolicy.delay(
                forRetry: transfer.attempt, after: error, retryAfter: retryAfter)
            {
                transfer.phase = .waitingRetry
                transfer.resetAttempt()
                actions.retry = (transfer.id, delay)
                actions.events.append(.retried(url: url, attempt: transfer.attempt, delay: delay))
            } else {
                s.remove(transfer)
                transfer.easy = nil
                for subscriber in transfer.subscribers { actions.deliveries.append((subscriber.sink, .failed(error))) }
                actions.events.append(.failed(url: url, error: error))
            }
        }
        return actions
    }

    /// Keeps the bytes of an interrupted response that can be resumed (see
    /// ``Configuration/resumableBytesLimit``).
    func _keepPartial(of transfer: Transfer, in s: inout State) {
        let limit = min(configuration.resumableBytesLimit, Int(clamping: configuration.loading.maximumBodySize))
        guard limit > 0, let head = transfer.head, head.status == 200 || head.status == 206, transfer.received > 0,
            let total = transfer.expectedLength, transfer.received < total, transfer.request.validators == nil
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
        s.keep(PartialBody(data: transfer.body, validator: validator, total: total), for: transfer.key, limit: limit)
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

// MARK: - Callbacks from the multi thread

extension CurlDataLoader: CurlEasy.Delegate {
    func easyDidReceiveHead(_ easy: CurlEasy, _ head: CurlEasy.Head) -> Bool {
        let (isAccepted, actions) = state.withLock { s -> (Bool, Actions) in
            guard let transfer = s.transfer(of: easy) else { return (false, Actions()) }
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
                let limit = configuration.loading.maximumBodySize
                guard partial.total <= limit else {
                    return (
                        false,
                        _complete(transfer, .failure(.bodyTooLarge(url: transfer.request.url, limit: limit)), in: &s)
                    )
                }
                transfer.body = partial.data
                transfer.received = Int64(partial.data.count)
                transfer.expectedLength = partial.total
            }
            // Reserve for the announced body, but not more than 16 MiB on the server's word alone.
            if head.contentLength > 0, head.status != 304 {
                transfer.body.reserveCapacity(
                    Int(min(head.contentLength, configuration.loading.maximumBodySize, 16 << 20)))
            }
            return (true, Actions())
        }
        perform(actions)
        return isAccepted
    }

    /// The error a response head deserves, or `nil` when the body should be read.
    func validate(_ head: CurlEasy.Head, for request: DataRequest) -> DataLoadingError? {
        let status = head.status
        if status == 304 {
            return request.validators?.isEmpty == false ? nil : .statusCode(304, url: request.url)
        }
        guard (200..<300).contains(status) else { return .statusCode(status, url: request.url) }
        let contentType = head.headers["content-type"]
        guard configuration.loading.contentTypeValidation.accepts(contentType) else {
            return .unacceptableContentType(contentType ?? "", url: request.url)
        }
        if head.contentLength > configuration.loading.maximumBodySize {
            return .bodyTooLarge(url: request.url, limit: configuration.loading.maximumBodySize)
        }
        return nil
    }

    func easyDidReceive(_ easy: CurlEasy, _ bytes: UnsafeRawBufferPointer) -> Bool {
        let (isAccepted, actions) = state.withLock { s -> (Bool, Actions) in
            guard let transfer = s.transfer(of: easy), transfer.head != nil else { return (false, Actions()) }
            transfer.received += Int64(bytes.count)
            let limit = configuration.loading.maximumBodySize
            if transfer.received > limit {
                let error = DataLoadingError.bodyTooLarge(url: transfer.request.url, limit: limit)
                return (false, _complete(transfer, .failure(error), in: &s))
            }
            transfer.body.append(contentsOf: bytes)
            var actions = Actions()
            actions.deliveries = transfer.progressEvents(
                now: .now, interval: configuration.loading.progressInterval, force: false)
            return (true, actions)
        }
        perform(actions)
        return isAccepted
    }

    func easyDidFinish(_ easy: CurlEasy, _ outcome: CurlEasy.Outcome) {
        let actions = state.withLock { s -> Actions in
            guard let transfer = s.transfer(of: easy) else { return Actions() }
            transfer.easy = nil  // already freed by the multi thread
            let url = transfer.request.url
            guard outcome.code == CURLE_OK else {
                return _complete(transfer, .failure(error(for: outcome, transfer)), in: &s)
            }
            guard let head = transfer.head else {
                let error = DataLoadingError.connectionFailed(url: url, reason: "the server sent no response")
                return _complete(transfer, .failure(error), in: &s)
            }
            if let expected = transfer.expectedLength, transfer.received < expected, head.status != 304 {
                let error = DataLoadingError.truncated(url: url, expected: expected, received: transfer.received)
                return _complete(transfer, .failure(error), in: &s)
            }
            var status = head.status
            var headers = head.headers
            if let partial = transfer.resumedFrom, status == 206 {  // a resumed body reads as the whole 200
                status = 200
                headers["content-range"] = nil
                headers["content-length"] = String(partial.total)
            }
            var response = DataResponse(
                data: status == 304 ? Data() : transfer.body, url: outcome.finalURL ?? head.url ?? url,
                statusCode: status, headers: headers)
            response.metrics = outcome.metrics
            return _complete(transfer, .success(response), in: &s)
        }
        perform(actions)
    }

    /// `start` and `total` of a `Content-Range: bytes start-end/total` answer; `nil` when malformed or unknown.
    static func contentRange(_ value: String?) -> (start: Int64, total: Int64)? {
        guard let value, value.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = value.dropFirst(6).split(separator: "/")
        guard spec.count == 2, let total = Int64(spec[1].trimmingCharacters(in: .whitespaces)) else { return nil }
        let bounds = spec[0].split(separator: "-")
        guard bounds.count == 2, let start = Int64(bounds[0].trimmingCharacters(in: .whitespaces)),
            let end = Int64(bounds[1].trimmingCharacters(in: .whitespaces)), start <= end, end == total - 1
        else { return nil }
        return (start, total)
    }

    /// Turns a curl result into a typed error.
    func error(for outcome: CurlEasy.Outcome, _ transfer: Transfer) -> DataLoadingError {
        let url = transfer.request.url
        if let refusal = outcome.refusal, outcome.code == CURLE_COULDNT_CONNECT {
            return .addressRefused(host: refusal.host, address: refusal.address)
        }
        switch outcome.code {
        case CURLE_OPERATION_TIMEDOUT: return .timedOut(url: url)
        case CURLE_TOO_MANY_REDIRECTS: return .tooManyRedirects(url: url, limit: configuration.loading.maximumRedirects)
        case CURLE_UNSUPPORTED_PROTOCOL: return .unsupportedScheme(url: outcome.redirectTarget ?? url)
        case CURLE_FILESIZE_EXCEEDED: return .bodyTooLarge(url: url, limit: configuration.loading.maximumBodySize)
        default: break
        }
        if let expected = transfer.expectedLength, transfer.received < expected {
            return .truncated(url: url, expected: expected, received: transfer.received)
        }
        return .connectionFailed(url: url, reason: "\(outcome.message) (curl error \(outcome.code.rawValue))")
    }
}
