import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension HTTPDataLoader {
    /// Receives URLSession's callbacks (on the loader's serial delegate queue) and hands them to the loader.
    ///
    /// URLSession keeps its delegate alive until invalidated, so the delegate holds the loader weakly: dropping
    /// the last reference to the loader invalidates the session in its `deinit`.
    // @unchecked Sendable: the only mutable state is `owner`, behind its lock.
    final class SessionDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
        private struct Owner {
            weak var loader: HTTPDataLoader?
        }

        private let owner = Locked(Owner())

        func setOwner(_ loader: HTTPDataLoader) { owner.withLock { $0.loader = loader } }

        private var loader: HTTPDataLoader? { owner.withLock { $0.loader } }

        func urlSession(
            _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
            completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
        ) {
            // FoundationNetworking ignores this disposition for HTTP (the body keeps coming), so a refused
            // response is cancelled by the loader itself.
            let isAccepted = loader?.didReceive(response, task: dataTask) ?? false
            completionHandler(isAccepted ? .allow : .cancel)
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            loader?.didReceive(data, task: dataTask)
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
            loader?.didComplete(task, error: error)
        }

        func urlSession(
            _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
            newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
        ) {
            // The completion handler must be called only for a task nobody cancelled (else FoundationNetworking
            // traps), and the task must not be cancelled until it has been called: `willRedirect` marks the task,
            // and cancellations meanwhile wait until `didReturnFromRedirect`.
            guard let loader else { return }  // deinit cancelled every task
            let (decision, actions) = loader.willRedirect(task, to: request)
            switch decision {
            case .cancelled: return
            case .follow(let next): completionHandler(next)
            case .refuse: completionHandler(nil)
            }
            loader.didReturnFromRedirect(task, refused: decision.isRefusal, actions: actions)
        }
    }

    // MARK: - Callbacks

    /// Validates the status, content type and announced length; returns whether to receive the body.
    func didReceive(_ response: URLResponse, task: URLSessionTask) -> Bool {
        let (isAccepted, actions) = state.withLock { s -> (Bool, Actions) in
            guard let id = s.byTask[task.taskIdentifier], let transfer = s.transfers[id] else {
                return (false, Actions())
            }
            guard let http = response as? HTTPURLResponse else {
                let error = DataLoadingError.connectionFailed(url: transfer.request.url, reason: "not an HTTP response")
                return (false, _complete(transfer, .failure(error), in: &s))
            }
            transfer.response = http
            if let error = validate(http, for: transfer.request) {
                return (false, _complete(transfer, .failure(error), in: &s))
            }
            let length = http.expectedContentLength
            let coding = http.value(forHTTPHeaderField: "Content-Encoding")?.lowercased()
            if length >= 0, coding == nil || coding == "identity" { transfer.expectedLength = length }
            // Reserve for the announced body, but not more than 16 MiB on the server's word alone.
            if length > 0, http.statusCode != 304 {
                transfer.body.reserveCapacity(Int(min(length, configuration.maximumBodySize, 16 << 20)))
            }
            return (true, Actions())
        }
        perform(actions)
        return isAccepted
    }

    /// The error a response head deserves, or `nil` when the body should be read.
    func validate(_ response: HTTPURLResponse, for request: DataRequest) -> DataLoadingError? {
        let status = response.statusCode
        if status == 304 {
            return request.validators?.isEmpty == false ? nil : .statusCode(304, url: request.url)
        }
        guard (200..<300).contains(status) else { return .statusCode(status, url: request.url) }
        let contentType = response.value(forHTTPHeaderField: "Content-Type")
        guard configuration.contentTypeValidation.accepts(contentType) else {
            return .unacceptableContentType(contentType ?? "", url: request.url)
        }
        if response.expectedContentLength > configuration.maximumBodySize {
            return .bodyTooLarge(url: request.url, limit: configuration.maximumBodySize)
        }
        return nil
    }

    /// Appends a chunk, enforces the size limit and reports throttled progress.
    func didReceive(_ data: Data, task: URLSessionTask) {
        let actions = state.withLock { s -> Actions in
            guard let id = s.byTask[task.taskIdentifier], let transfer = s.transfers[id] else { return Actions() }
            transfer.received += Int64(data.count)
            if transfer.received > configuration.maximumBodySize {
                let error = DataLoadingError.bodyTooLarge(
                    url: transfer.request.url, limit: configuration.maximumBodySize)
                return _complete(transfer, .failure(error), in: &s)
            }
            transfer.body.append(data)
            var actions = Actions()
            actions.deliveries = transfer.progressEvents(
                now: .now, interval: configuration.progressInterval, force: false)
            return actions
        }
        perform(actions)
    }

    /// Ends the attempt: a complete body, a 304, or an error (a short body becomes `.truncated`).
    func didComplete(_ task: URLSessionTask, error: Error?) {
        let actions = state.withLock { s -> Actions in
            guard let id = s.byTask[task.taskIdentifier], let transfer = s.transfers[id] else { return Actions() }
            let url = transfer.request.url
            if let error { return _complete(transfer, .failure(mapError(error, transfer)), in: &s) }
            guard let http = transfer.response else {
                let error = DataLoadingError.connectionFailed(url: url, reason: "the server sent no response")
                return _complete(transfer, .failure(error), in: &s)
            }
            if let expected = transfer.expectedLength, transfer.received < expected, http.statusCode != 304 {
                let error = DataLoadingError.truncated(url: url, expected: expected, received: transfer.received)
                return _complete(transfer, .failure(error), in: &s)
            }
            var headers: [String: String] = [:]
            for (name, value) in http.allHeaderFields {
                if let name = name as? String, let value = value as? String { headers[name] = value }
            }
            let body = http.statusCode == 304 ? Data() : transfer.body
            let response = DataResponse(data: body, url: http.url ?? url, statusCode: http.statusCode, headers: headers)
            return _complete(transfer, .success(response), in: &s)
        }
        perform(actions)
    }

    /// What to tell URLSession about a redirect.
    enum RedirectDecision {
        /// The task was cancelled: do not call the completion handler at all.
        case cancelled
        /// Follow, with this request.
        case follow(URLRequest)
        /// Do not follow: the 3xx response becomes final (the transfer has already failed).
        case refuse

        var isRefusal: Bool { if case .refuse = self { true } else { false } }
    }

    /// Counts a redirect; refuses it past the limit or to another scheme, and drops credentials across origins.
    /// Returns the decision and the actions to perform once the completion handler has been called.
    func willRedirect(_ task: URLSessionTask, to newRequest: URLRequest) -> (RedirectDecision, Actions) {
        state.withLock { s -> (RedirectDecision, Actions) in
            guard let id = s.byTask[task.taskIdentifier], let transfer = s.transfers[id] else {
                return (.cancelled, Actions())
            }
            s.tasksInRedirectCallback.insert(task.taskIdentifier)
            transfer.redirects += 1
            let limit = configuration.maximumRedirects
            if transfer.redirects > limit {
                let error = DataLoadingError.tooManyRedirects(url: transfer.request.url, limit: limit)
                return (.refuse, _complete(transfer, .failure(error), in: &s))
            }
            guard let target = newRequest.url, let scheme = target.scheme?.lowercased(),
                configuration.acceptedSchemes.contains(scheme)
            else {
                let error = DataLoadingError.unsupportedScheme(url: newRequest.url ?? transfer.request.url)
                return (.refuse, _complete(transfer, .failure(error), in: &s))
            }
            var request = newRequest
            let origin = transfer.request.url
            if target.scheme?.lowercased() != origin.scheme?.lowercased() || target.host != origin.host
                || target.port != origin.port
            {
                for name in ["Authorization", "Proxy-Authorization", "Cookie"] {
                    request.setValue(nil, forHTTPHeaderField: name)
                }
            }
            return (.follow(request), Actions())
        }
    }

    /// After the redirect completion handler ran: performs a cancellation that had to wait (not needed after a
    /// refusal, which ends the task by itself), then the decided actions.
    func didReturnFromRedirect(_ task: URLSessionTask, refused: Bool, actions: Actions) {
        let deferred = state.withLock { s -> URLSessionTask? in
            s.tasksInRedirectCallback.remove(task.taskIdentifier)
            return s.deferredCancels.removeValue(forKey: task.taskIdentifier)
        }
        if let deferred, !refused { cancelQueue.async { deferred.cancel() } }
        perform(actions)
    }

    /// Turns a URLSession error into a typed one.
    func mapError(_ error: Error, _ transfer: Transfer) -> DataLoadingError {
        let url = transfer.request.url
        let nsError = error as NSError
        if nsError.domain == NSURLErrorDomain {
            switch nsError.code {
            case NSURLErrorCancelled: return .cancelled
            case NSURLErrorTimedOut: return .timedOut(url: url)
            case NSURLErrorHTTPTooManyRedirects:
                return .tooManyRedirects(url: url, limit: configuration.maximumRedirects)
            default: break
            }
        }
        if let expected = transfer.expectedLength, transfer.received < expected {
            return .truncated(url: url, expected: expected, received: transfer.received)
        }
        return .connectionFailed(
            url: url, reason: "\(nsError.localizedDescription) (\(nsError.domain) \(nsError.code))")
    }
}
