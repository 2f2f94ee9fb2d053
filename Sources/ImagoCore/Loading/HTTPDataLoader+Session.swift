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
            completionHandler(loader?.willRedirect(task, to: request))
        }
    }

    // MARK: - Callbacks

    /// Validates the status, content type and announced length; returns whether to receive the body.
    func didReceive(_ response: URLResponse, task: URLSessionTask) -> Bool {
        let (isAccepted, actions) = state.withLock { s -> (Bool, Actions) in
            guard let id = s.byTask[task.taskIdentifier], let transfer = s.transfers[id] else { return (false, Actions()) }
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
            if length > 0 { transfer.body.reserveCapacity(Int(min(length, configuration.maximumBodySize))) }
            return (true, Actions())
        }
        // The `.cancel` disposition cancels this task; cancelling it here as well, inside the callback, upsets
        // FoundationNetworking's state machine.
        perform(actions.sparing(task))
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

    /// Counts a redirect; refuses it past the limit or to another scheme, and drops credentials across origins.
    func willRedirect(_ task: URLSessionTask, to newRequest: URLRequest) -> URLRequest? {
        let (request, actions) = state.withLock { s -> (URLRequest?, Actions) in
            guard let id = s.byTask[task.taskIdentifier], let transfer = s.transfers[id] else { return (nil, Actions()) }
            transfer.redirects += 1
            let limit = configuration.maximumRedirects
            if transfer.redirects > limit {
                let error = DataLoadingError.tooManyRedirects(url: transfer.request.url, limit: limit)
                return (nil, _complete(transfer, .failure(error), in: &s))
            }
            guard let target = newRequest.url, let scheme = target.scheme?.lowercased(),
                configuration.acceptedSchemes.contains(scheme)
            else {
                let error = DataLoadingError.unsupportedScheme(url: newRequest.url ?? transfer.request.url)
                return (nil, _complete(transfer, .failure(error), in: &s))
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
            return (request, Actions())
        }
        // Refusing the redirect makes its 3xx response final, which `didReceive(_:task:)` then cancels; cancelling
        // the task inside this callback crashes FoundationNetworking ("not waiting for it").
        perform(actions.sparing(task))
        return request
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
        return .connectionFailed(url: url, reason: "\(nsError.localizedDescription) (\(nsError.domain) \(nsError.code))")
    }
}
