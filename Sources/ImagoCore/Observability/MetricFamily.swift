/// One metric and its samples as a process reads them at one moment: what a server's metrics are made of before
/// they are written out, as Prometheus text (`/metrics`) or as OTLP metrics for an OpenTelemetry collector.
///
/// ```swift
/// let requests = MetricFamily(
///     name: "requests_total", kind: .counter, help: "Requests answered, by HTTP status.",
///     samples: [.init(labels: [.init("status", "200")], value: .integer(42))])
/// ```
public struct MetricFamily: Sendable, Hashable {
    /// What the samples measure.
    public enum Kind: String, Sendable, Hashable {
        /// A count that only grows (since the process started).
        case counter
        /// A value that goes up and down.
        case gauge
        /// Observations counted into buckets (since the process started).
        case histogram
    }

    /// A label: which series of the family a sample belongs to.
    public struct Label: Sendable, Hashable {
        /// The label's name (`status`).
        public var name: String
        /// Its value (`200`).
        public var value: String

        /// The label `name` = `value`.
        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    /// Observations counted into buckets of upper bounds.
    public struct Histogram: Sendable, Hashable {
        /// The buckets' upper bounds, increasing; one more bucket takes what is above the last.
        public var bounds: [Double]
        /// The observations in each bucket (not cumulative): one more than ``bounds``.
        public var counts: [Int]
        /// The observations' sum.
        public var sum: Double

        /// A histogram from its parts.
        public init(bounds: [Double], counts: [Int], sum: Double) {
            self.bounds = bounds
            self.counts = counts
            self.sum = sum
        }

        /// The number of observations.
        public var count: Int { counts.reduce(0, +) }
    }

    /// A sample's value.
    public enum Value: Sendable, Hashable {
        /// A counter's or a gauge's value.
        case integer(Int)
        /// A histogram's buckets.
        case histogram(Histogram)
    }

    /// One series' value.
    public struct Sample: Sendable, Hashable {
        /// The series' labels. Default none.
        public var labels: [Label]
        /// Its value.
        public var value: Value

        /// A sample of `value` with `labels` (default none).
        public init(labels: [Label] = [], value: Value) {
            self.labels = labels
            self.value = value
        }
    }

    /// The metric's name (`imago_serve_requests_total`).
    public var name: String
    /// What it measures.
    public var kind: Kind
    /// One sentence on what it counts.
    public var help: String
    /// Its series.
    public var samples: [Sample]

    /// A family from its parts.
    public init(name: String, kind: Kind, help: String, samples: [Sample]) {
        self.name = name
        self.kind = kind
        self.help = help
        self.samples = samples
    }
}
