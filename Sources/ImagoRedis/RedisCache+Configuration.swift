import Foundation

extension RedisCache {
    /// Everything a ``RedisCache`` is made of. Each field's default is given on it.
    ///
    /// ```swift
    /// var configuration = try RedisCache.Configuration(urls: ["redis://10.0.0.7:6379", "redis://10.0.0.8:6379"])
    /// configuration.timeToLive = .seconds(86_400)
    /// let cache = RedisCache(configuration: configuration)
    /// ```
    public struct Configuration: Sendable {
        /// The nodes keys are spread over by rendezvous hashing (losing one loses only its share). At least one.
        public var nodes: [RedisEndpoint]
        /// How long a connection attempt may take. Default 100 ms.
        public var connectTimeout: Duration
        /// How long one command (a round trip) may take. Default 50 ms.
        public var commandTimeout: Duration
        /// How long a small command sent from the calling thread waits there for its reply before the wait moves to
        /// the node's own thread (a loopback or LAN Redis answers well within it, and no thread is woken but Redis's;
        /// at most ``commandTimeout``; zero: every command runs on the node's thread). Default 1 ms.
        public var inlineReplyWait: Duration
        /// Connections per node, each used by one command at a time. Default 4.
        public var connectionsPerNode: Int
        /// The largest stored value (entry header and bytes); larger ones are not stored and larger values found
        /// are read as misses. Default 16 MB (16 × 2²⁰ bytes).
        public var maximumValueSize: Int
        /// Prepended to every Redis key the cache uses (values, leases, channels, statistics). Default `"imago:"`.
        public var keyPrefix: String
        /// How long a value lives when the caller gives no time to live. Default 7 days.
        public var timeToLive: Duration
        /// How long a fetch lease lasts if its holder never releases it (it crashed). Default 10 s.
        public var leaseDuration: Duration
        /// How long a process waits for another's fetch before fetching itself. Default 10 s.
        public var leaseWaitLimit: Duration
        /// How often a waiting process looks for the value (besides being woken by the holder's `PUBLISH`).
        /// Default 50 ms.
        public var leasePollInterval: Duration
        /// Consecutive failures of a node that open its circuit breaker. Default 5.
        public var breakerThreshold: Int
        /// How long an open breaker refuses calls before letting one probe through. Default 1 s; doubled after each
        /// failed probe.
        public var breakerBackoff: Duration
        /// The longest back-off. Default 30 s.
        public var breakerMaximumBackoff: Duration
        /// How long this process's lookup counts (the fleet's hit rate, `imago cache stats --redis`) may wait
        /// before being sent to Redis; they are also sent every 64 lookups and at ``RedisCache/close()``, never on
        /// a read's round trip. Default 1 s.
        public var statisticsInterval: Duration

        /// A configuration for `nodes` with every other field at its default.
        public init(nodes: [RedisEndpoint]) {
            self.nodes = nodes
            connectTimeout = .milliseconds(100)
            commandTimeout = .milliseconds(50)
            inlineReplyWait = .milliseconds(1)
            connectionsPerNode = 4
            maximumValueSize = 16 << 20
            keyPrefix = "imago:"
            timeToLive = .seconds(7 * 86_400)
            leaseDuration = .seconds(10)
            leaseWaitLimit = .seconds(10)
            leasePollInterval = .milliseconds(50)
            breakerThreshold = 5
            breakerBackoff = .seconds(1)
            breakerMaximumBackoff = .seconds(30)
            statisticsInterval = .seconds(1)
        }

        /// A configuration for the nodes at `urls` (see ``RedisEndpoint/init(url:)``).
        ///
        /// - Throws: ``RedisCache/Error/invalidURL(_:reason:)``, ``RedisCache/Error/noNodes``.
        public init(urls: [String]) throws(RedisCache.Error) {
            guard !urls.isEmpty else { throw .noNodes }
            var nodes: [RedisEndpoint] = []
            for url in urls { nodes.append(try RedisEndpoint(url: url)) }
            self.init(nodes: nodes)
        }
    }

    /// Why a ``RedisCache`` could not be made (a tier that is down is never an error: see ``SharedCacheError``).
    public enum Error: Swift.Error, Sendable, Hashable, CustomStringConvertible {
        /// A node URL could not be parsed (the URL is shown without its password).
        case invalidURL(String, reason: String)
        /// No node was given.
        case noNodes

        /// One sentence saying what to pass instead.
        public var description: String {
            switch self {
            case .invalidURL(let url, let reason): "invalid Redis URL '\(url)': \(reason)"
            case .noNodes: "give at least one Redis node (redis://host:6379 or unix:///path/to/redis.sock)"
            }
        }
    }
}
