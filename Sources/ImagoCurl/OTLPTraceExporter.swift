import Foundation
import ImagoCore
import Synchronization

/// Sends spans to an OpenTelemetry collector (or any backend that takes OTLP) over HTTP, as OTLP's
/// `http/protobuf` protocol says: batches POSTed as `ExportTraceServiceRequest` messages to the traces endpoint
/// (`http://localhost:4318/v1/traces` by default) through an ``OTLPEndpoint``, by libcurl on a thread of its own, as
/// the SDKs' batch span processor does.
///
/// Spans are queued by ``submit(_:)``, which never waits: at most ``Configuration-swift.struct/maximumQueueSize``
/// are held and more are dropped (counted in ``droppedCount``), so a collector's outage costs bounded memory and
/// no request's time. A batch goes when ``Configuration-swift.struct/maximumBatchSize`` spans are waiting, else every
/// ``Configuration-swift.struct/scheduleDelay``; one that fails after the endpoint's retry is counted in
/// ``failedCount``. ``shutdown(within:)`` sends what is queued, waiting no longer than it is given.
///
/// ```swift
/// let exporter = OTLPTraceExporter(configuration: .init(
///     endpoint: OTLPEndpoint(url: URL(string: "http://collector:4318/v1/traces")!),
///     resource: [.init("service.name", .string("images"))]))
/// exporter.submit([span])
/// await exporter.shutdown()
/// ```
public final class OTLPTraceExporter: Sendable {
    /// Where spans go and how they are batched (OpenTelemetry's `OTEL_EXPORTER_OTLP_*` and `OTEL_BSP_*` settings).
    public struct Configuration: Sendable, Hashable {
        /// The traces endpoint (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, or `OTEL_EXPORTER_OTLP_ENDPOINT` +
        /// `/v1/traces`). Default `http://localhost:4318/v1/traces`.
        public var endpoint: OTLPEndpoint
        /// What the spans come from: `service.name` and the like (`OTEL_SERVICE_NAME`,
        /// `OTEL_RESOURCE_ATTRIBUTES`). Default `service.name` = `imago`.
        public var resource: [TraceSpan.Attribute]
        /// The longest a span waits to be sent (`OTEL_BSP_SCHEDULE_DELAY`). Default 5 s.
        public var scheduleDelay: Duration
        /// The most spans held (`OTEL_BSP_MAX_QUEUE_SIZE`). Default 2,048.
        public var maximumQueueSize: Int
        /// The most spans in one export (`OTEL_BSP_MAX_EXPORT_BATCH_SIZE`). Default 512.
        public var maximumBatchSize: Int

        /// Settings for `endpoint` (default `http://localhost:4318/v1/traces`), see the properties for the others.
        public init(
            endpoint: OTLPEndpoint = OTLPEndpoint(url: URL(string: "http://localhost:4318/v1/traces")!),
            resource: [TraceSpan.Attribute] = [.init("service.name", .string("imago"))],
            scheduleDelay: Duration = .seconds(5), maximumQueueSize: Int = 2_048, maximumBatchSize: Int = 512
        ) {
            self.endpoint = endpoint
            self.resource = resource
            self.scheduleDelay = scheduleDelay
            self.maximumQueueSize = max(1, maximumQueueSize)
            self.maximumBatchSize = max(1, min(maximumBatchSize, self.maximumQueueSize))
        }
    }

    /// The settings.
    public let configuration: Configuration

    private let queue: SpanQueue
    private let wake: AsyncStream<Void>.Continuation
    private let sender: Task<Void, Never>
    private let ticker: Task<Void, Never>

    /// An exporter with `configuration`; `onFailure` (default: nothing) hears of an export that failed for
    /// good, once until one succeeds again, off any lock.
    public init(configuration: Configuration, onFailure: @escaping @Sendable (String) -> Void = { _ in }) {
        self.configuration = configuration
        let queue = SpanQueue(configuration: configuration)
        self.queue = queue
        let (signals, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        self.wake = wake
        sender = Task.detached {
            var failing = false
            for await _ in signals { await queue.sendAll(failing: &failing, onFailure: onFailure) }
            await queue.sendAll(failing: &failing, onFailure: onFailure)  // what came after the last signal
        }
        ticker = Task.detached { [wake] in
            while !Task.isCancelled {
                try? await Task.sleep(for: configuration.scheduleDelay)
                wake.yield()
            }
        }
    }

    /// Spans sent and accepted by the collector.
    public var exportedCount: Int { queue.exported.load(ordering: .relaxed) }
    /// Spans dropped because ``Configuration-swift.struct/maximumQueueSize`` were waiting (or after shutdown).
    public var droppedCount: Int { queue.dropped.load(ordering: .relaxed) }
    /// Spans whose export failed twice.
    public var failedCount: Int { queue.failed.load(ordering: .relaxed) }

    /// Queues `spans` for the next export (those not sampled are left out) and returns at once; those beyond
    /// the queue's room are dropped.
    public func submit(_ spans: [TraceSpan]) {
        if queue.add(spans.filter(\.isSampled)) { wake.yield() }
    }

    /// Sends every queued span and stops, waiting at most `limit` (default 5 s, as imgproxy's exporters); spans
    /// still queued then, and spans submitted afterwards, are dropped. Returns whether everything was sent (or
    /// failed) within the limit.
    @discardableResult
    public func shutdown(within limit: Duration = .seconds(5)) async -> Bool {
        queue.close()
        ticker.cancel()
        wake.finish()
        guard await TaskDeadline.value(of: sender, within: limit) != nil else {
            queue.abandon()
            return false
        }
        return true
    }

    /// OTLP's `ExportTraceServiceRequest` of `spans`: one resource, one instrumentation scope (`imago`).
    func requestBody(_ spans: [TraceSpan]) -> Data {
        queue.requestBody(spans)
    }
}

/// The spans waiting for ``OTLPTraceExporter``, and their sending: batches taken under a lock, posted outside it,
/// one at a time.
private final class SpanQueue: Sendable {
    let configuration: OTLPTraceExporter.Configuration
    let exported = Atomic<Int>(0)
    let dropped = Atomic<Int>(0)
    let failed = Atomic<Int>(0)
    private let state = Mutex<(spans: [TraceSpan], isClosed: Bool)>(([], false))

    init(configuration: OTLPTraceExporter.Configuration) {
        self.configuration = configuration
    }

    /// Adds what there is room for and counts the rest as dropped; `true` when a full batch is waiting.
    func add(_ spans: [TraceSpan]) -> Bool {
        guard !spans.isEmpty else { return false }
        let (kept, full) = state.withLock { state -> (Int, Bool) in
            guard !state.isClosed else { return (0, false) }
            let kept = min(configuration.maximumQueueSize - state.spans.count, spans.count)
            state.spans.append(contentsOf: spans.prefix(kept))
            return (kept, state.spans.count >= configuration.maximumBatchSize)
        }
        if kept < spans.count { dropped.add(spans.count - kept, ordering: .relaxed) }
        return full
    }

    /// Takes no more spans.
    func close() {
        state.withLock { $0.isClosed = true }
    }

    /// Drops what is queued (counted as dropped): the sender will not get to it.
    func abandon() {
        let count = state.withLock { state in
            defer { state.spans.removeAll() }
            return state.spans.count
        }
        dropped.add(count, ordering: .relaxed)
    }

    /// Posts batches until the queue is empty.
    func sendAll(failing: inout Bool, onFailure: @Sendable (String) -> Void) async {
        while true {
            let batch = state.withLock { state -> [TraceSpan] in
                let batch = Array(state.spans.prefix(configuration.maximumBatchSize))
                state.spans.removeFirst(batch.count)
                return batch
            }
            guard !batch.isEmpty else { return }
            if let problem = await configuration.endpoint.send(requestBody(batch)) {
                failed.add(batch.count, ordering: .relaxed)
                if !failing { onFailure("\(batch.count) span(s) not exported: \(problem)") }
                failing = true
            } else {
                exported.add(batch.count, ordering: .relaxed)
                failing = false
            }
        }
    }

    func requestBody(_ spans: [TraceSpan]) -> Data {
        var writer = ProtobufWriter()
        writer.otlpResource(configuration.resource) { scope in
            for span in spans { scope.message(2) { span.write(to: &$0) } }
        }
        return Data(writer.bytes)
    }
}
