import Dispatch
import Foundation
import ImagoCore

/// One Redis server of the tier: a pool of connections behind a circuit breaker. A small command on a free
/// connection is sent from the calling thread, which waits a bounded moment (``RedisCache/Configuration/
/// inlineReplyWait``) for the reply; every longer blocking hiredis call runs on the connection's own serial
/// dispatch queue, never on Swift's cooperative threads.
final class RedisNode: Sendable {
    let endpoint: RedisEndpoint
    /// The rendezvous-hashing seed: a digest of the endpoint's description.
    let seed: UInt64
    let breaker: CircuitBreaker
    private let lanes: [Lane]
    private let connectTimeout: Duration
    private let commandTimeout: Duration
    /// How long a command sent from the calling thread waits there for its reply (zero: never sent from there).
    private let inlineReplyWait: Duration
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
        inlineReplyWait = min(configuration.inlineReplyWait, configuration.commandTimeout)
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
        switch await execute(commands) {
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

    /// Runs `commands` on a lane. One small command on a free, connected lane is sent from the calling thread,
    /// which waits up to ``RedisCache/Configuration/inlineReplyWait`` for the reply and reads it there (a
    /// loopback Redis answers in tens of microseconds: no thread is woken but Redis's). Anything else — a lane
    /// to connect, a pipeline, a large command or reply, a reply slower than the wait — runs or goes on on the
    /// lane's queue, where hiredis may block up to the command timeout per read.
    private func execute(_ commands: [[Data]]) async -> Result<[RedisReply], SharedCacheError> {
        let (endpoint, connectTimeout, commandTimeout, replyLimit) = (
            endpoint, connectTimeout, commandTimeout, replyLimit
        )
        if commands.count == 1, inlineReplyWait > .zero,
            commands[0].reduce(0, { $0 + $1.count }) <= Self.inlineCommandLimit,
            let lane = lanes.first(where: { $0.take() })
        {
            switch lane.runInline(commands[0], wait: inlineReplyWait, replyLimit: Self.inlineReplyLimit) {
            case .finished(let result):
                lane.release()
                return result
            case .sent:
                return await withCheckedContinuation { continuation in
                    lane.queue.async {
                        let result = lane.receive()
                        lane.release()
                        continuation.resume(returning: result)
                    }
                }
            case .unconnected:
                lane.release()
            }
        }
        let lane = lanes.min { $0.load < $1.load } ?? lanes[0]
        return await withCheckedContinuation { continuation in
            lane.submit {
                let result = lane.execute(
                    commands, endpoint: endpoint, connectTimeout: connectTimeout, commandTimeout: commandTimeout,
                    replyLimit: replyLimit)
                lane.release()
                continuation.resume(returning: result)
            }
        }
    }

    /// The largest command sent from the calling thread (it fits a socket's send buffer, so the write does not
    /// wait); larger ones (values being stored) are written on the lane's queue.
    static let inlineCommandLimit = 16 * 1024
    /// The largest bulk reply read on the calling thread once it started arriving; larger ones are read on the
    /// lane's queue (their bytes may take a while over a real network).
    static let inlineReplyLimit = 1 << 20

    /// Runs one command (see ``run(_:)``).
    func run(_ args: [Data]) async throws(SharedCacheError) -> RedisReply {
        try await run([args])[0]
    }

    /// Sends `commands` without waiting for the replies (counters nobody waits for); skipped while the breaker is
    /// open. The outcome still counts towards the breaker. With `waits`, returns once they were sent (at close, so
    /// that a process about to exit does not lose them; at most about one command timeout).
    func post(_ commands: [[Data]], waits: Bool = false) {
        guard breaker.admits() else { return }
        let lane = lanes.min { $0.load < $1.load } ?? lanes[0]
        let (endpoint, connectTimeout, commandTimeout, replyLimit) = (
            endpoint, connectTimeout, commandTimeout, replyLimit
        )
        let sent = DispatchSemaphore(value: 0)
        lane.submit { [breaker] in
            let result = lane.execute(
                commands, endpoint: endpoint, connectTimeout: connectTimeout, commandTimeout: commandTimeout,
                replyLimit: replyLimit)
            lane.release()
            breaker.record(success: (try? result.get()) != nil)
            sent.signal()
        }
        if waits { sent.wait() }
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
        for lane in lanes {
            lane.submit {
                lane.drop()
                lane.release()
            }
        }
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

    /// One connection, owned by one caller at a time: taken by a caller that runs a command from its own thread
    /// (``take()``), or by work submitted to run on the lane's queue (``submit(_:)``); each owner ends with
    /// ``release()``, which hands the lane to the next submitted work, if any.
    final class Lane: @unchecked Sendable {  // safe: `connection` is touched only by the lane's current owner
        let queue: DispatchQueue
        private let ownership = Locked<(isTaken: Bool, waiting: [@Sendable () -> Void])>((false, []))
        private var connection: RedisConnection?

        init(index: Int, label: String) {
            queue = DispatchQueue(label: "imago.redis.\(label).\(index)")
        }

        /// Commands running or waiting for the lane.
        var load: Int { ownership.withLock { $0.waiting.count + ($0.isTaken ? 1 : 0) } }

        /// Takes the lane if it is free; the caller then owns the connection until ``release()``.
        func take() -> Bool {
            ownership.withLock { s in
                guard !s.isTaken else { return false }
                s.isTaken = true
                return true
            }
        }

        /// Runs `work` on the queue once it owns the lane (at once if the lane is free); `work` ends with
        /// ``release()``.
        func submit(_ work: @escaping @Sendable () -> Void) {
            let runsNow = ownership.withLock { s -> Bool in
                guard s.isTaken else {
                    s.isTaken = true
                    return true
                }
                s.waiting.append(work)
                return false
            }
            if runsNow { queue.async(execute: work) }
        }

        /// Gives the lane up: to the oldest submitted work, which then runs on the queue, or free.
        func release() {
            let next = ownership.withLock { s -> (@Sendable () -> Void)? in
                guard !s.waiting.isEmpty else {
                    s.isTaken = false
                    return nil
                }
                return s.waiting.removeFirst()
            }
            if let next { queue.async(execute: next) }
        }

        /// By the owner: connects if needed, runs the commands, and drops a connection that broke.
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

        /// What ``runInline(_:wait:replyLimit:)`` did.
        enum InlineOutcome {
            /// The reply was read (or the command failed) on the calling thread.
            case finished(Result<[RedisReply], SharedCacheError>)
            /// The command was sent; its reply is to be read on the queue (``receive()``).
            case sent
            /// No live connection: nothing was sent (connecting waits, so it is done on the queue).
            case unconnected
        }

        /// By the owner, on the calling thread: sends `command` and, if its reply starts arriving within `wait`
        /// and is not a bulk string over `replyLimit`, reads it (of a larger one, only its first line).
        func runInline(_ command: [Data], wait: Duration, replyLimit: Int) -> InlineOutcome {
            guard let live = connection, !live.isBroken else { return .unconnected }
            do throws(SharedCacheError) {
                try live.send([command])
                // A large bulk string's first line is read here and the rest on the queue (no MSG_PEEK first:
                // one read(2) less per reply).
                guard live.replyArrives(within: wait), let reply = try live.readReply(deferringOver: replyLimit)
                else { return .sent }
                if live.isBroken { connection = nil }
                return .finished(.success([reply]))
            } catch {
                if live.isBroken { connection = nil }
                return .finished(.failure(error))
            }
        }

        /// By the owner, on the queue: reads the reply of the command ``runInline(_:wait:replyLimit:)`` sent.
        func receive() -> Result<[RedisReply], SharedCacheError> {
            guard let live = connection else { return .failure(.unavailable(reason: "connection closed")) }
            do throws(SharedCacheError) {
                let replies = try live.receive(1)
                if live.isBroken { connection = nil }
                return .success(replies)
            } catch {
                if live.isBroken { connection = nil }
                return .failure(error)
            }
        }

        func drop() { connection = nil }
    }
}
