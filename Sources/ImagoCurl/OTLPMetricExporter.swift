import Foundation
import ImagoCore
import Synchronization

/// Sends a process's metrics to an OpenTelemetry collector over OTLP/HTTP with protobuf, every interval and once
/// more when it stops (imgproxy's `IMGPROXY_OPEN_TELEMETRY_ENABLE_METRICS`): each time the families `read`
/// returns, as OTLP's `ExportMetricsServiceRequest` through an ``OTLPEndpoint`` (`…/v1/metrics`). The last
/// export waits at most what ``shutdown(within:)`` is given.
///
/// Counters are cumulative monotonic sums and histograms cumulative explicit-bucket histograms, both from the
/// exporter's start; gauges are gauges. The metric names are the families' own (the Prometheus names), so the
/// collector's view and a `/metrics` scrape agree. An export that fails after the endpoint's retry is counted and
/// skipped: the next one carries the totals.
///
/// ```swift
/// let exporter = OTLPMetricExporter(configuration: .init()) { proxy.metrics.families() }
/// await exporter.shutdown()
/// ```
public final class OTLPMetricExporter: Sendable {
    /// Where metrics go and how often (OpenTelemetry's `OTEL_EXPORTER_OTLP_*` and `OTEL_METRIC_EXPORT_INTERVAL`).
    public struct Configuration: Sendable, Hashable {
        /// The metrics endpoint (`OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`, or `OTEL_EXPORTER_OTLP_ENDPOINT` +
        /// `/v1/metrics`). Default `http://localhost:4318/v1/metrics`.
        public var endpoint: OTLPEndpoint
        /// What the metrics come from: `service.name` and the like. Default `service.name` = `imago`.
        public var resource: [TraceSpan.Attribute]
        /// Time between exports (`OTEL_METRIC_EXPORT_INTERVAL`). Default 10 s, as imgproxy's.
        public var interval: Duration

        /// Settings for `endpoint` (default `http://localhost:4318/v1/metrics`), see the properties for the others.
        public init(
            endpoint: OTLPEndpoint = OTLPEndpoint(url: URL(string: "http://localhost:4318/v1/metrics")!),
            resource: [TraceSpan.Attribute] = [.init("service.name", .string("imago"))],
            interval: Duration = .seconds(10)
        ) {
            self.endpoint = endpoint
            self.resource = resource
            self.interval = interval
        }
    }

    /// The settings.
    public let configuration: Configuration
    /// When the exporter started: the start of every cumulative series it sends.
    public let start: Date

    private let exported = Atomic<Int>(0)
    private let failed = Atomic<Int>(0)
    private let loop = Locked<Task<Void, Never>?>(nil)
    private let read: @Sendable () -> [MetricFamily]
    private let onFailure: @Sendable (String) -> Void
    private let failing = Atomic<Bool>(false)

    /// An exporter of what `read` returns (called off any lock, on the exporter's own task), with
    /// `configuration`; `onFailure` (default: nothing) hears of an export that failed, once until one succeeds.
    public init(
        configuration: Configuration, onFailure: @escaping @Sendable (String) -> Void = { _ in },
        read: @escaping @Sendable () -> [MetricFamily]
    ) {
        self.configuration = configuration
        self.read = read
        self.onFailure = onFailure
        start = Date()
        loop.withLock { loop in
            loop = Task.detached { [weak self, interval = configuration.interval] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: interval)
                    guard !Task.isCancelled, let self else { return }
                    await self.export()
                }
            }
        }
    }

    /// Exports that the collector accepted.
    public var exportedCount: Int { exported.load(ordering: .relaxed) }
    /// Exports that failed.
    public var failedCount: Int { failed.load(ordering: .relaxed) }

    /// Sends the metrics now.
    public func export() async {
        let body = requestBody(read(), at: Date())
        switch await configuration.endpoint.send(body) {
        case .failed(let problem):
            failed.add(1, ordering: .relaxed)
            if !failing.exchange(true, ordering: .relaxed) { onFailure("metrics not exported: \(problem)") }
        case .accepted(let rejected, let message):
            // Exported; data points the collector refused are told, once until a whole success.
            exported.add(1, ordering: .relaxed)
            if rejected == 0 {
                failing.store(false, ordering: .relaxed)
            } else if !failing.exchange(true, ordering: .relaxed) {
                onFailure(
                    "\(rejected) data point(s) rejected by the collector" + (message.isEmpty ? "" : ": " + message))
            }
        }
    }

    /// Stops the interval's exports and sends the metrics a last time, waiting at most `limit` (default 5 s, as
    /// imgproxy's exporters; an export in flight is left to its own timeout). Returns whether the last export
    /// ended (sent or failed) within the limit.
    @discardableResult
    public func shutdown(within limit: Duration = .seconds(5)) async -> Bool {
        let task = loop.withLock { loop in
            defer { loop = nil }
            return loop
        }
        task?.cancel()
        let last = Task { await export() }
        return await TaskDeadline.value(of: last, within: limit) != nil
    }

    /// OTLP's `ExportMetricsServiceRequest` of `families` as they are at `time`.
    func requestBody(_ families: [MetricFamily], at time: Date) -> Data {
        let (start, now) = (TraceSpan.nanoseconds(start), TraceSpan.nanoseconds(time))
        var writer = ProtobufWriter()
        writer.otlpResource(configuration.resource) { scope in
            for family in families {
                scope.message(2) { metric in
                    metric.string(1, family.name)
                    metric.string(2, family.help)
                    if family.name.hasSuffix("_seconds") { metric.string(3, "s") }
                    switch family.kind {
                    case .gauge:
                        metric.message(5) { gauge in
                            for sample in family.samples {
                                gauge.message(1) { Self.write(sample, from: 0, at: now, to: &$0) }
                            }
                        }
                    case .counter:
                        metric.message(7) { sum in
                            for sample in family.samples {
                                sum.message(1) { Self.write(sample, from: start, at: now, to: &$0) }
                            }
                            sum.unsigned(2, 2)  // AGGREGATION_TEMPORALITY_CUMULATIVE
                            sum.unsigned(3, 1)  // monotonic
                        }
                    case .histogram:
                        metric.message(9) { histogram in
                            for sample in family.samples {
                                histogram.message(1) { Self.write(sample, from: start, at: now, to: &$0) }
                            }
                            histogram.unsigned(2, 2)  // AGGREGATION_TEMPORALITY_CUMULATIVE
                        }
                    }
                }
            }
        }
        return Data(writer.bytes)
    }

    /// `sample` as a `NumberDataPoint` or a `HistogramDataPoint`, its labels as string attributes.
    private static func write(
        _ sample: MetricFamily.Sample, from start: UInt64, at time: UInt64, to point: inout ProtobufWriter
    ) {
        let attributes = sample.labels.map { TraceSpan.Attribute($0.name, .string($0.value)) }
        if start > 0 { point.fixed64(2, start) }
        point.fixed64(3, time)
        switch sample.value {
        case .integer(let value):
            point.fixed64(6, UInt64(bitPattern: Int64(value)))  // as_int, an sfixed64
            for attribute in attributes { point.message(7) { attribute.write(to: &$0) } }
        case .histogram(let histogram):
            point.fixed64(4, UInt64(histogram.count))
            point.double(5, histogram.sum)
            point.packedFixed64(6, histogram.counts.map { UInt64(max(0, $0)) })
            point.packedDouble(7, histogram.bounds)
            for attribute in attributes { point.message(9) { attribute.write(to: &$0) } }
        }
    }
}
