import Foundation

extension LoopbackServer {
    /// What the server has seen since it started (or since `resetStatistics()`); all counters start at zero.
    ///
    /// Paths are request paths without the query.
    public struct Statistics: Sendable {
        /// Requests parsed, per path.
        public var requestCounts: [String: Int] = [:]
        /// The last request seen on each path (method, headers, body).
        public var lastRequests: [String: Request] = [:]
        /// Responses whose body could not be delivered because the client went away (send failed, or the client
        /// closed a stalled or endless transfer), per path.
        public var abortedTransfers: [String: Int] = [:]
        /// Responses sent completely, per path.
        public var completedTransfers: [String: Int] = [:]
        /// Requests currently held at a gate (see `suspend(_:)`), per path.
        public var suspendedRequests: [String: Int] = [:]
        /// Requests parsed, all paths together.
        public var totalRequests = 0
        /// Requests between being parsed and their response finishing (or failing), right now.
        public var concurrentRequests = 0
        /// The highest `concurrentRequests` has been.
        public var maxConcurrentRequests = 0
        /// TCP connections accepted.
        public var connectionsAccepted = 0
    }

    /// A snapshot of every counter.
    public var statistics: Statistics { state.withLock { $0.statistics } }

    /// Requests seen on `path` (without query).
    public func requestCount(for path: String) -> Int { statistics.requestCounts[path, default: 0] }
    /// Requests seen on all paths.
    public var totalRequestCount: Int { statistics.totalRequests }
    /// Requests in flight right now.
    public var concurrentRequests: Int { statistics.concurrentRequests }
    /// The most requests that were in flight at once.
    public var maxConcurrentRequests: Int { statistics.maxConcurrentRequests }
    /// TCP connections accepted so far.
    public var connectionsAccepted: Int { statistics.connectionsAccepted }
    /// The last request received on `path`, or nil.
    public func lastRequest(for path: String) -> Request? { statistics.lastRequests[path] }
    /// The header fields of the last request on `path`, or nil when none came.
    public func lastRequestHeaders(for path: String) -> Headers? { lastRequest(for: path)?.headers }
    /// Transfers on `path` the client abandoned before the body was complete.
    public func abortedTransfers(for path: String) -> Int { statistics.abortedTransfers[path, default: 0] }
    /// Responses on `path` delivered completely.
    public func completedTransfers(for path: String) -> Int { statistics.completedTransfers[path, default: 0] }
    /// Requests on `path` currently held at its gate.
    public func suspendedRequestCount(for path: String) -> Int { statistics.suspendedRequests[path, default: 0] }

    /// Sets every counter back to zero (connections and requests in flight are still tracked).
    public func resetStatistics() {
        state.withLock { state in
            let inFlight = state.statistics.concurrentRequests
            let suspended = state.statistics.suspendedRequests
            state.statistics = Statistics()
            state.statistics.concurrentRequests = inFlight
            state.statistics.maxConcurrentRequests = inFlight
            state.statistics.suspendedRequests = suspended
        }
    }

    // MARK: - Gates

    /// Holds every request on `path` that arrives from now on after it is counted and before its response head
    /// is sent, until `resume(path)` (or `stop()`); `suspendedRequestCount(for:)` tells how many wait.
    public func suspend(_ path: String) {
        state.withLock { _ = $0.suspendedPaths.insert(path) }
    }

    /// Releases the requests held on `path` and lets later ones through.
    public func resume(_ path: String) {
        state.withLock { _ = $0.suspendedPaths.remove(path) }
    }

    // MARK: - Waiting

    /// Polls `condition` with ``ImagoTesting/eventually(timeout:_:)`` until it holds or `timeout`
    /// (``ImagoTesting/defaultTimeout`` by default) passes; returns whether it held.
    ///
    /// ```swift
    /// #expect(await server.waitUntil { $0.requestCount(for: "/a") == 1 })
    /// ```
    @discardableResult
    public func waitUntil(
        timeout: Duration = ImagoTesting.defaultTimeout, _ condition: (LoopbackServer) -> Bool
    ) async -> Bool {
        await ImagoTesting.eventually(timeout: timeout) { condition(self) }
    }

    // MARK: - Recording (connection threads)

    /// Counts `request`, then holds it at its path's gate; returns false when the server stops meanwhile.
    func admit(_ request: Request) -> Bool {
        let path = request.path
        let mustWait = state.withLock { state -> Bool in
            state.statistics.requestCounts[path, default: 0] += 1
            state.statistics.totalRequests += 1
            state.statistics.lastRequests[path] = request
            state.statistics.concurrentRequests += 1
            state.statistics.maxConcurrentRequests = max(
                state.statistics.maxConcurrentRequests, state.statistics.concurrentRequests)
            let held = state.suspendedPaths.contains(path) && !state.isStopping
            if held { state.statistics.suspendedRequests[path, default: 0] += 1 }
            return held
        }
        guard mustWait else { return true }
        return state.wait(until: { !$0.suspendedPaths.contains(path) || $0.isStopping }) { state in
            state.statistics.suspendedRequests[path, default: 0] -= 1
            return !state.isStopping
        }
    }

    /// Ends the in-flight span of a request on `path` with how its response went.
    func finish(path: String, outcome: Connection.Outcome) {
        state.withLock { state in
            state.statistics.concurrentRequests -= 1
            switch outcome {
            case .completed: state.statistics.completedTransfers[path, default: 0] += 1
            case .aborted where !state.isStopping: state.statistics.abortedTransfers[path, default: 0] += 1
            case .aborted, .serverStopped, .interrupted: break
            }
        }
    }

    /// The route for `path`: an exact match, else the `.directory` route with the longest matching prefix (and the
    /// rest of the path).
    func route(for path: String) -> (route: Route, remainder: String)? {
        state.withLock { state in
            if let route = state.routes[path] { return (route, "") }
            var best: (route: Route, prefix: String)?
            for (prefix, route) in state.routes {
                guard case .directory = route.content, path.hasPrefix(prefix) else { continue }
                let rest = path.dropFirst(prefix.count)
                guard prefix.hasSuffix("/") || rest.first == "/" else { continue }
                if prefix.count > best?.prefix.count ?? -1 { best = (route, prefix) }
            }
            return best.map { ($0.route, String(path.dropFirst($0.prefix.count))) }
        }
    }
}
