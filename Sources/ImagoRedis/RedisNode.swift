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
    private let failures = Locked<(timeouts: Int, errors: Int)>((0, 0))

    init(_ endpoint: RedisEndpoint, configuration: RedisCache.Configuration) {
        self.endpoint = endpoint
        seed = XXH64.hash(Array(endpoint.description.utf8))
        breaker = CircuitBreaker(
            failureThreshold: configuration.breakerThreshold, backoff: configuration.breakerBackoff,
            maximumBackoff: configuration.breakerMaximumBackoff)
        connectTimeout = configuration.connectTimeout
        commandTimeout = configuration.commandTimeout
        lanes = (0..<max(1, configuration.connectionsPerNode)).map { Lane(index: $0, label: endpoint.description) }
    }

    /// Transport failures so far: timeouts and other errors (refused, reset, error replies to AUTH …).
    var failureCounts: (timeouts: Int, errors: Int) { failures.withLock { $0 } }

    /// Runs `commands` as one pipelined round trip on a free connection; refused at once while the breaker is
    /// open. Error replies come back as ``RedisReply/error(_:)``; transport failures throw.
    func run(_ commands: [[Data]]) async throws(SharedCacheError) -> [RedisReply] {
        guard breaker.admits() else { throw .circuitOpen }
        let lane = lanes.min { $0.pending.load(ordering: .relaxed) < $1.pending.load(ordering: .relaxed) } ?? lanes[0]
        let (endpoint, connectTimeout, commandTimeout) = (endpoint, connectTimeout, commandTimeout)
        let result: Result<[RedisReply], SharedCacheError> = await withCheckedContinuation { continuation in
            lane.pending.add(1, ordering: .relaxed)
            lane.queue.async {
                let result = lane.execute(
                    commands, endpoint: endpoint, connectTimeout: connectTimeout, commandTimeout: commandTimeout)
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

    /// Closes every idle connection (in-flight commands finish first, on their queues).
    func close() {
        for lane in lanes { lane.queue.async { lane.drop() } }
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
            _ commands: [[Data]], endpoint: RedisEndpoint, connectTimeout: Duration, commandTimeout: Duration
        ) -> Result<[RedisReply], SharedCacheError> {
            do throws(SharedCacheError) {
                let live: RedisConnection
                if let connection, !connection.isBroken {
                    live = connection
                } else {
                    connection = nil
                    live = try RedisConnection.open(
                        endpoint, connectTimeout: connectTimeout, commandTimeout: commandTimeout)
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
