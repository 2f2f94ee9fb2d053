import Foundation
import ImagoCore

#if canImport(Glibc)
    import Glibc
#endif

/// A ``SharedDataCaching`` on one or more Redis servers, over hiredis: the cache tier shared by a fleet of
/// processes (memory → local disk → Redis → network).
///
/// - Values are stored in the disk cache's checksummed entry format with the cache key inside, so a corrupt or
///   colliding value reads as a miss and is deleted. Redis keys are `prefix + "v:" + SHA-256(key)`.
/// - Keys are spread over the nodes by rendezvous hashing; each node has a pool of connections with connect and
///   command timeouts (100 ms and 50 ms by default) and a circuit breaker. Redis being down, slow or refusing
///   only ever makes a miss (a ``SharedCacheError`` the pipeline counts).
/// - One fetch per fleet: ``claimFetch(of:)`` takes a lease (`SET … NX PX` with a random token); others wait,
///   woken by the holder's `PUBLISH` or by polling, for at most ``Configuration/leaseWaitLimit``.
///
/// Thread-safe; blocking hiredis calls run on the cache's own dispatch queues, never on Swift's cooperative pool.
///
/// ```swift
/// let redis = try RedisCache(urls: ["redis://:secret@10.0.0.7:6379/0", "unix:///run/redis/redis.sock"])
/// var configuration = ImagePipeline.Configuration(dataCache: disk)
/// configuration.sharedCache = redis
/// ```
public final class RedisCache: SharedDataCaching, Sendable {
    /// What the cache was made with.
    public let configuration: Configuration
    let nodes: [RedisNode]
    let counters = Locked(SharedCacheMetrics())
    let subscribers: [LeaseSubscriber]
    /// The hash of the fleet's lookup counters (``RedisKeys/statistics(prefix:)``).
    let statisticsKey: Data
    /// `GETRANGE`'s last index: the cap (so the reply holds at most the cap plus one byte).
    private let readEnd: Data

    /// A cache over `configuration.nodes` (connections are made on first use).
    public init(configuration: Configuration) {
        _ = Self.ignoresBrokenPipes
        self.configuration = configuration
        nodes = configuration.nodes.map { RedisNode($0, configuration: configuration) }
        subscribers = nodes.map { LeaseSubscriber(node: $0, configuration: configuration) }
        statisticsKey = RedisKeys.statistics(prefix: configuration.keyPrefix)
        readEnd = Data(String(configuration.maximumValueSize).utf8)
    }

    /// A cache over the nodes at `urls` with the default configuration.
    ///
    /// - Throws: ``Error`` for an unparseable URL or an empty list.
    public convenience init(urls: [String]) throws(Error) {
        self.init(configuration: try Configuration(urls: urls))
    }

    deinit { close() }

    // hiredis writes with write(2), not send(MSG_NOSIGNAL): a write to a Redis that died raises SIGPIPE, whose
    // default action kills the process. Ignored once per process, as libcurl and libmicrohttpd users do; the
    // write then fails with EPIPE and the call reads as a miss.
    private static let ignoresBrokenPipes: Bool = {
        signal(SIGPIPE, SIG_IGN)
        return true
    }()

    /// Sends this process's unsent lookup counts (one round trip per node that has some, within the connect and
    /// command timeouts), stops the lease subscribers and closes idle connections. Later calls reconnect.
    public func close() {
        for subscriber in subscribers { subscriber.stop() }
        for node in nodes { node.close(statistics: statisticsKey) }
    }

    // MARK: - SharedDataCaching

    /// The entry for `key`: a miss when absent, over the size cap, or invalid (then deleted).
    public func entry(for key: String) async throws(SharedCacheError) -> DataCacheEntry? {
        let names = RedisKeys(key, prefix: configuration.keyPrefix)
        let node = node(for: names)
        let reply: RedisReply
        do {
            reply = try await node.run(readCommand(names))
            if case .error(let message) = reply { throw SharedCacheError.refused(reason: message) }
        } catch let error as SharedCacheError {
            count(error)
            throw error
        } catch {
            throw .unavailable(reason: "\(error)")
        }
        return decode(reply, key: key, names: names, node: node)
    }

    /// Stores `entry` for `key` with `timeToLive` (default ``Configuration/timeToLive``); a value over
    /// ``Configuration/maximumValueSize`` is skipped (counted in ``SharedCacheMetrics/oversizedSkips``).
    public func store(_ entry: DataCacheEntry, for key: String, timeToLive: Duration?) async throws(SharedCacheError) {
        guard let value = RedisValue.encode(entry, key: key, limit: configuration.maximumValueSize) else {
            counters.withLock { $0.oversizedSkips += 1 }
            return
        }
        let names = RedisKeys(key, prefix: configuration.keyPrefix)
        let milliseconds = max(1, (timeToLive ?? configuration.timeToLive).milliseconds)
        do {
            // Retried after a timeout (SET is idempotent): a holder of the fetch lease whose write is lost would
            // release, and the waiting processes would fetch again.
            let reply = try await runRetrying(
                [Data("SET".utf8), names.value, value, Data("PX".utf8), Data("\(milliseconds)".utf8)],
                on: node(for: names))
            if case .error(let message) = reply { throw SharedCacheError.refused(reason: message) }
            counters.withLock { $0.writes += 1 }
        } catch let error as SharedCacheError {
            count(error)
            throw error
        } catch {
            throw .unavailable(reason: "\(error)")
        }
    }

    /// Deletes the value for `key`.
    public func removeEntry(for key: String) async throws(SharedCacheError) {
        let names = RedisKeys(key, prefix: configuration.keyPrefix)
        do {
            _ = try await node(for: names).run([Data("DEL".utf8), names.value])
        } catch {
            count(error)
            throw error
        }
    }

    // MARK: - Internals shared by the extensions

    /// The node that owns `names` (rendezvous hashing: the highest score of key and node seed wins, so removing
    /// a node moves only its own keys).
    func node(for names: RedisKeys) -> RedisNode {
        guard nodes.count > 1 else { return nodes[0] }
        var best = nodes[0]
        var bestScore: UInt64 = 0
        for node in nodes {
            let score = XXH64.hash(names.digestBytes, seed: node.seed)
            if score >= bestScore {
                best = node
                bestScore = score
            }
        }
        return best
    }

    /// A bounded read: `GETRANGE` of at most the cap plus one byte (so an oversized value is recognised without
    /// being read whole). The fleet's lookup counter is not on this round trip: see ``RedisNode/countLookup``.
    func readCommand(_ names: RedisKeys) -> [Data] {
        [RedisKeys.getrange, names.value, RedisKeys.zero, readEnd]
    }

    /// The entry in a `GETRANGE` reply, counting the outcome; invalid values are deleted in the background.
    func decode(_ reply: RedisReply, key: String, names: RedisKeys, node: RedisNode) -> DataCacheEntry? {
        guard let bytes = reply.data, !bytes.isEmpty else {
            noteMiss(names, node: node)
            return nil
        }
        guard bytes.count <= configuration.maximumValueSize else {
            counters.withLock { $0.oversizedSkips += 1 }
            noteMiss(names, node: node)
            return nil
        }
        switch RedisValue.decode(bytes, key: key) {
        case .success(let entry):
            counters.withLock { $0.hits += 1 }
            node.countLookup(miss: false, statistics: statisticsKey)
            return entry
        case .failure:
            counters.withLock { $0.invalidRemoved += 1 }
            noteMiss(names, node: node)
            node.post([[Data("DEL".utf8), names.value]])
            return nil
        }
    }

    /// Counts a miss here and, batched, in Redis.
    private func noteMiss(_ names: RedisKeys, node: RedisNode) {
        counters.withLock { $0.misses += 1 }
        node.countLookup(miss: true, statistics: statisticsKey)
    }

    func count(_ error: SharedCacheError) {
        counters.withLock { s in
            switch error {
            case .timedOut: s.timeouts += 1
            case .circuitOpen: s.skippedWhileOpen += 1
            default: s.failures += 1
            }
        }
    }
}

/// The Redis keys of one cache key: its value, its fetch lease and the channel the lease's release is published
/// on, all named by the SHA-256 of the cache key (bounded length, any bytes in the key). Only the value's name is
/// made up front (every read needs it; the others only a lease).
struct RedisKeys: Sendable {
    let digest: SHA256Digest
    let prefix: String
    let value: Data

    init(_ key: String, prefix: String) {
        digest = SHA256.hash(key)
        self.prefix = prefix
        value = Self.name(prefix, "v:", digest)
    }

    /// The digest's 32 bytes (rendezvous hashing's input).
    var digestBytes: [UInt8] { digest.bytes }
    /// The fetch lease's key.
    var lease: Data { Self.name(prefix, "l:", digest) }
    /// The channel the lease's release is published on.
    var channel: Data { Self.name(prefix, "c:", digest) }

    /// The hash of the fleet's lookup counters.
    static func statistics(prefix: String) -> Data { Data("\(prefix)stats".utf8) }

    /// `prefix`, `kind` and the digest's 64 hex digits, built in place (`Data` of a string's UTF-8 view takes a
    /// generic path with dynamic casts: ~1 µs a name).
    private static func name(_ prefix: String, _ kind: StaticString, _ digest: SHA256Digest) -> Data {
        var prefix = prefix
        return prefix.withUTF8 { head in
            let count = head.count + kind.utf8CodeUnitCount + 64
            var name = Data(count: count)
            name.withUnsafeMutableBytes { raw in
                let out = raw.bindMemory(to: UInt8.self)
                var at = 0
                for byte in head {
                    out[at] = byte
                    at += 1
                }
                for i in 0..<kind.utf8CodeUnitCount {
                    out[at] = kind.utf8Start[i]
                    at += 1
                }
                digest.writeHex(into: UnsafeMutableBufferPointer(rebasing: out[at...]))
            }
            return name
        }
    }

    /// Command words sent on every read.
    static let getrange = Data("GETRANGE".utf8)
    static let zero = Data("0".utf8)
}
