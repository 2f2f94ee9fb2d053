import Foundation
import ImagoCore

extension RedisCache {
    /// What this process's ``RedisCache`` has done since it was made: the counters every shared tier keeps.
    @available(*, deprecated, renamed: "SharedCacheMetrics")
    public typealias Statistics = SharedCacheMetrics

    /// This process's counters so far and each node's breaker now (nodes named by ``RedisEndpoint/description``,
    /// which leaves passwords out): what `imago serve` exports at `/metrics` and `imago cache stats --redis` shows.
    public var statistics: SharedCacheMetrics {
        var s = counters.withLock { $0 }
        s.breakerOpens = nodes.reduce(0) { $0 + $1.breaker.openCount }
        s.nodes = nodes.map { .init(name: $0.endpoint.description, isBreakerOpen: $0.breaker.isOpen) }
        return s
    }

    /// What the tier holds over every node, as `imago cache stats --redis` shows it.
    public struct TierStatistics: Sendable, Hashable {
        /// Values stored under ``Configuration/keyPrefix``.
        public var keys = 0
        /// Their total size in bytes (entry headers included).
        public var bytes: Int64 = 0
        /// Reads by every process of the fleet (counted in Redis).
        public var lookups = 0
        /// Of those, misses.
        public var misses = 0
        /// Nodes that answered, of all nodes.
        public var reachableNodes = 0

        /// Zeroes.
        public init() {}

        /// Hits over lookups, or `nil` before any lookup.
        public var hitRate: Double? { lookups > 0 ? Double(lookups - misses) / Double(lookups) : nil }
    }

    /// Counts the tier's values and bytes (a `SCAN` of the prefix on every node, `STRLEN` of each) and reads the
    /// fleet's lookup counters (this process's unsent counts are sent first; other processes send theirs in
    /// batches of 64, at least once a second while they read, and when closed). Nodes that do not answer are left out (see ``TierStatistics/reachableNodes``).
    public func tierStatistics() async -> TierStatistics {
        var total = TierStatistics()
        let prefix = configuration.keyPrefix
        for node in nodes {
            await node.flushCounts(statistics: RedisKeys.statistics(prefix: prefix))
            do throws(SharedCacheError) {
                var cursor = "0"
                repeat {
                    let reply = try await node.run([
                        Data("SCAN".utf8), Data(cursor.utf8), Data("MATCH".utf8), Data("\(prefix)v:*".utf8),
                        Data("COUNT".utf8), Data("1000".utf8),
                    ])
                    guard case .array(let parts) = reply, parts.count == 2, let next = parts[0].data,
                        case .array(let keys) = parts[1]
                    else { throw SharedCacheError.refused(reason: "unexpected SCAN reply") }
                    cursor = String(decoding: next, as: UTF8.self)
                    let names = keys.compactMap(\.data)
                    if !names.isEmpty {
                        let lengths = try await node.run(names.map { [Data("STRLEN".utf8), $0] })
                        total.keys += names.count
                        total.bytes += Int64(lengths.reduce(0) { $0 + ($1.integer ?? 0) })
                    }
                } while cursor != "0"
                let counts = try await node.run([
                    Data("HMGET".utf8), Data("\(prefix)stats".utf8), Data("lookups".utf8), Data("misses".utf8),
                ])
                if case .array(let values) = counts, values.count == 2 {
                    total.lookups += values[0].integer ?? 0
                    total.misses += values[1].integer ?? 0
                }
                total.reachableNodes += 1
            } catch {
                continue
            }
        }
        return total
    }
}

extension RedisCache {
    /// ``statistics``, as ``SharedDataCaching`` asks every tier.
    public var metrics: SharedCacheMetrics? { statistics }
}
