import Foundation

extension LoadCoordinator {
    /// What makes two requests the same transfer: the URL, every request header that may change the response
    /// (names lowercased, values verbatim) and the validators. Requests with different credentials, cookies or
    /// `Accept` headers therefore never share a body.
    package struct TransferKey: Hashable, Sendable {
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

        /// The same text for the same key in every process (for file names): URL, sorted headers, validators.
        package var stableDescription: String {
            var text = url
            for (name, value) in headers.sorted(by: { $0.key < $1.key }) { text += "\n\(name): \(value)" }
            if let validators { text += "\n#\(validators.etag ?? "")#\(validators.lastModified ?? "")" }
            return text
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
        /// Holding a slot, running request modifiers / making its transport handle.
        case starting
        /// On the wire.
        case running
        /// Failed transiently; waiting for the backoff delay before queuing again.
        case waitingRetry
    }

    /// One network transfer shared by every subscriber with the same ``TransferKey``. Only ever touched with the
    /// coordinator's lock held.
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
        /// The attempt on the wire and its handle.
        var current: LoadAttempt?
        var handle: (any LoadTransportHandle)?
        var head: LoadResponseHead?
        /// `Content-Length` when known and comparable with the decoded body (no content coding).
        var expectedLength: Int64?
        /// The body received so far, in one block sized from `Content-Length` (see ``ResponseBodyBuffer``).
        let body: ResponseBodyBuffer
        var received: Int64 = 0
        var lastProgressTime: ContinuousClock.Instant?
        var lastReported: Int64 = -1
        /// The bytes this attempt asked the server to continue (`Range`/`If-Range`), if any.
        var resumedFrom: PartialBody?

        init(id: UInt64, key: TransferKey, request: DataRequest, subscriber: Subscriber, bodyLimit: Int64) {
            self.id = id
            self.key = key
            self.request = request
            body = ResponseBodyBuffer(limit: Int(clamping: bodyLimit))
            subscribers = [subscriber]
            priority = subscriber.priority
        }

        var maximumPriority: RequestPriority { subscribers.lazy.map(\.priority).max() ?? priority }

        /// Clears what one attempt gathered, before a retry.
        func resetAttempt() {
            current = nil
            handle = nil
            head = nil
            expectedLength = nil
            body.release()
            received = 0
            lastProgressTime = nil
            lastReported = -1
            resumedFrom = nil
        }

        /// Progress (and partial data) events for every subscriber, when the throttle interval allows or `force`.
        /// Reads the clock only when a throttled event could be due.
        func progressEvents(interval: Duration, force: Bool, into out: inout [(EventSink, DataLoadEvent)]) {
            guard received != lastReported else { return }
            if !force {
                let now = ContinuousClock.now
                if let last = lastProgressTime, now - last < interval { return }
                lastProgressTime = now
            }
            lastReported = received
            var partial: Data?  // one copy of the bytes so far, for every subscriber that wants them
            for subscriber in subscribers {
                out.append((subscriber.sink, .progress(received: received, expected: expectedLength)))
                if subscriber.reportsPartialData && !force {
                    if partial == nil { partial = body.copy() }
                    out.append((subscriber.sink, .partialData(partial ?? Data())))
                }
            }
        }
    }

    /// Side effects decided under the lock and performed after it is released, in this order.
    struct Actions {
        var cancelHandles: [any LoadTransportHandle] = []
        var keep: (TransferKey, PartialBody)?
        var finishQueueItems: [UInt64] = []
        var deliveries: [(EventSink, DataLoadEvent)] = []
        var cancelSinks: [EventSink] = []
        var events: [DataLoaderEvent] = []
        var reprioritize: [(UInt64, RequestPriority)] = []
        var retry: (id: UInt64, delay: Duration)?

        var isEmpty: Bool {
            cancelHandles.isEmpty && keep == nil && finishQueueItems.isEmpty && deliveries.isEmpty
                && cancelSinks.isEmpty && events.isEmpty && reprioritize.isEmpty && retry == nil
        }

        mutating func merge(_ other: Actions) {
            cancelHandles += other.cancelHandles
            keep = keep ?? other.keep
            finishQueueItems += other.finishQueueItems
            deliveries += other.deliveries
            cancelSinks += other.cancelSinks
            events += other.events
            reprioritize += other.reprioritize
            retry = retry ?? other.retry
        }
    }

    /// The coordinator's shared state, behind its single lock.
    // @unchecked Sendable: its transfers (classes) are only touched while the coordinator's lock is held.
    struct State: @unchecked Sendable {
        var transfers: [UInt64: Transfer] = [:]
        var byKey: [TransferKey: UInt64] = [:]
        var nextID: UInt64 = 0

        mutating func remove(_ transfer: Transfer) {
            transfers[transfer.id] = nil
            if byKey[transfer.key] == transfer.id { byKey[transfer.key] = nil }
        }

        /// The transfer `attempt` belongs to, if that attempt is still the current one.
        func transfer(of attempt: LoadAttempt) -> Transfer? {
            guard let transfer = transfers[attempt.transferID], transfer.current === attempt else { return nil }
            return transfer
        }
    }
}
