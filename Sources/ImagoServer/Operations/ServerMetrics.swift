import Foundation
import ImagoCore
import Synchronization

/// The proxy's counters, rendered in the Prometheus text format (version 0.0.4) at `/metrics`, each name after the
/// configuration's ``ImageProxy/Configuration/metricsNamespace`` (default `imago_serve_`). Thread-safe and
/// lock-free: every counter is an atomic word (relaxed), so counting a request costs a few atomic adds and no lock
/// shared by the server's threads. A scrape reads each counter once; counters updated during a scrape may be
/// seen before or after that update, as with any Prometheus client.
public final class ServerMetrics: Sendable {
    /// Where an image response's bytes came from.
    public enum CacheTier: String, Sendable, Hashable, CaseIterable {
        /// The output cache in memory: no decode, no encode.
        case outputMemory = "output_memory"
        /// The output cache on disk.
        case outputDisk = "output_disk"
        /// The output cache's shared tier (Redis): no decode, no encode, no fetch.
        case outputShared = "output_shared"
        /// Joined a render of the same output already in flight.
        case coalesced
        /// Rendered from the pipeline's memory cache of processed images (encode only).
        case pipelineMemory = "pipeline_memory"
        /// Rendered from the original in the pipeline's disk cache (decode and encode, no fetch).
        case pipelineDisk = "pipeline_disk"
        /// Rendered from the original in the pipeline's shared tier (decode and encode, no fetch).
        case pipelineShared = "pipeline_shared"
        /// Rendered from a fresh fetch from the origin.
        case origin
    }

    /// Where access log records and telemetry go, each counted apart when it drops what it cannot take
    /// (`log_records_dropped_total`).
    public enum LogSink: String, Sendable, Hashable, CaseIterable {
        /// Access log lines on standard output, dropped while its reader is behind by more than the buffer.
        case stdout
        /// Lines to syslog, dropped when its socket is full or gone.
        case syslog
        /// OpenTelemetry log records, dropped when the exporter's queue is full.
        case otelLogs = "otel_logs"
        /// OpenTelemetry spans, dropped when the exporter's queue is full.
        case otelTraces = "otel_traces"
        /// Sentry events, dropped when too many are being sent.
        case sentry
    }

    /// The namespace metric names start with by default: `imago_serve` (`imago_serve_requests_total`).
    public static let defaultNamespace = "imago_serve"

    /// Whether `namespace` can start Prometheus metric names: empty (bare names, `requests_total`), or a letter,
    /// `_` or `:` followed by letters, digits, `_` and `:`.
    public static func isValidNamespace(_ namespace: String) -> Bool {
        guard let first = namespace.unicodeScalars.first else { return true }
        func allowed(_ c: Unicode.Scalar, digits: Bool) -> Bool {
            c.isASCII && (c.properties.isAlphabetic || c == "_" || c == ":" || (digits && ("0"..."9").contains(c)))
        }
        return allowed(first, digits: false) && namespace.unicodeScalars.allSatisfy { allowed($0, digits: true) }
    }

    /// Upper bounds of the latency histogram's buckets, in seconds.
    public static let latencyBuckets: [Double] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    /// The statuses the proxy answers with, each counted in a word of its own; any other status is counted in
    /// `otherStatuses` under a lock (it never happens on the hot path).
    static let knownStatuses = [200, 304, 400, 403, 404, 405, 413, 415, 422, 500, 502, 503, 504]

    private let counters: AtomicCounters
    private let otherStatuses = Locked<[Int: Int]>([:])
    /// Reads the render queue's length when the text is made.
    let queueLength: @Sendable () -> Int
    /// Reads the shared tier's counters and breakers when the text is made (`nil`: no shared tier).
    let sharedTier: @Sendable () -> SharedCacheMetrics?
    /// Reads how many records each sink has dropped when the text is made.
    let droppedLogRecords: @Sendable (LogSink) -> Int
    /// What every metric's name starts with: the namespace and `_`, or nothing for an empty namespace.
    let prefix: String

    init(
        namespace: String = ServerMetrics.defaultNamespace,
        queueLength: @escaping @Sendable () -> Int,
        sharedTier: @escaping @Sendable () -> SharedCacheMetrics? = { nil },
        droppedLogRecords: @escaping @Sendable (LogSink) -> Int = { _ in 0 }
    ) {
        prefix = namespace.isEmpty ? "" : namespace + "_"
        self.queueLength = queueLength
        counters = AtomicCounters(count: Slot.count)
        self.sharedTier = sharedTier
        self.droppedLogRecords = droppedLogRecords
    }

    /// Where each counter lives in `counters`.
    private enum Slot {
        static let statuses = 0
        /// One per bucket, not cumulative (the text cumulates them), then one past the last bound.
        static let buckets = statuses + knownStatuses.count
        static let latencyNanoseconds = buckets + latencyBuckets.count + 1
        static let tiers = latencyNanoseconds + 1
        static let originFetches = tiers + CacheTier.allCases.count
        static let bytesIn = originFetches + 1
        static let bytesOut = bytesIn + 1
        static let inFlight = bytesOut + 1
        static let fallbacks = inFlight + 1
        static let passedThrough = fallbacks + 1
        /// Renewed outputs, one per ``Renewal`` case in order.
        static let renewals = passedThrough + 1
        /// One histogram (buckets, then the sum in nanoseconds) per ``RenderStage`` in order.
        static let stages = renewals + Renewal.allCases.count
        static let count = stages + RenderStage.allCases.count * histogramSize
        /// The slots of one histogram: a bucket per bound and one past the last, then the sum.
        static let histogramSize = latencyBuckets.count + 2
    }

    /// The stages of a render whose times `render_stage_seconds` keeps (``RenderStages``' fields).
    enum RenderStage: String, CaseIterable, Sendable {
        case queue, fetch, disk, decode, process, encode
    }

    func requestStarted() { counters.add(1, at: Slot.inFlight) }

    /// Undoes `requestStarted` for a request passed on to another path, which counts it again.
    func requestHandedOver() { counters.add(-1, at: Slot.inFlight) }

    /// Counts a finished request: its status, latency, tier and the body bytes sent.
    func requestFinished(status: Int, seconds: Double, tier: CacheTier?, bytesOut: Int) {
        counters.add(-1, at: Slot.inFlight)
        count(status: status)
        observe(seconds, histogramAt: Slot.buckets)
        if let tier, let index = CacheTier.allCases.firstIndex(of: tier) { counters.add(1, at: Slot.tiers + index) }
        counters.add(bytesOut, at: Slot.bytesOut)
    }

    /// Counts a request the HTTP server answered itself (``ImageProxy/countRejection(status:)``): its status only.
    func requestRejected(status: Int) { count(status: status) }

    private func count(status: Int) {
        if let index = Self.knownStatuses.firstIndex(of: status) {
            counters.add(1, at: Slot.statuses + index)
        } else {
            otherStatuses.withLock { $0[status, default: 0] += 1 }
        }
    }

    /// Adds one observation of `seconds` to the histogram whose slots start at `slot`.
    private func observe(_ seconds: Double, histogramAt slot: Int) {
        let bucket = Self.latencyBuckets.firstIndex { seconds <= $0 } ?? Self.latencyBuckets.count
        counters.add(1, at: slot + bucket)
        counters.add(Int((seconds * 1e9).rounded()), at: slot + Self.latencyBuckets.count + 1)
    }

    /// Adds a render's stages (in milliseconds) to `render_stage_seconds`, each stage it went through.
    func renderObserved(_ stages: RenderStages) {
        let times: [RenderStage: Double?] = [
            .queue: stages.queue, .fetch: stages.fetch, .disk: stages.disk, .decode: stages.decode,
            .process: stages.process, .encode: stages.encode,
        ]
        for (i, stage) in RenderStage.allCases.enumerated() {
            guard let milliseconds = times[stage] ?? nil else { continue }
            observe(milliseconds / 1000, histogramAt: Slot.stages + i * Slot.histogramSize)
        }
    }

    /// Counts one completed origin fetch of `bytes` bytes.
    func originFetched(bytes: Int) {
        counters.add(1, at: Slot.originFetches)
        counters.add(bytes, at: Slot.bytesIn)
    }

    /// Counts a response that carried the fallback image in place of a source that could not be had.
    func fallbackSent() { counters.add(1, at: Slot.fallbacks) }

    /// Counts an output that is the source's own bytes (`skip_processing`).
    func sourcePassedThrough() { counters.add(1, at: Slot.passedThrough) }

    /// What became of a cached output whose source's freshness had run out.
    enum Renewal: String, CaseIterable, Sendable {
        /// Rendered again from the source.
        case rendered
        /// The source revalidated to the validators the output was made from: kept, fresh again.
        case unchanged
        /// Answered as it was, because the origin could not be asked.
        case stale
    }

    /// Counts a cached output whose source's freshness had run out, by `renewal`.
    func outputRenewed(_ renewal: Renewal) {
        counters.add(1, at: Slot.renewals + Renewal.allCases.firstIndex(of: renewal)!)
    }

    /// The histogram whose slots start at `slot`.
    private func histogram(at slot: Int) -> MetricFamily.Histogram {
        MetricFamily.Histogram(
            bounds: Self.latencyBuckets, counts: (0...Self.latencyBuckets.count).map { counters[slot + $0] },
            sum: Double(counters[slot + Self.latencyBuckets.count + 1]) / 1e9)
    }

    /// Requests being answered now.
    public var inFlight: Int { counters[Slot.inFlight] }

    /// Completed origin fetches so far.
    public var originFetches: Int { counters[Slot.originFetches] }

    /// The metrics now, each name after the namespace: what ``prometheusText()`` writes, and what `imago serve
    /// --otel-metrics` sends to an OpenTelemetry collector.
    public func families() -> [MetricFamily] {
        var statuses = otherStatuses.withLock { $0 }
        for (i, status) in Self.knownStatuses.enumerated() {
            let count = counters[Slot.statuses + i]
            if count > 0 { statuses[status] = count }
        }
        let p = prefix
        func family(
            _ name: String, _ kind: MetricFamily.Kind, _ help: String, _ samples: [MetricFamily.Sample]
        ) -> MetricFamily {
            MetricFamily(name: p + name, kind: kind, help: help, samples: samples)
        }
        /// One sample per case, labelled `label` = the case's name, of the counter at `slot` + the case's index.
        func labelled<Case: RawRepresentable<String> & CaseIterable>(
            _ label: String, _ cases: Case.Type, at slot: Int
        ) -> [MetricFamily.Sample] {
            cases.allCases.enumerated().map { i, value in
                MetricFamily.Sample(labels: [.init(label, value.rawValue)], value: .integer(counters[slot + i]))
            }
        }
        func single(_ slot: Int) -> [MetricFamily.Sample] { [.init(value: .integer(counters[slot]))] }
        let statusSamples = statuses.keys.sorted().map { status in
            MetricFamily.Sample(labels: [.init("status", "\(status)")], value: .integer(statuses[status] ?? 0))
        }
        let stageSamples = RenderStage.allCases.enumerated().map { i, stage in
            MetricFamily.Sample(
                labels: [.init("stage", stage.rawValue)],
                value: .histogram(histogram(at: Slot.stages + i * Slot.histogramSize)))
        }
        var families = [
            family("requests_total", .counter, "Requests answered, by HTTP status.", statusSamples),
            family(
                "request_duration_seconds", .histogram, "Time from request to response.",
                [.init(value: .histogram(histogram(at: Slot.buckets)))]),
            family(
                "render_stage_seconds", .histogram,
                "Where renders spent their time, by stage: waiting for a worker (queue), fetching the original (fetch), "
                    + "reading it from the disk cache (disk), decoding, processing and encoding.",
                stageSamples),
            family(
                "cache_hits_total", .counter, "Image responses by the tier that produced them.",
                labelled("tier", CacheTier.self, at: Slot.tiers)),
            family("origin_fetches_total", .counter, "Completed fetches from origins.", single(Slot.originFetches)),
            family("bytes_in_total", .counter, "Bytes received from origins.", single(Slot.bytesIn)),
            family("bytes_out_total", .counter, "Response body bytes sent (GET).", single(Slot.bytesOut)),
            family(
                "fallbacks_total", .counter, "Responses that carried the fallback image for a failed source.",
                single(Slot.fallbacks)),
            family(
                "passed_through_total", .counter, "Outputs that are the source's own bytes (skip_processing).",
                single(Slot.passedThrough)),
            family(
                "outputs_renewed_total", .counter,
                "Cached outputs whose source's freshness ran out (--cache-control-passthrough), by what followed.",
                labelled("outcome", Renewal.self, at: Slot.renewals)),
            family("requests_in_flight", .gauge, "Requests being answered.", single(Slot.inFlight)),
            family("queue_length", .gauge, "Renders waiting for a worker.", [.init(value: .integer(queueLength()))]),
            family(
                "log_records_dropped_total", .counter,
                "Access log records and telemetry dropped, by where they were going: a reader or collector behind.",
                LogSink.allCases.map {
                    .init(labels: [.init("sink", $0.rawValue)], value: .integer(droppedLogRecords($0)))
                }),
        ]
        if let shared = sharedTier() { families += Self.sharedTierFamilies(shared, prefix: p) }
        return families
    }

    /// The metrics in the Prometheus text format.
    public func prometheusText() -> String { Self.prometheusText(families()) }

    /// `families` in the Prometheus text format (version 0.0.4): a histogram's buckets cumulative, with `+Inf`,
    /// `_sum` and `_count`.
    static func prometheusText(_ families: [MetricFamily]) -> String {
        var out = ""
        for family in families {
            let name = family.name
            out += "# HELP \(name) \(family.help)\n# TYPE \(name) \(family.kind.rawValue)\n"
            for sample in family.samples {
                let labels = sample.labels.map { "\($0.name)=\"\(labelValue($0.value))\"" }
                let braced = labels.isEmpty ? "" : "{\(labels.joined(separator: ","))}"
                switch sample.value {
                case .integer(let value):
                    out += "\(name)\(braced) \(value)\n"
                case .histogram(let histogram):
                    var cumulative = 0
                    for (i, count) in histogram.counts.enumerated() {
                        cumulative += count
                        let bound = i < histogram.bounds.count ? "\(histogram.bounds[i])" : "+Inf"
                        let le = (labels + ["le=\"\(bound)\""]).joined(separator: ",")
                        out += "\(name)_bucket{\(le)} \(cumulative)\n"
                    }
                    out += "\(name)_sum\(braced) \(histogram.sum)\n"
                    out += "\(name)_count\(braced) \(cumulative)\n"
                }
            }
        }
        return out
    }

    /// The shared tier's families (present only with a shared tier, `--redis`), their names after `prefix`.
    static func sharedTierFamilies(_ m: SharedCacheMetrics, prefix: String) -> [MetricFamily] {
        typealias Label = MetricFamily.Label
        typealias Counted = (labels: [Label], value: Int)
        let families: [(name: String, kind: MetricFamily.Kind, help: String, samples: [Counted])] = [
            ("hits_total", .counter, "Shared tier (Redis) reads that found a value.", [([], m.hits)]),
            ("misses_total", .counter, "Shared tier reads that found nothing usable.", [([], m.misses)]),
            ("writes_total", .counter, "Values written to the shared tier.", [([], m.writes)]),
            (
                "discarded_total", .counter,
                "Shared tier values not used, by reason: oversized (over the largest value, not stored or read as "
                    + "a miss), invalid (corrupt or another key's, read as a miss and deleted).",
                [([Label("reason", "oversized")], m.oversizedSkips), ([Label("reason", "invalid")], m.invalidRemoved)]
            ),
            (
                "errors_total", .counter,
                "Shared tier calls that failed, by kind: timeout, failure (refused, reset, error reply), "
                    + "circuit_open (skipped while a breaker was open).",
                [
                    ([Label("kind", "timeout")], m.timeouts), ([Label("kind", "failure")], m.failures),
                    ([Label("kind", "circuit_open")], m.skippedWhileOpen),
                ]
            ),
            (
                "fetch_claims_total", .counter,
                "How origin fetches were claimed across the fleet, by outcome: lease (this process fetched for the "
                    + "fleet), filled (another's fetch delivered the value), unfilled (waited, then fetched), "
                    + "unleased (fetched without a lease: the tier could not be asked).",
                [
                    ([Label("outcome", "lease")], m.leasesTaken), ([Label("outcome", "filled")], m.leaseWaitsFilled),
                    ([Label("outcome", "unfilled")], m.leaseWaitsUnfilled),
                    ([Label("outcome", "unleased")], m.unleasedFetches),
                ]
            ),
            (
                "breaker_opens_total", .counter, "Times a shared tier node's circuit breaker opened.",
                [([], m.breakerOpens)]
            ),
            (
                "breaker_open", .gauge,
                "1 while a shared tier node's circuit breaker is open (its calls skipped), else 0.",
                m.nodes.map { ([Label("node", $0.name)], $0.isBreakerOpen ? 1 : 0) }
            ),
        ]
        return families.map { family in
            MetricFamily(
                name: prefix + "shared_cache_" + family.name, kind: family.kind, help: family.help,
                samples: family.samples.map { .init(labels: $0.labels, value: .integer($0.value)) })
        }
    }

    /// `text` escaped for a Prometheus label value (backslash, double quote, line feed).
    static func labelValue(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }
}

/// A fixed number of `Int` counters, each an atomic word updated with relaxed ordering, each on a cache line of
/// its own so that two threads counting different things do not move one line back and forth.
final class AtomicCounters: @unchecked Sendable {
    // @unchecked Sendable: the words are only touched through `Atomic`'s operations.
    private static let stride = 64
    private let storage: UnsafeMutableRawPointer
    private let count: Int

    init(count: Int) {
        self.count = count
        storage = UnsafeMutableRawPointer.allocate(byteCount: count * Self.stride, alignment: Self.stride)
        for i in 0..<count {
            (storage + i * Self.stride).bindMemory(to: Atomic<Int>.self, capacity: 1).initialize(to: Atomic(0))
        }
    }

    deinit {
        for i in 0..<count { word(i).deinitialize(count: 1) }
        storage.deallocate()
    }

    private func word(_ index: Int) -> UnsafeMutablePointer<Atomic<Int>> {
        precondition(index >= 0 && index < count, "counter index out of range")
        return (storage + index * Self.stride).assumingMemoryBound(to: Atomic<Int>.self)
    }

    /// Adds `value` (wrapping) to counter `index`.
    func add(_ value: Int, at index: Int) { word(index).pointee.wrappingAdd(value, ordering: .relaxed) }

    /// The current value of counter `index`.
    subscript(index: Int) -> Int { word(index).pointee.load(ordering: .relaxed) }
}
