import Dispatch
import Foundation
import ImagoCore

/// A data loader serving canned responses per URL, counting loads and cancels, able to hold a URL until released
/// (so races are set up on purpose), to fail, to answer conditional requests with 304, and to stream progress.
///
/// Events are delivered on a global Dispatch queue (after ``latency``, when set), in the order a real loader
/// would: progress (and partial data when asked) in ``chunkCount`` steps, then `.finished` or `.failed`.
///
/// ```swift
/// let loader = MockDataLoader()
/// loader.setResponse(MockImageDecoder.make(width: 4, height: 4, color: .red), for: url)
/// loader.hold(url)            // loads of url wait…
/// loader.release(url)         // …until now
/// ```
public final class MockDataLoader: DataLoading, Sendable {
    /// What the loader answers for a URL.
    public enum Reply: Sendable {
        /// A body with status and headers (an `ETag` header makes matching conditional requests get a 304).
        case data(Data, statusCode: Int = 200, headers: [String: String] = [:])
        /// A failure.
        case failure(DataLoadingError)
    }

    /// One load's handle.
    public final class Task: DataLoadTask, @unchecked Sendable {
        // @unchecked Sendable: the mutable fields are only touched under `loader.state`'s lock.
        /// The request this load serves.
        public let request: DataRequest
        fileprivate let handler: @Sendable (DataLoadEvent) -> Void
        fileprivate var isDone = false
        fileprivate var priorities: [RequestPriority] = []
        fileprivate weak var loader: MockDataLoader?

        fileprivate init(request: DataRequest, handler: @escaping @Sendable (DataLoadEvent) -> Void) {
            self.request = request
            self.handler = handler
        }

        /// Cancels: the handler gets `.failed(.cancelled)` once, and nothing after.
        public func cancel() { loader?.cancel(self) }

        /// Records the new priority.
        public func setPriority(_ priority: RequestPriority) {
            loader?.state.withLock { _ in priorities.append(priority) }
        }
    }

    fileprivate struct State {
        var replies: [URL: Reply] = [:]
        var held: Set<URL> = []
        var waiting: [Task] = []
        var requests: [DataRequest] = []
        var tasks: [Task] = []
        var cancelCount = 0
        var notModifiedCount = 0
    }

    fileprivate let state = Locked(State())
    /// Delay before a reply is delivered. Default `nil` (next turn of a global queue).
    public let latency: Duration?
    /// In how many steps progress (and partial data) is reported before `.finished`. Default 4.
    public let chunkCount: Int

    /// A loader answering unknown URLs with HTTP 404.
    public init(latency: Duration? = nil, chunkCount: Int = 4) {
        self.latency = latency
        self.chunkCount = max(1, chunkCount)
    }

    /// Serves `data` for `url` (status 200 unless given; headers such as `ETag`, `Cache-Control`).
    public func setResponse(_ data: Data, for url: URL, statusCode: Int = 200, headers: [String: String] = [:]) {
        state.withLock { $0.replies[url] = .data(data, statusCode: statusCode, headers: headers) }
    }

    /// Fails loads of `url` with `error`.
    public func setFailure(_ error: DataLoadingError, for url: URL) {
        state.withLock { $0.replies[url] = .failure(error) }
    }

    /// Makes loads of `url` wait until ``release(_:)``.
    public func hold(_ url: URL) { _ = state.withLock { $0.held.insert(url) } }

    /// Delivers the waiting loads of `url` and stops holding it.
    public func release(_ url: URL) {
        let tasks = state.withLock { s -> [Task] in
            s.held.remove(url)
            let released = s.waiting.filter { $0.request.url == url }
            s.waiting.removeAll { $0.request.url == url }
            return released
        }
        for task in tasks { deliver(task) }
    }

    /// Loads started so far.
    public var loadCount: Int { state.withLock { $0.requests.count } }
    /// Loads started for `url`.
    public func loadCount(for url: URL) -> Int { state.withLock { $0.requests.filter { $0.url == url }.count } }
    /// Every request, in order.
    public var requests: [DataRequest] { state.withLock { $0.requests } }
    /// Loads cancelled before they finished.
    public var cancelCount: Int { state.withLock { $0.cancelCount } }
    /// Conditional requests answered with 304.
    public var notModifiedCount: Int { state.withLock { $0.notModifiedCount } }
    /// How many loads wait in ``hold(_:)`` now.
    public var heldCount: Int { state.withLock { $0.waiting.count } }
    /// The priorities set on each load after it started, in order of the loads.
    public var priorityChanges: [[RequestPriority]] { state.withLock { s in s.tasks.map(\.priorities) } }

    /// Starts a load (see the type's description for the order of events).
    public func load(_ request: DataRequest, handler: @escaping @Sendable (DataLoadEvent) -> Void) -> any DataLoadTask {
        let task = Task(request: request, handler: handler)
        task.loader = self
        let isHeld = state.withLock { s -> Bool in
            s.requests.append(request)
            s.tasks.append(task)
            guard s.held.contains(request.url) else { return false }
            s.waiting.append(task)
            return true
        }
        if !isHeld { deliver(task) }
        return task
    }

    fileprivate func cancel(_ task: Task) {
        let wasRunning = state.withLock { s -> Bool in
            guard !task.isDone else { return false }
            task.isDone = true
            s.cancelCount += 1
            s.waiting.removeAll { $0 === task }
            return true
        }
        if wasRunning { task.handler(.failed(.cancelled)) }
    }

    private func deliver(_ task: Task) {
        let work: @Sendable () -> Void = { [self] in
            for event in events(for: task.request) {
                let live = state.withLock { _ -> Bool in
                    guard !task.isDone else { return false }
                    if case .finished = event { task.isDone = true }
                    if case .failed = event { task.isDone = true }
                    return true
                }
                guard live else { return }
                task.handler(event)
            }
        }
        if let latency {
            DispatchQueue.global().asyncAfter(deadline: .now() + latency.timeInterval, execute: work)
        } else {
            DispatchQueue.global().async(execute: work)
        }
    }

    private func events(for request: DataRequest) -> [DataLoadEvent] {
        let reply = state.withLock { $0.replies[request.url] } ?? .failure(.statusCode(404, url: request.url))
        switch reply {
        case .failure(let error): return [.failed(error)]
        case .data(let data, let status, let headers):
            let response = DataResponse(data: data, url: request.url, statusCode: status, headers: headers)
            if let etag = request.validators?.etag, etag == response.headers["etag"] {
                state.withLock { $0.notModifiedCount += 1 }
                return [.finished(DataResponse(data: Data(), url: request.url, statusCode: 304, headers: headers))]
            }
            guard (200..<300).contains(status) else { return [.failed(.statusCode(status, url: request.url))] }
            var events: [DataLoadEvent] = []
            let total = Int64(data.count)
            for step in 1...chunkCount {
                let count = data.count * step / chunkCount
                events.append(.progress(received: Int64(count), expected: total))
                if request.reportsPartialData, step < chunkCount { events.append(.partialData(data.prefix(count))) }
            }
            events.append(.finished(response))
            return events
        }
    }
}
