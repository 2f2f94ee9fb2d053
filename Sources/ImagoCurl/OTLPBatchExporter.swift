import Foundation
import ImagoCore
import Synchronization

/// Sends records to an OpenTelemetry collector (or any backend that takes OTLP) over HTTP or gRPC, as OTLP's
/// `http/protobuf` and `grpc` protocols say and OpenTelemetry's batch processors do: spans as ``OTLPTraceExporter``, log
/// entries as ``OTLPLogExporter``, each batch POSTed through an ``OTLPEndpoint`` by libcurl on a thread of its own.
///
/// Records are queued by ``submit(_:)``, which never waits: at most the configuration's
/// ``OTLPBatchConfiguration/maximumQueueSize`` are held and more are dropped (counted in ``droppedCount``), so a
/// collector's outage costs bounded memory and no caller's time. A batch goes when
/// ``OTLPBatchConfiguration/maximumBatchSize`` records are waiting, else every
/// ``OTLPBatchConfiguration/scheduleDelay``, one at a time; one that fails after the endpoint's retry is counted
/// in ``failedCount`` and told once until one succeeds, as are the records a collector's partial success refuses. ``shutdown(within:)`` sends what is queued, waiting no
/// longer than it is given; call it before the process ends.
///
/// ```swift
/// let exporter = OTLPTraceExporter(configuration: .init(
///     endpoint: OTLPEndpoint(url: URL(string: "http://collector:4318/v1/traces")!),
///     resource: [.init("service.name", .string("images"))]))
/// exporter.submit([span])
/// await exporter.shutdown()
/// ```
public final class OTLPBatchExporter<Item: Sendable>: Sendable {
    /// The settings.
    public let configuration: OTLPBatchConfiguration
    private let exported = Atomic<Int>(0)
    private let dropped = Atomic<Int>(0)
    private let failed = Atomic<Int>(0)
    private let isIncluded: @Sendable (Item) -> Bool
    private let state = Locked<(items: [Item], isClosed: Bool)>(([], false))
    private let write: @Sendable ([Item], inout ProtobufWriter) -> Void
    private let wake: AsyncStream<Void>.Continuation
    private let loops = Locked<(sender: Task<Void, Never>?, ticker: Task<Void, Never>?)>((nil, nil))

    /// An exporter posting to `configuration`'s endpoint the export requests `write` fills with a batch's items
    /// (after the resource and scope, ``ProtobufWriter/otlpResource(_:scope:items:)``), of the items `isIncluded` keeps;
    /// `noun` names them in the failure `onFailure` hears (`span(s)`).
    init(
        configuration: OTLPBatchConfiguration, noun: String, isIncluded: @escaping @Sendable (Item) -> Bool,
        onFailure: @escaping @Sendable (String) -> Void,
        write: @escaping @Sendable ([Item], inout ProtobufWriter) -> Void
    ) {
        self.configuration = configuration
        self.isIncluded = isIncluded
        self.write = write
        let (signals, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        self.wake = wake
        loops.withLock { loops in
            loops.sender = Task.detached { [self, signals] in
                var failing = false
                for await _ in signals { await sendAll(noun: noun, failing: &failing, onFailure: onFailure) }
                await sendAll(noun: noun, failing: &failing, onFailure: onFailure)  // what came after the last signal
            }
            loops.ticker = Task.detached { [wake, delay = configuration.scheduleDelay] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: delay)
                    wake.yield()
                }
            }
        }
    }

    /// Records sent and accepted by the collector.
    public var exportedCount: Int { exported.load(ordering: .relaxed) }
    /// Records dropped: the queue was full, the exporter had stopped, or the stop's limit passed first.
    public var droppedCount: Int { dropped.load(ordering: .relaxed) }
    /// Records whose export failed twice.
    public var failedCount: Int { failed.load(ordering: .relaxed) }

    /// Queues `items` for the next export (spans: the sampled ones) and returns at once; those beyond the queue's
    /// room are dropped.
    public func submit(_ items: [Item]) {
        let items = items.filter(isIncluded)
        guard !items.isEmpty else { return }
        let (kept, full) = state.withLock { state -> (Int, Bool) in
            guard !state.isClosed else { return (0, false) }
            let kept = min(configuration.maximumQueueSize - state.items.count, items.count)
            state.items.append(contentsOf: items.prefix(kept))
            return (kept, state.items.count >= configuration.maximumBatchSize)
        }
        if kept < items.count { dropped.add(items.count - kept, ordering: .relaxed) }
        if full { wake.yield() }
    }

    /// Sends every queued record and stops, waiting at most `limit` (default 5 s, as imgproxy's exporters);
    /// records still queued then, and records submitted afterwards, are dropped. Returns whether everything was
    /// sent (or failed) within the limit.
    @discardableResult
    public func shutdown(within limit: Duration = .seconds(5)) async -> Bool {
        state.withLock { $0.isClosed = true }
        let (sender, ticker) = loops.withLock { $0 }
        ticker?.cancel()
        wake.finish()
        guard let sender, await TaskDeadline.value(of: sender, within: limit) != nil else {
            let left = state.withLock { state in
                defer { state.items.removeAll() }
                return state.items.count
            }
            dropped.add(left, ordering: .relaxed)
            return false
        }
        return true
    }

    /// OTLP's export request of `items`: one resource, one instrumentation scope (`imago`), the items.
    func requestBody(_ items: [Item]) -> Data {
        var writer = ProtobufWriter()
        writer.otlpResource(configuration.resource, scope: configuration.scopeName) { write(items, &$0) }
        return Data(writer.bytes)
    }

    /// Posts batches until the queue is empty.
    private func sendAll(noun: String, failing: inout Bool, onFailure: @Sendable (String) -> Void) async {
        while true {
            let batch = state.withLock { state -> [Item] in
                let batch = Array(state.items.prefix(configuration.maximumBatchSize))
                state.items.removeFirst(batch.count)
                return batch
            }
            guard !batch.isEmpty else { return }
            switch await configuration.endpoint.send(requestBody(batch)) {
            case .failed(let problem):
                failed.add(batch.count, ordering: .relaxed)
                if !failing { onFailure("\(batch.count) \(noun) not exported: \(problem)") }
                failing = true
            case .accepted(let rejected, let message):
                // A partial success: the refused items count as failed, and are told, once until a whole success.
                let refused = min(rejected, batch.count)
                exported.add(batch.count - refused, ordering: .relaxed)
                failed.add(refused, ordering: .relaxed)
                if refused > 0, !failing {
                    onFailure("\(refused) \(noun) rejected by the collector" + (message.isEmpty ? "" : ": " + message))
                }
                failing = refused > 0
            }
        }
    }
}
