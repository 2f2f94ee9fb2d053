import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// ``HTTPDataLoader``'s transport: one `URLSession` (ephemeral, no HTTP cache, no cookies) whose delegate callbacks
/// are handed to each ``LoadAttempt``. It adds what URLSession lacks: the resource timeout as a timer, the redirect
/// limit and scheme check (dropping credentials across origins), and cancellation that never stalls the delegate
/// queue nor trips FoundationNetworking's traps.
final class URLSessionTransport: LoadTransporting {
    private struct State {
        var handles: [Int: TaskHandle] = [:]
        /// Tasks whose redirect callback is running: FoundationNetworking traps if such a task is cancelled before
        /// the callback's completion handler is called, so their cancellation waits in `deferredCancels`.
        var tasksInRedirectCallback: Set<Int> = []
        var deferredCancels: [Int: URLSessionTask] = [:]
    }

    let configuration: HTTPDataLoader.Configuration
    private let delegate: SessionDelegate
    private let state = Locked(State())
    /// The session, made by the first ``makeHandle(for:)``: a loader that never loads (the default loader of
    /// `ImagePipeline.Configuration()`, which `withDefaults()` and most callers replace) never pays for URLSession
    /// and the Foundation state it sets up (cookie storage, bundle lookups; its cost is in BENCHMARKS.md).
    /// `isClosed` after ``close()``: no session is made any more.
    private let sessionState = Locked<(session: URLSession?, isClosed: Bool)>((nil, false))
    /// Where URLSession tasks are cancelled: `URLSessionTask.cancel()` waits (`workQueue.sync`) behind every chunk
    /// FoundationNetworking has queued (seconds under a fast body); called on the delegate queue it would stall
    /// every transfer, so it runs on this serial queue (not a global one, whose few threads it could block).
    private let cancelQueue = DispatchQueue(label: "imago.HTTPDataLoader.cancel")

    init(configuration: HTTPDataLoader.Configuration) {
        self.configuration = configuration
        delegate = SessionDelegate()
        delegate.setOwner(self)
    }

    /// The ephemeral session (no HTTP cache, no cookies) with this loader's timeouts.
    private func makeSession() -> URLSession {
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        sessionConfiguration.urlCache = nil
        sessionConfiguration.requestCachePolicy = .reloadIgnoringLocalCacheData
        sessionConfiguration.httpCookieStorage = nil
        sessionConfiguration.httpShouldSetCookies = false
        sessionConfiguration.httpCookieAcceptPolicy = .never
        sessionConfiguration.timeoutIntervalForRequest = HTTPDataLoader.idleTimeoutSeconds(configuration.idleTimeout)
        sessionConfiguration.timeoutIntervalForResource = configuration.resourceTimeout.timeInterval
        // The coordinator's queue bounds concurrency; URLSession must not queue behind it.
        sessionConfiguration.httpMaximumConnectionsPerHost = max(6, configuration.maximumConcurrentTransfers)
        let delegateQueue = OperationQueue()
        delegateQueue.maxConcurrentOperationCount = 1
        delegateQueue.name = "imago.HTTPDataLoader"
        return URLSession(configuration: sessionConfiguration, delegate: delegate, delegateQueue: delegateQueue)
    }

    /// The session, made on first use; `nil` once closed.
    var session: URLSession? {
        sessionState.withLock { s in
            if s.isClosed { return nil }
            if let session = s.session { return session }
            let session = makeSession()
            s.session = session
            return session
        }
    }

    /// Whether the session has been made (tests: a loader that never loads makes none).
    var isSessionMade: Bool { sessionState.withLock { $0.session != nil } }

    func makeHandle(for attempt: LoadAttempt) -> (any LoadTransportHandle)? {
        guard let session else { return nil }
        return TaskHandle(
            transport: self, attempt: attempt, task: session.dataTask(with: urlRequest(for: attempt.request)))
    }

    /// Each remaining task was cancelled on the serial cancel queue; the session then finishes without cancelling
    /// again: `invalidateAndCancel()` would cancel tasks a second time, and FoundationNetworking traps ("Trying to
    /// access a behaviour for a task that in not in the registry") when two cancels of one task race. A session
    /// never made is never made.
    func close() {
        let made = sessionState.withLock { s in
            s.isClosed = true
            return s.session
        }
        guard let session = made else { return }
        cancelQueue.async { session.finishTasksAndInvalidate() }
    }

    /// Builds the URL request (headers, validators, idle timeout).
    func urlRequest(for request: DataRequest) -> URLRequest {
        var urlRequest = URLRequest(
            url: request.url, cachePolicy: .reloadIgnoringLocalCacheData,
            timeoutInterval: HTTPDataLoader.idleTimeoutSeconds(configuration.idleTimeout))
        let given = Set(request.headers.keys.map { $0.lowercased() })
        for (name, value) in configuration.defaultHeaders where !given.contains(name.lowercased()) {
            urlRequest.setValue(value, forHTTPHeaderField: name)
        }
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        if let validators = request.validators {
            if let etag = validators.etag { urlRequest.setValue(etag, forHTTPHeaderField: "If-None-Match") }
            if let date = validators.lastModified { urlRequest.setValue(date, forHTTPHeaderField: "If-Modified-Since") }
        }
        return urlRequest
    }

    // MARK: - Handles

    /// One attempt's URLSession task and resource timer.
    // @unchecked Sendable: `redirects` is touched only on the serial delegate queue; the rest is immutable.
    final class TaskHandle: LoadTransportHandle, @unchecked Sendable {
        weak var transport: URLSessionTransport?
        let attempt: LoadAttempt
        let task: URLSessionDataTask
        // A timer source, not asyncAfter: a cancelled DispatchWorkItem stays queued (with what it captured) until
        // its deadline, so every finished transfer kept ~0.5 KB alive for the whole resource timeout; a cancelled
        // source is released at once.
        let timer = DispatchSource.makeTimerSource(queue: .global())
        var redirects = 0
        /// Whether `start()` resumed `timer`. A Dispatch source is made suspended, and releasing a suspended source
        /// traps in libdispatch; a handle cancelled between `makeHandle` and `start()` (the coordinator's race
        /// with a cancellation) is released without starting. Set once in `start()`, read in `deinit`.
        private var timerResumed = false

        init(transport: URLSessionTransport, attempt: LoadAttempt, task: URLSessionDataTask) {
            self.transport = transport
            self.attempt = attempt
            self.task = task
        }

        deinit {
            // Cancelled first, so that resuming it never arms it: the source is released, nothing runs.
            if !timerResumed {
                timer.cancel()
                timer.resume()
            }
        }

        func start() {
            guard let transport else { return }
            transport.state.withLock { $0.handles[task.taskIdentifier] = self }
            timer.setEventHandler { [weak self] in
                guard let self, let transport = self.transport, transport.end(self) else { return }
                transport.cancelTask(task)
                attempt.didFinish(.failed(.timedOut(url: attempt.request.url), metrics: nil))
            }
            timer.schedule(deadline: .now() + transport.configuration.resourceTimeout.timeInterval)
            timer.resume()
            timerResumed = true
            task.priority = Float(attempt.request.priority.rawValue) / Float(RequestPriority.veryHigh.rawValue)
            task.resume()
        }

        func cancel() {
            guard let transport, transport.end(self) else { return }
            transport.cancelTask(task)
        }
    }

    /// Detaches `handle` (its late callbacks are ignored) and stops its timer; `false` when it had already ended.
    func end(_ handle: TaskHandle) -> Bool {
        let wasLive = state.withLock { s -> Bool in
            guard s.handles[handle.task.taskIdentifier] === handle else { return false }
            s.handles[handle.task.taskIdentifier] = nil
            return true
        }
        if wasLive { handle.timer.cancel() }  // releases the source and its handler; runs nothing
        return wasLive
    }

    /// Cancels `task` on the cancel queue, or once its redirect callback returns.
    func cancelTask(_ task: URLSessionTask) {
        let isDeferred = state.withLock { s -> Bool in
            guard s.tasksInRedirectCallback.contains(task.taskIdentifier) else { return false }
            s.deferredCancels[task.taskIdentifier] = task
            return true
        }
        if !isDeferred { cancelQueue.async { task.cancel() } }
    }

    func handle(for task: URLSessionTask) -> TaskHandle? {
        state.withLock { $0.handles[task.taskIdentifier] }
    }

    // MARK: - Callbacks

    /// Hands the response head to the attempt; returns whether to receive the body.
    func didReceive(_ response: URLResponse, task: URLSessionTask) -> Bool {
        guard let handle = handle(for: task) else { return false }
        guard let http = response as? HTTPURLResponse else {
            guard end(handle) else { return false }
            cancelTask(task)
            let url = handle.attempt.request.url
            handle.attempt.didFinish(
                .failed(.connectionFailed(url: url, reason: "not an HTTP response"), metrics: nil))
            return false
        }
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
        }
        let head = LoadResponseHead(
            status: http.statusCode, headers: headers, contentLength: http.expectedContentLength, url: http.url)
        return handle.attempt.didReceiveHead(head)
    }

    func didReceive(_ data: Data, task: URLSessionTask) {
        guard let handle = handle(for: task) else { return }
        _ = data.withUnsafeBytes { handle.attempt.didReceive($0) }
    }

    /// Ends the attempt: complete, or an error.
    func didComplete(_ task: URLSessionTask, error: Error?) {
        guard let handle = handle(for: task), end(handle) else { return }
        guard let error else {
            handle.attempt.didFinish(.completed(finalURL: nil, metrics: nil))
            return
        }
        let url = handle.attempt.request.url
        let nsError = error as NSError
        if nsError.domain == NSURLErrorDomain {
            switch nsError.code {
            case NSURLErrorCancelled:
                handle.attempt.didFinish(.failed(.cancelled, metrics: nil))
                return
            case NSURLErrorTimedOut:
                handle.attempt.didFinish(.failed(.timedOut(url: url), metrics: nil))
                return
            case NSURLErrorHTTPTooManyRedirects:
                let error = DataLoadingError.tooManyRedirects(url: url, limit: configuration.maximumRedirects)
                handle.attempt.didFinish(.failed(error, metrics: nil))
                return
            // FoundationNetworking (Linux) gives no code for a certificate that did not verify, only libcurl's
            // sentence for it (CURLE_PEER_FAILED_VERIFICATION, OpenSSL's backend)
            case NSURLErrorServerCertificateUntrusted, NSURLErrorServerCertificateHasBadDate,
                NSURLErrorServerCertificateHasUnknownRoot, NSURLErrorServerCertificateNotYetValid,
                NSURLErrorClientCertificateRejected, NSURLErrorClientCertificateRequired,
                NSURLErrorUnknown where Self.isCertificateRefusal(nsError.localizedDescription):
                handle.attempt.didFinish(
                    .failed(.tlsRefused(url: url, reason: nsError.localizedDescription), metrics: nil))
                return
            default: break
            }
        }
        let reason = "\(nsError.localizedDescription) (\(nsError.domain) \(nsError.code))"
        handle.attempt.didFinish(.broken(reason: reason, metrics: nil))
    }

    /// Whether `message` is libcurl's for a server certificate that did not verify: "SSL certificate problem: …"
    /// (no trusted authority, expired, revoked) or "SSL: no alternative certificate subject name matches …" /
    /// "SSL: certificate subject name … does not match …" (another host's).
    static func isCertificateRefusal(_ message: String) -> Bool {
        message.hasPrefix("SSL certificate problem")
            || (message.hasPrefix("SSL: ") && message.contains("subject name") && message.contains("match"))
    }

    /// What to tell URLSession about a redirect.
    enum RedirectDecision {
        /// The attempt was cancelled: do not call the completion handler at all.
        case cancelled
        /// Follow, with this request.
        case follow(URLRequest)
        /// Do not follow: the attempt fails with this error (the 3xx response is never read).
        case refuse(DataLoadingError)
    }

    /// Counts a redirect; refuses it past the limit or to another scheme, and drops credentials across origins.
    /// Marks the task as in its redirect callback (see `didReturnFromRedirect`).
    func willRedirect(_ task: URLSessionTask, to newRequest: URLRequest) -> RedirectDecision {
        let handle = state.withLock { s -> TaskHandle? in
            guard let handle = s.handles[task.taskIdentifier] else { return nil }
            s.tasksInRedirectCallback.insert(task.taskIdentifier)
            return handle
        }
        guard let handle else { return .cancelled }
        handle.redirects += 1
        let origin = handle.attempt.request.url
        let limit = configuration.maximumRedirects
        if handle.redirects > limit { return .refuse(.tooManyRedirects(url: origin, limit: limit)) }
        guard let target = newRequest.url, let scheme = target.scheme?.lowercased(),
            configuration.acceptedSchemes.contains(scheme)
        else {
            return .refuse(.unsupportedScheme(url: newRequest.url ?? origin))
        }
        var request = newRequest
        if target.scheme?.lowercased() != origin.scheme?.lowercased() || target.host != origin.host
            || target.port != origin.port
        {
            for name in ["Authorization", "Proxy-Authorization", "Cookie"] {
                request.setValue(nil, forHTTPHeaderField: name)
            }
        }
        return .follow(request)
    }

    /// After the redirect completion handler ran: performs a cancellation that had to wait (not needed after a
    /// refusal, which ends the task by itself).
    func didReturnFromRedirect(_ task: URLSessionTask, refused: Bool) {
        let deferred = state.withLock { s -> URLSessionTask? in
            s.tasksInRedirectCallback.remove(task.taskIdentifier)
            return s.deferredCancels.removeValue(forKey: task.taskIdentifier)
        }
        if let deferred, !refused { cancelQueue.async { deferred.cancel() } }
    }
}

extension URLSessionTransport {
    /// Receives URLSession's callbacks (on the loader's serial delegate queue) and hands them to the transport.
    ///
    /// URLSession keeps its delegate alive until invalidated, so the delegate holds the transport weakly: dropping
    /// the last reference to the loader invalidates the session (``URLSessionTransport/close()``).
    // @unchecked Sendable: the only mutable state is `owner`, behind its lock.
    final class SessionDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
        private struct Owner {
            weak var transport: URLSessionTransport?
        }

        private let owner = Locked(Owner())

        func setOwner(_ transport: URLSessionTransport) { owner.withLock { $0.transport = transport } }

        private var transport: URLSessionTransport? { owner.withLock { $0.transport } }

        func urlSession(
            _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
            completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
        ) {
            // FoundationNetworking ignores this disposition for HTTP (the body keeps coming), so a refused
            // response is cancelled by the coordinator through the handle.
            let isAccepted = transport?.didReceive(response, task: dataTask) ?? false
            completionHandler(isAccepted ? .allow : .cancel)
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            transport?.didReceive(data, task: dataTask)
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
            transport?.didComplete(task, error: error)
        }

        func urlSession(
            _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
            newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
        ) {
            // The completion handler must be called only for a task nobody cancelled (else FoundationNetworking
            // traps), and the task must not be cancelled until it has been called: `willRedirect` marks the task,
            // and cancellations meanwhile wait until `didReturnFromRedirect`. A refused redirect detaches the
            // handle first, so no cancel follows it at all.
            guard let transport else { return }  // the loader is gone: its close cancelled every task
            switch transport.willRedirect(task, to: request) {
            case .cancelled:
                return
            case .follow(let next):
                completionHandler(next)
                transport.didReturnFromRedirect(task, refused: false)
            case .refuse(let error):
                let handle = transport.handle(for: task)
                let isLive = handle.map { transport.end($0) } ?? false
                completionHandler(nil)
                transport.didReturnFromRedirect(task, refused: true)
                if isLive, let handle { handle.attempt.didFinish(.failed(error, metrics: nil)) }
            }
        }
    }
}
