import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension HTTPDataLoader {
    /// What makes two requests the same transfer: the URL, every request header that may change the response
    /// (names lowercased, values verbatim) and the validators. Requests with different credentials, cookies or
    /// `Accept` headers therefore never share a body.
    package struct TransferKey: Hashable {
        let url: String
        let headers: [String: String]
        let validators: HTTPValidators?

        package init(_ request: DataRequest, ignoring ignored: Set<String>) {
            url = request.url.absoluteString
            var headers: [String: String] = [:]
            for (name, value) in request.headers {
                let lowered = name.lowercased()
                if !ignored.contains(lowered) { headers[lowered] = value }
            }
            self.headers = headers
            validators = request.validators?.isEmpty == false ? request.validators : nil
        }
    }

    /// One subscriber of a transfer (one `load` call).
    struct Subscriber {
        let id: UInt64
        let sink: EventSink
        var priority: RequestPriority
        let reportsPartialData: Bool
    }

    /// Where a transfer is in its life.
    enum Phase {
        /// Waiting for a slot in the queue.
        case queued
        /// Holding a slot, running request modifiers / creating its task.
        case starting
        /// Its URLSession task runs.
        case running
        /// Failed transiently; waiting for the backoff delay before queuing again.
        case waitingRetry
    }

    /// One network transfer shared by every subscriber with the same ``TransferKey``. Only ever touched with the
    /// loader's lock held.
    final class Transfer {
        let id: UInt64
        let key: TransferKey
        /// The first subscriber's request (the key guarantees the others only differ in ignored headers).
        let request: DataRequest
        var subscribers: [Subscriber]
        var priority: RequestPriority
        var phase = Phase.queued
        /// Attempts begun (1 for the first).
        var attempt = 0
        var startTime: ContinuousClock.Instant?
        var task: URLSessionDataTask?
        var taskID: Int?
        var timeout: (any DispatchSourceTimer)?
        var response: HTTPURLResponse?
        /// `Content-Length` when known and comparable with the decoded body (no content coding).
        var expectedLength: Int64?
        var body = Data()
        var received: Int64 = 0
        var redirects = 0
        var lastProgressTime: ContinuousClock.Instant?
        var lastReported: Int64 = -1

        init(id: UInt64, key: TransferKey, request: DataRequest, subscriber: Subscriber) {
            self.id = id
            self.key = key
            self.request = request
            subscribers = [subscriber]
            priority = subscriber.priority
        }

        var maximumPriority: RequestPriority {
            subscribers.lazy.map(\.priority).max() ?? priority
        }

        /// Clears what one attempt gathered, before a retry.
        func resetAttempt() {
            task = nil
            taskID = nil
            timeout?.cancel()  // releases the source and its handler; runs nothing
            timeout = nil
            response = nil
            expectedLength = nil
            body = Data()
            received = 0
            redirects = 0
            lastProgressTime = nil
            lastReported = -1
        }

        /// Progress (and partial data) events for every subscriber, when the throttle interval allows or `force`.
        func progressEvents(
            now: ContinuousClock.Instant, interval: Duration, force: Bool
        ) -> [(
            EventSink, DataLoadEvent
        )] {
            guard received != lastReported else { return [] }
            if !force, let last = lastProgressTime, now - last < interval { return [] }
            lastProgressTime = now
            lastReported = received
            var out: [(EventSink, DataLoadEvent)] = []
            for subscriber in subscribers {
                out.append((subscriber.sink, .progress(received: received, expected: expectedLength)))
                if subscriber.reportsPartialData && !force { out.append((subscriber.sink, .partialData(body))) }
            }
            return out
        }
    }

    /// Side effects decided under the lock and performed after it is released, in this order.
    struct Actions {
        var cancelTasks: [URLSessionTask] = []
        var cancelTimers: [any DispatchSourceTimer] = []
        var finishQueueItems: [UInt64] = []
        var deliveries: [(EventSink, DataLoadEvent)] = []
        var cancelSinks: [EventSink] = []
        var events: [DataLoaderEvent] = []
        var reprioritize: [(UInt64, RequestPriority)] = []
        var retry: (id: UInt64, delay: Duration)?

        mutating func merge(_ other: Actions) {
            cancelTasks += other.cancelTasks
            cancelTimers += other.cancelTimers
            finishQueueItems += other.finishQueueItems
            deliveries += other.deliveries
            cancelSinks += other.cancelSinks
            events += other.events
            reprioritize += other.reprioritize
            retry = retry ?? other.retry
        }
    }

    /// The loader's shared state, behind its single lock.
    // @unchecked Sendable: its transfers and URLSession tasks are only touched while the loader's lock is held.
    struct State: @unchecked Sendable {
        var transfers: [UInt64: Transfer] = [:]
        var byKey: [TransferKey: UInt64] = [:]
        var byTask: [Int: UInt64] = [:]
        var nextID: UInt64 = 0
        /// Tasks whose redirect callback is running: FoundationNetworking traps if such a task is cancelled before
        /// the callback's completion handler is called, so their cancellation waits in `deferredCancels`.
        var tasksInRedirectCallback: Set<Int> = []
        var deferredCancels: [Int: URLSessionTask] = [:]

        /// Cancels `task` now (through `actions`) or, while its redirect callback runs, once it returns.
        mutating func cancel(_ task: URLSessionTask, into actions: inout Actions) {
            if tasksInRedirectCallback.contains(task.taskIdentifier) {
                deferredCancels[task.taskIdentifier] = task
            } else {
                actions.cancelTasks.append(task)
            }
        }

        mutating func remove(_ transfer: Transfer) {
            transfers[transfer.id] = nil
            if byKey[transfer.key] == transfer.id { byKey[transfer.key] = nil }
            if let taskID = transfer.taskID { byTask[taskID] = nil }
        }
    }
}
