import Foundation
import ImagoCore

// One fetch per fleet. The first process to miss a key takes a lease (`SET lease token NX PX`, in a script that
// a retry with the same token finds already done); the others poll for the value and are woken early by the
// `PUBLISH` the holder sends when it releases, after its write. Whoever takes the lease looks for the value once
// more before fetching. A lease whose holder died expires after `leaseDuration`, and the next poll takes it over.
extension RedisCache {
    /// Takes the fetch lease for `key`, or waits (at most ``Configuration/leaseWaitLimit``) for the process that
    /// holds it to store the value. Any Redis failure means "fetch without a lease".
    public func claimFetch(of key: String) async -> SharedFetchClaim {
        let names = RedisKeys(key, prefix: configuration.keyPrefix)
        let node = node(for: names)
        let token = Self.randomToken()
        let lease = SharedFetchLease(key: key, token: token)
        guard let taken = try? await takeLease(names, token: token, node: node) else {
            counters.withLock { $0.unleasedFetches += 1 }
            return .fetch(nil)
        }
        if taken { return await claimTaken(lease, names: names, node: node, waited: false) }
        let subscriber = subscribers[nodes.firstIndex { $0 === node } ?? 0]
        subscriber.start()
        let deadline = ContinuousClock.now + configuration.leaseWaitLimit
        while ContinuousClock.now < deadline {
            let wake = subscriber.wake(on: names.channel)
            do throws(SharedCacheError) {
                if let entry = try await storedEntry(names, key: key, node: node) {
                    subscriber.forget(wake)
                    counters.withLock { $0.leaseWaitsFilled += 1 }
                    return .filled(entry)
                }
                if try await takeLease(names, token: token, node: node) {
                    subscriber.forget(wake)
                    return await claimTaken(lease, names: names, node: node, waited: true)
                }
            } catch {
                count(error)
                // A failed poll is retried at the next interval; an open breaker ends the wait.
                if case .circuitOpen = error {
                    subscriber.forget(wake)
                    counters.withLock { $0.unleasedFetches += 1 }
                    return .fetch(nil)
                }
            }
            let remaining = deadline - ContinuousClock.now
            await wake.wait(timeout: min(configuration.leasePollInterval, max(.zero, remaining)))
            subscriber.forget(wake)
        }
        counters.withLock { $0.leaseWaitsUnfilled += 1 }
        return .fetch(nil)
    }

    /// With the lease just taken: the value, when the holder before us stored it and released between our last
    /// look and our lease (then the lease is given back), else the fetch is ours. Without this look a waiter
    /// that looked a moment before the holder's write and took the lease a moment after its release would fetch
    /// a second time.
    private func claimTaken(
        _ lease: SharedFetchLease, names: RedisKeys, node: RedisNode, waited: Bool
    ) async -> SharedFetchClaim {
        if let entry = try? await storedEntry(names, key: lease.key, node: node) {
            await releaseFetch(lease)
            counters.withLock { $0.leaseWaitsFilled += 1 }
            return .filled(entry)
        }
        if waited { counters.withLock { $0.leaseWaitsUnfilled += 1 } }
        return .fetch(lease)
    }

    /// Deletes the lease only if `lease.token` still holds it (a Lua compare-and-delete), then publishes on the
    /// key's channel so that waiting processes look at once.
    public func releaseFetch(_ lease: SharedFetchLease) async {
        let names = RedisKeys(lease.key, prefix: configuration.keyPrefix)
        let node = node(for: names)
        // EVAL rather than EVALSHA: Redis caches the compiled script by its digest, and the script is 150 bytes.
        _ = try? await runRetrying(
            [
                Data("EVAL".utf8), Data(Self.releaseScript.utf8), Data("2".utf8), names.lease, names.channel,
                Data(lease.token.utf8),
            ], on: node)
    }

    /// The valid entry stored for `key`, if any (no counting, no deletion: the waiting loop's look).
    private func storedEntry(
        _ names: RedisKeys, key: String, node: RedisNode
    ) async throws(SharedCacheError) -> DataCacheEntry? {
        let reply = try await runRetrying(readCommand(names), on: node)
        guard let value = reply.data, !value.isEmpty, case .success(let entry) = RedisValue.decode(value, key: key)
        else { return nil }
        return entry
    }

    /// Takes the lease with `token` (``takeScript``): whether this process now holds it. The call is idempotent for
    /// a token, so one that failed on the way (a timeout: the lease may have been set without its reply coming
    /// back) is retried with the same token, up to ``attempts`` times in all while the node's breaker admits
    /// calls: a slow answer never turns into a fetch without the lease, nor into a lease nobody uses.
    private func takeLease(_ names: RedisKeys, token: String, node: RedisNode) async throws(SharedCacheError) -> Bool {
        let command = [
            Data("EVAL".utf8), Data(Self.takeScript.utf8), Data("1".utf8), names.lease, Data(token.utf8),
            Data("\(max(1, configuration.leaseDuration.milliseconds))".utf8),
        ]
        switch try await runRetrying(command, on: node) {
        case .integer(1):
            counters.withLock { $0.leasesTaken += 1 }
            return true
        case .error(let message): throw .refused(reason: message)
        default: return false
        }
    }

    /// Runs an idempotent `command`, once more after each transport failure (timeout, reset) up to
    /// ``attempts`` calls in all; an open breaker or an error reply ends it at once.
    func runRetrying(_ command: [Data], on node: RedisNode) async throws(SharedCacheError) -> RedisReply {
        var attempt = 1
        while true {
            do throws(SharedCacheError) {
                return try await node.run(command)
            } catch {
                let isTransport =
                    switch error {
                    case .timedOut, .unavailable: true
                    case .circuitOpen, .refused: false
                    }
                guard isTransport, attempt < Self.attempts else { throw error }
                count(error)
                attempt += 1
            }
        }
    }

    /// Calls made for one idempotent step (taking or releasing a lease, storing a value) when the first ones fail
    /// on the way.
    static let attempts = 3

    /// Sets KEYS[1] (the lease) to ARGV[1] (the token) for ARGV[2] ms unless another token holds it: 1 when
    /// ARGV[1] holds it now (taken, or taken by an earlier try whose reply was lost), 0 when another does.
    static let takeScript = """
        local holder = redis.call('GET', KEYS[1])
        if holder == ARGV[1] then return 1 end
        if holder then return 0 end
        redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
        return 1
        """

    /// Deletes KEYS[1] only if it holds ARGV[1], then publishes on KEYS[2].
    static let releaseScript = """
        if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
        redis.call('PUBLISH', KEYS[2], 'released')
        return 1
        """

    /// 128 random bits in hex.
    static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return String(generator.next(), radix: 16) + String(generator.next(), radix: 16)
    }
}

/// Wakes processes waiting for a lease's release: one connection per node subscribed (`PSUBSCRIBE`) to every
/// release channel of the prefix, read by a thread of its own (started at the first wait, reconnecting while the
/// node is down). Waiters also poll, so a missed message only costs a poll interval.
final class LeaseSubscriber: Sendable {
    // @unchecked Sendable: the subscription's `RedisConnection` (not Sendable: hiredis's context) is only used by
    // this subscriber's reader thread and replaced or closed under `state`'s lock.
    private struct State: @unchecked Sendable {
        var isStarted = false
        var isStopped = false
        var connection: RedisConnection?
        var waiters: [Data: [ObjectIdentifier: Wake]] = [:]
    }

    private let node: RedisNode
    private let pattern: Data
    private let connectTimeout: Duration
    private let state = Locked(State())

    init(node: RedisNode, configuration: RedisCache.Configuration) {
        self.node = node
        pattern = Data("\(configuration.keyPrefix)c:*".utf8)
        connectTimeout = configuration.connectTimeout
    }

    /// A one-shot wake for `channel`, registered before the caller looks for the value (so a release between the
    /// look and the wait is not missed).
    func wake(on channel: Data) -> Wake {
        let wake = Wake(channel: channel)
        state.withLock { $0.waiters[channel, default: [:]][ObjectIdentifier(wake)] = wake }
        return wake
    }

    func forget(_ wake: Wake) {
        state.withLock { s in
            s.waiters[wake.channel]?[ObjectIdentifier(wake)] = nil
            if s.waiters[wake.channel]?.isEmpty == true { s.waiters[wake.channel] = nil }
        }
    }

    /// Starts the reading thread once.
    func start() {
        let starts = state.withLock { s -> Bool in
            guard !s.isStarted, !s.isStopped else { return false }
            s.isStarted = true
            return true
        }
        guard starts else { return }
        let thread = Thread { [self] in run() }
        thread.name = "imago.redis.subscriber"
        thread.start()
    }

    /// Stops the thread (its blocked read is woken by shutting the socket down).
    func stop() {
        let connection = state.withLock { s -> RedisConnection? in
            s.isStopped = true
            return s.connection
        }
        connection?.shutdown()
    }

    private func run() {
        var pause = 0.05
        while !state.withLock({ $0.isStopped }) {
            do throws(SharedCacheError) {
                let connection = try RedisConnection.open(
                    node.endpoint, connectTimeout: connectTimeout, commandTimeout: Duration.zero,
                    replyLimit: node.replyLimit)
                let stopped = state.withLock { s -> Bool in
                    if !s.isStopped { s.connection = connection }
                    return s.isStopped
                }
                if stopped { return }
                defer { state.withLock { $0.connection = nil } }
                _ = try connection.pipeline([[Data("PSUBSCRIBE".utf8), pattern]])
                pause = 0.05
                while true {
                    guard case .array(let parts) = try connection.readReply(), parts.count == 4,
                        let channel = parts[2].data
                    else { continue }
                    let wakes = state.withLock { $0.waiters.removeValue(forKey: channel) } ?? [:]
                    for wake in wakes.values { wake.fire() }
                }
            } catch {
                Thread.sleep(forTimeInterval: pause)
                pause = min(pause * 2, 1)
            }
        }
    }

    /// One waiter's wake-up: fired by a release message or by its timeout, whichever comes first.
    final class Wake: Sendable {
        let channel: Data
        private let state = Locked<(fired: Bool, continuation: CheckedContinuation<Void, Never>?)>((false, nil))

        init(channel: Data) { self.channel = channel }

        func fire() {
            let continuation = state.withLock { s -> CheckedContinuation<Void, Never>? in
                s.fired = true
                defer { s.continuation = nil }
                return s.continuation
            }
            continuation?.resume()
        }

        /// Returns when fired or after `timeout`.
        func wait(timeout: Duration) async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let fired = state.withLock { s -> Bool in
                    if s.fired { return true }
                    s.continuation = continuation
                    return false
                }
                if fired { return continuation.resume() }
                let nanoseconds = Int(timeout.milliseconds) * 1_000_000
                DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { [self] in fire() }
            }
        }
    }
}
