import Foundation
import ImagoCore

extension CurlDataLoader {
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
        /// Holding a slot, running request modifiers / making its easy handle.
        case starting
        /// On the multi thread.
        case running
        /// Failed transiently; waiting for the backoff delay before queuing again.
        case waitingRetry
    }

    /// One network transfer shared by every subscriber with the same key. Only touched with the loader's lock held.
    final class Transfer {
        let id: UInt64
        let key: HTTPDataLoader.TransferKey
        /// The first subscriber's request (the key guarantees the others only differ in ignored headers).
        let request: DataRequest
        var subscribers: [Subscriber]
        var priority: RequestPriority
        var phase = Phase.queued
        /// Attempts begun (1 for the first).
        var attempt = 0
        var startTime: ContinuousClock.Instant?
        var easy: CurlEasy?
        var head: CurlEasy.Head?
        /// `Content-Length` when known and comparable with the decoded body (no content coding).
        var expectedLength: Int64?
        var body = Data()
        var received: Int64 = 0
        var lastProgressTime: ContinuousClock.Instant?
        var lastReported: Int64 = -1
        /// The bytes this attempt asked the server to continue (`Range`/`If-Range`), if any.
        var resumedFrom: PartialBody?

        init(id: UInt64, key: HTTPDataLoader.TransferKey, request: DataRequest, subscriber: Subscriber) {
            self.id = id
            self.key = key
            self.request = request
            subscribers = [subscriber]
            priority = subscriber.priority
        }

        var maximumPriority: RequestPriority { subscribers.lazy.map(\.priority).max() ?? priority }

        /// Clears what one attempt gathered, before a retry.
        func resetAttempt() {
            easy = nil
            head = nil
            expectedLength = nil
            body = Data()
            received = 0
            lastProgressTime = nil
            lastReported = -1
            resumedFrom = nil
        }

        /// Progress (and partial data) events for every subscriber, when the throttle interval allows or `force`.
        func progressEvents(
            now: ContinuousClock.Instant, interval: Duration, force: Bool
        ) -> [(EventSink, DataLoadEvent)] {
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
        var removeEasies: [CurlEasy] = []
        var finishQueueItems: [UInt64] = []
        var deliveries: [(EventSink, DataLoadEvent)] = []
        var cancelSinks: [EventSink] = []
        var events: [DataLoaderEvent] = []
        var reprioritize: [(UInt64, RequestPriority)] = []
        var retry: (id: UInt64, delay: Duration)?

        mutating func merge(_ other: Actions) {
            removeEasies += other.removeEasies
            finishQueueItems += other.finishQueueItems
            deliveries += other.deliveries
            cancelSinks += other.cancelSinks
            events += other.events
            reprioritize += other.reprioritize
            retry = retry ?? other.retry
        }
    }

    /// The first bytes of an interrupted response, kept to resume it.
    struct PartialBody {
        let data: Data
        /// The `If-Range` validator: the strong `ETag`, else `Last-Modified`.
        let validator: String
        /// The whole body's length.
        let total: Int64
    }

    /// The loader's shared state, behind its single lock.
    // @unchecked Sendable: its transfers (classes) are only touched while the loader's lock is held.
    struct State: @unchecked Sendable {
        var transfers: [UInt64: Transfer] = [:]
        var byKey: [HTTPDataLoader.TransferKey: UInt64] = [:]
        var nextID: UInt64 = 0
        /// Interrupted bodies by request, oldest first in `partialOrder`, `partialBytes` in all.
        var partials: [HTTPDataLoader.TransferKey: PartialBody] = [:]
        var partialOrder: [HTTPDataLoader.TransferKey] = []
        var partialBytes = 0

        /// Keeps `partial` for `key`, evicting the oldest until everything fits in `limit` bytes.
        mutating func keep(_ partial: PartialBody, for key: HTTPDataLoader.TransferKey, limit: Int) {
            _ = take(key)
            guard partial.data.count <= limit else { return }
            while partialBytes + partial.data.count > limit, !partialOrder.isEmpty { _ = take(partialOrder[0]) }
            partials[key] = partial
            partialOrder.append(key)
            partialBytes += partial.data.count
        }

        /// Removes and returns the bytes kept for `key`.
        mutating func take(_ key: HTTPDataLoader.TransferKey) -> PartialBody? {
            guard let partial = partials.removeValue(forKey: key) else { return nil }
            partialOrder.removeAll { $0 == key }
            partialBytes -= partial.data.count
            return partial
        }

        mutating func remove(_ transfer: Transfer) {
            transfers[transfer.id] = nil
            if byKey[transfer.key] == transfer.id { byKey[transfer.key] = nil }
        }

        /// The transfer `easy` belongs to, if that attempt is still the current one.
        func transfer(of easy: CurlEasy) -> Transfer? {
            guard let transfer = transfers[easy.transferID], transfer.easy === easy else { return nil }
            return transfer
        }
    }
}
