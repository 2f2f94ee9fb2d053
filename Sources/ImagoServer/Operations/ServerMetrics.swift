import Foundation
import ImagoCore

/// The proxy's counters, rendered in the Prometheus text format (version 0.0.4) at `/metrics`. Thread-safe.
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

    /// Upper bounds of the latency histogram's buckets, in seconds.
    public static let latencyBuckets: [Double] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    private struct State {
        var requestsByStatus: [Int: Int] = [:]
        var latencyBucketCounts = [Int](repeating: 0, count: ServerMetrics.latencyBuckets.count)
        var latencyCount = 0
        var latencySum = 0.0
        var cacheHits: [CacheTier: Int] = [:]
        var originFetches = 0
        var bytesIn: Int64 = 0
        var bytesOut: Int64 = 0
        var inFlight = 0
    }

    private let state = Locked(State())
    /// Reads the render queue's length when the text is made.
    let queueLength: @Sendable () -> Int
    /// Reads the shared tier's counters and breakers when the text is made (`nil`: no shared tier).
    let sharedTier: @Sendable () -> SharedCacheMetrics?

    init(
        queueLength: @escaping @Sendable () -> Int,
        sharedTier: @escaping @Sendable () -> SharedCacheMetrics? = { nil }
    ) {
        self.queueLength = queueLength
        self.sharedTier = sharedTier
    }

    func requestStarted() { state.withLock { $0.inFlight += 1 } }

    /// Counts a finished request: its status, latency, tier and the body bytes sent.
    func requestFinished(status: Int, seconds: Double, tier: CacheTier?, bytesOut: Int) {
        state.withLock { s in
            s.inFlight -= 1
            s.requestsByStatus[status, default: 0] += 1
            s.latencyCount += 1
            s.latencySum += seconds
            for (i, bound) in Self.latencyBuckets.enumerated() where seconds <= bound { s.latencyBucketCounts[i] += 1 }
            if let tier { s.cacheHits[tier, default: 0] += 1 }
            s.bytesOut += Int64(bytesOut)
        }
    }

    /// Counts one completed origin fetch of `bytes` bytes.
    func originFetched(bytes: Int) {
        state.withLock {
            $0.originFetches += 1
            $0.bytesIn += Int64(bytes)
        }
    }

    /// Requests being answered now.
    public var inFlight: Int { state.withLock { $0.inFlight } }

    /// Completed origin fetches so far.
    public var originFetches: Int { state.withLock { $0.originFetches } }

    /// The metrics in the Prometheus text format.
    public func prometheusText() -> String {
        let s = state.withLock { $0 }
        var out = ""
        func family(_ name: String, _ type: String, _ help: String) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
        }
        family("imago_serve_requests_total", "counter", "Requests answered, by HTTP status.")
        for status in s.requestsByStatus.keys.sorted() {
            out += "imago_serve_requests_total{status=\"\(status)\"} \(s.requestsByStatus[status] ?? 0)\n"
        }
        family("imago_serve_request_duration_seconds", "histogram", "Time from request to response.")
        for (i, bound) in Self.latencyBuckets.enumerated() {
            out += "imago_serve_request_duration_seconds_bucket{le=\"\(bound)\"} \(s.latencyBucketCounts[i])\n"
        }
        out += "imago_serve_request_duration_seconds_bucket{le=\"+Inf\"} \(s.latencyCount)\n"
        out += "imago_serve_request_duration_seconds_sum \(s.latencySum)\n"
        out += "imago_serve_request_duration_seconds_count \(s.latencyCount)\n"
        family("imago_serve_cache_hits_total", "counter", "Image responses by the tier that produced them.")
        for tier in CacheTier.allCases {
            out += "imago_serve_cache_hits_total{tier=\"\(tier.rawValue)\"} \(s.cacheHits[tier] ?? 0)\n"
        }
        family("imago_serve_origin_fetches_total", "counter", "Completed fetches from origins.")
        out += "imago_serve_origin_fetches_total \(s.originFetches)\n"
        family("imago_serve_bytes_in_total", "counter", "Bytes received from origins.")
        out += "imago_serve_bytes_in_total \(s.bytesIn)\n"
        family("imago_serve_bytes_out_total", "counter", "Response body bytes sent (GET).")
        out += "imago_serve_bytes_out_total \(s.bytesOut)\n"
        family("imago_serve_requests_in_flight", "gauge", "Requests being answered.")
        out += "imago_serve_requests_in_flight \(s.inFlight)\n"
        family("imago_serve_queue_length", "gauge", "Renders waiting for a worker.")
        out += "imago_serve_queue_length \(queueLength())\n"
        if let shared = sharedTier() { out += Self.sharedTierText(shared) }
        return out
    }

    /// The shared tier's families (present only with a shared tier, `--redis`).
    static func sharedTierText(_ m: SharedCacheMetrics) -> String {
        let families: [(name: String, type: String, help: String, samples: [(labels: String, value: Int)])] = [
            ("hits_total", "counter", "Shared tier (Redis) reads that found a value.", [("", m.hits)]),
            ("misses_total", "counter", "Shared tier reads that found nothing usable.", [("", m.misses)]),
            ("writes_total", "counter", "Values written to the shared tier.", [("", m.writes)]),
            (
                "errors_total", "counter",
                "Shared tier calls that failed, by kind: timeout, failure (refused, reset, error reply), "
                    + "circuit_open (skipped while a breaker was open).",
                [
                    ("{kind=\"timeout\"}", m.timeouts), ("{kind=\"failure\"}", m.failures),
                    ("{kind=\"circuit_open\"}", m.skippedWhileOpen),
                ]
            ),
            (
                "breaker_open", "gauge",
                "1 while a shared tier node's circuit breaker is open (its calls skipped), else 0.",
                m.nodes.map { ("{node=\"\(labelValue($0.name))\"}", $0.isBreakerOpen ? 1 : 0) }
            ),
        ]
        var out = ""
        for family in families {
            let name = "imago_serve_shared_cache_" + family.name
            out += "# HELP \(name) \(family.help)\n# TYPE \(name) \(family.type)\n"
            for sample in family.samples { out += "\(name)\(sample.labels) \(sample.value)\n" }
        }
        return out
    }

    /// `text` escaped for a Prometheus label value (backslash, double quote, line feed).
    static func labelValue(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }
}
