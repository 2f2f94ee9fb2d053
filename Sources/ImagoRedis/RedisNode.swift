import Dispatch
import Foundation
import ImagoCore
import Synchronization

/// One Redis server of the tier: a pool of connections, each on a serial dispatch queue of its own (hiredis's
/// blocking calls never run on Swift's cooperative threads), behind a circuit breaker.
final class RedisNode: Sendable {
    let endpoint: RedisEndpoint
    /// The rendezvous-hashing seed: a digest of the endpoint's description.
    let seed: UInt64
    let breaker: CircuitBreaker
    private let lanes: [Lane]
    private let connectTimeout: Duration
    private let commandTimeout: Duration
    /// The largest bulk string a reply may hold: the value cap plus the one byte `GETRANGE` asks beyond it.
    let replyLimit: Int
    /// How long lookup counts may wait before being sent (``RedisCache/Configuration/statisticsInterval``).
    private let statisticsInterval: Duration
    private let failures = Locked<(timeouts: Int, errors: Int)>((0, 0))
    /// Lookups and misses not yet added to the fleet's counters in Redis (see ``countLookup(miss:statistics:)``).
    private let unsentCounts = Locked(UnsentCounts())

    init(_ endpoint: RedisEndpoint, configuration: RedisCache.Configuration) {
        self.endpoint = endpoint
        seed = XXH64.hash(Array(endpoint.description.utf8))
        breaker = CircuitBreaker(
            failureThreshold: configuration.breakerThreshold, backoff: configuration.breakerBackoff,
            maximumBackoff: configuration.breakerMaximumBackoff)
        connectTimeout = configuration.connectTimeout
        commandTimeout = configuration.commandTimeout
        replyLimit = max(0, configuration.maximumValueSize) + 1
        statisticsInterval = configuration.statisticsInterval
        lanes = (0..<max(1, configuration.connectionsPerNode)).map { Lane(index: $0, label: endpoint.description) }
    }

    /// Transport failures so far: timeouts and other errors (refused, reset, error replies to AUTH …).
    var failureCounts: (timeouts: Int, errors: Int) { failures.withLock { $0 } }

    /// Runs `commands` as one pipelined round trip on a free connection; refused at once while the breaker is
    /// open. Error replies come back as ``RedisReply/error(_:)``; transport failures throw.
    func run(_ commands: [[Data]]) async throws(SharedCacheError) -> [RedisReply] {
        guard breaker.admits() else { throw .circuitOpen }
        let lane = lanes.min { $0.pending.load(ordering: .relaxed) < $1.pending.load(ordering: .relaxed) } ?? lanes[0]
        let (endpoint, connectTimeout, commandTimeout, replyLimit) = (
            endpoint, connectTimeout, commandTimeout, replyLimit
        )
        let result: Result<[RedisReply], SharedCacheError> = await withCheckedContinuation { continuation in
            lane.pending.add(1, ordering: .relaxed)
            lane.queue.async {
                let result = lane.execute(
                    commands, endpoint: endpoint, connectTimeout: connectTimeout, commandTimeout: commandTimeout,
                    replyLimit: replyLimit)
                lane.pending.subtract(1, ordering: .relaxed)
                continuation.resume(returning: result)
            }
        }
        switch result {
        case .success(let replies):
            // An error reply (NOAUTH, OOM, READONLY, LOADING …) is a node refusing: it counts towards the breaker.
            let isRefusing = replies.contains { if case .error = $0 { true } else { false } }
            if isRefusing { failures.withLock { $0.errors += 1 } }
            breaker.record(success: !isRefusing)
            return replies
        case .failure(let error):
            failures.withLock {
                if case .timedOut = error { $0.timeouts += 1 } else { $0.errors += 1 }
            }
            breaker.record(success: false)
            throw error
        }
    }

    /// Runs one command (see ``run(_:)``).
    func run(_ args: [Data]) async throws(SharedCacheError) -> RedisReply {
        try await run([args])[0]
    }

    /// Sends `commands` without waiting for the replies (counters nobody waits for); skipped while the breaker is
    /// open. The outcome still counts towards the breaker. With `waits`, returns once they were sent (at close, so
    /// that a process about to exit does not lose them; at most about one command timeout).
    func post(_ commands: [[Data]], waits: Bool = false) {
        guard breaker.admits() else { return }
        let lane = lanes.min { $0.pending.load(ordering: .relaxed) < $1.pending.load(ordering: .relaxed) } ?? lanes[0]
        let (endpoint, connectTimeout, commandTimeout, replyLimit) = (
            endpoint, connectTimeout, commandTimeout, replyLimit
        )
        lane.pending.add(1, ordering: .relaxed)
        let work: @Sendable () -> Void = { [breaker] in
            let result = lane.execute(
                commands, endpoint: endpoint, connectTimeout: connectTimeout, commandTimeout: commandTimeout,
                replyLimit: replyLimit)
            lane.pending.subtract(1, ordering: .relaxed)
            breaker.record(success: (try? result.get()) != nil)
        }
        if waits { lane.queue.sync(execute: work) } else { lane.queue.async(execute: work) }
    }

    /// Counts one lookup (and whether it missed) for the fleet's hit rate in Redis (`HINCRBY` on the hash
    /// `statistics`). Counts are sent in batches, not on the read's round trip: once 64 have gathered or when the
    /// oldest unsent one is ``RedisCache/Configuration/statisticsInterval`` old, and by
    /// ``flushCounts(statistics:)`` and ``close(statistics:)``.
    func countLookup(miss: Bool, statistics: Data) {
        let now = ContinuousClock.now
        let interval = statisticsInterval
        let batch: UnsentCounts? = unsentCounts.withLock { counts in
            if counts.lookups == 0 { counts.since = now }
            counts.lookups += 1
            if miss { counts.misses += 1 }
            guard counts.lookups >= 64 || now - counts.since >= interval else { return nil }
            defer { counts = UnsentCounts() }
            return counts
        }
        if let batch { post(batch.commands(statistics)) }
    }

    /// Sends the counts gathered so far (before reading the fleet's counters, and at close).
    func flushCounts(statistics: Data) async {
        let batch = unsentCounts.withLock { counts in
            defer { counts = UnsentCounts() }
            return counts
        }
        guard batch.lookups > 0 else { return }
        _ = try? await run(batch.commands(statistics))
    }

    /// Closes every idle connection (in-flight commands finish first, on their queues), sending the lookup counts
    /// gathered so far first (waiting for that one round trip).
    func close(statistics: Data) {
        let batch = unsentCounts.withLock { counts in
            defer { counts = UnsentCounts() }
            return counts
        }
        if batch.lookups > 0 { post(batch.commands(statistics), waits: true) }
        for lane in lanes { lane.queue.async { lane.drop() } }
    }

    /// Lookups and misses counted here since the last batch sent to Redis.
    private struct UnsentCounts {
        var lookups = 0
        var misses = 0
        var since = ContinuousClock.now

        /// The `HINCRBY`s that add these counts to the hash `statistics`.
        func commands(_ statistics: Data) -> [[Data]] {
            var commands = [[Data("HINCRBY".utf8), statistics, Data("lookups".utf8), Data("\(lookups)".utf8)]]
            if misses > 0 {
                commands.append([Data("HINCRBY".utf8), statistics, Data("misses".utf8), Data("\(misses)".utf8)])
            }
            return commands
        }
    }

    /// One connection and the serial queue it is used on.
    final class Lane: @unchecked Sendable {  // safe: `connection` is touched only on `queue`
        let queue: DispatchQueue
        let pending = Atomic<Int>(0)
        private var connection: RedisConnection?

        init(index: Int, label: String) {
            queue = DispatchQueue(label: "imago.redis.\(label).\(index)")
        }

        /// On `queue`: connects if needed, runs the commands, and drops a connection that broke.
        func execute(
            _ commands: [[Data]], endpoint: RedisEndpoint, connectTimeout: Duration, commandTimeout: Duration,
            replyLimit: Int
        ) -> Result<[RedisReply], SharedCacheError> {
            do throws(SharedCacheError) {
                let live: RedisConnection
                if let connection, !connection.isBroken {
                    live = connection
                } else {
                    connection = nil
                    live = try RedisConnection.open(
                        endpoint, connectTimeout: connectTimeout, commandTimeout: commandTimeout,
                        replyLimit: replyLimit)
                    connection = live
                }
                let replies = try live.pipeline(commands)
                if live.isBroken { connection = nil }
                return .success(replies)
            } catch {
                if connection?.isBroken == true { connection = nil }
                return .failure(error)
            }
        }

        func drop() { connection = nil }
    }
}
