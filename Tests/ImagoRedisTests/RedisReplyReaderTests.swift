import Foundation
import ImagoCore
import ImagoRedis
import Testing

/// A bulk string's header: `$<length>\r\n`.
private func bulkHeader(_ length: Int) -> Data { Data("$\(length)\r\n".utf8) }

/// A nil bulk string (an absent key).
private let nilReply = Data("$-1\r\n".utf8)

/// The reply reader's own path for large values (the first line parsed by ImagoRedis, the payload read straight
/// into its buffer) against replies a real Redis never sends. Each case runs with the reply read on the node's
/// queue (`inlineReplyWait` zero) and on the calling thread (a wait as long as the command timeout, so that the
/// reply is always read there). The first command of the first connection is a miss, so that the connection
/// exists and the faulty reply is the second command's.
@Suite("Redis reply reader: bulk strings cut short, over the cap, badly terminated, dropped mid-body")
struct RedisReplyReaderTests {
    static let modes = [false, true]

    /// A cache with one connection on `server`, the given command timeout, reading inline or on the queue.
    private func cache(
        _ server: ScriptedRedisServer, inline: Bool, timeout: Duration = .milliseconds(500),
        cap: Int = 16 << 20
    ) throws -> RedisCache {
        try makeCache([server.url]) {
            $0.connectionsPerNode = 1
            $0.commandTimeout = timeout
            $0.inlineReplyWait = inline ? timeout : .zero
            $0.maximumValueSize = cap
            $0.breakerThreshold = 100
        }
    }

    /// What a get answered with `fault` did.
    private struct Outcome {
        /// The error the get threw (`nil`: none).
        var error: SharedCacheError?
        /// How long it took.
        var elapsed: Duration
        /// Whether the next get missed cleanly (on a new connection when the fault broke the first).
        var nextGetMissed: Bool
        /// Connections the server accepted.
        var connections: Int
    }

    /// A get whose reply is `fault`, on a cache with one connection (reading inline or on the queue, with
    /// `timeout` and `cap`), after a first get that missed; then one more get. Every other command is answered
    /// with a nil.
    private func outcome(
        of fault: ScriptedRedisServer.Step, inline: Bool, timeout: Duration = .milliseconds(500),
        cap: Int = 16 << 20
    ) async throws -> Outcome {
        let server = try ScriptedRedisServer { connection, command, _ in
            connection == 0 && command == 1 ? fault : .reply(nilReply)
        }
        defer { server.stop() }
        let cache = try cache(server, inline: inline, timeout: timeout, cap: cap)
        defer { cache.close() }
        #expect(try await cache.entry(for: "k") == nil)
        let started = ContinuousClock.now
        var error: SharedCacheError?
        do throws(SharedCacheError) {
            _ = try await cache.entry(for: "k")
        } catch let thrown {
            error = thrown
        }
        let elapsed = ContinuousClock.now - started
        let next = try? await cache.entry(for: "k")
        return Outcome(
            error: error, elapsed: elapsed, nextGetMissed: next == .some(nil), connections: server.acceptedConnections)
    }

    @Test(.timeLimit(.minutes(1)), arguments: modes)
    func aPayloadCutShortByTheServerClosingIsAnErrorAndTheNextGetReconnects(inline: Bool) async throws {
        // A third of a 300 KB bulk string, then the connection closes
        let fault = ScriptedRedisServer.Step.replyThenClose(bulkHeader(300_000) + Data(repeating: 7, count: 100_000))
        let outcome = try await outcome(of: fault, inline: inline)
        #expect(outcome.error == .unavailable(reason: "Server closed the connection"))
        #expect(outcome.elapsed < .seconds(2))
        #expect(outcome.nextGetMissed)
        #expect(outcome.connections == 2)
    }

    @Test(.timeLimit(.minutes(1)), arguments: modes)
    func aPayloadThatStopsComingTimesOutWithinTheCommandTimeout(inline: Bool) async throws {
        let fault = ScriptedRedisServer.Step.replyThenStall(bulkHeader(300_000) + Data(repeating: 7, count: 100_000))
        let outcome = try await outcome(of: fault, inline: inline, timeout: .milliseconds(200))
        #expect(outcome.error == .timedOut(after: .milliseconds(200)))
        #expect(outcome.elapsed < .seconds(3))
        #expect(outcome.nextGetMissed)
    }

    /// A length over the cap is refused from the header alone: no wait for a payload that never comes (the
    /// command timeout is 5 s), and none allocated (a length of 10¹⁸ would fail with "Out of memory").
    @Test(.timeLimit(.minutes(1)), arguments: modes)
    func aLengthOverTheCapIsRefusedBeforeAnythingIsAllocatedOrRead(inline: Bool) async throws {
        let fault = ScriptedRedisServer.Step.replyThenStall(bulkHeader(1_000_000_000_000_000_000))
        let outcome = try await outcome(of: fault, inline: inline, timeout: .seconds(5), cap: 1_000_000)
        #expect(outcome.error == .unavailable(reason: "reply over the size limit"))
        #expect(outcome.elapsed < .seconds(2))
    }

    /// 25 digits: past what the direct path parses, so hiredis's reader sees the length and refuses it.
    @Test(.timeLimit(.minutes(1)), arguments: modes)
    func aLengthTooLongToParseIsAProtocolError(inline: Bool) async throws {
        let fault = ScriptedRedisServer.Step.replyThenStall(Data("$1000000000000000000000000\r\n".utf8))
        let outcome = try await outcome(of: fault, inline: inline, timeout: .seconds(5))
        guard case .unavailable = outcome.error else {
            Issue.record("expected .unavailable, got \(String(describing: outcome.error))")
            return
        }
        #expect(outcome.elapsed < .seconds(2))
    }

    @Test(.timeLimit(.minutes(1)), arguments: modes)
    func aPayloadWithoutItsTerminatorIsAProtocolError(inline: Bool) async throws {
        let fault = ScriptedRedisServer.Step.replyThenStall(
            bulkHeader(5000) + Data(repeating: 1, count: 5000) + Data("XY".utf8))
        let outcome = try await outcome(of: fault, inline: inline)
        #expect(outcome.error == .unavailable(reason: "bad bulk string terminator"))
        #expect(outcome.nextGetMissed)
    }

    /// Over 1 MiB, a reply read on the calling thread has its first line read there and its payload on the
    /// node's queue; the connection dropped in the middle ends it there too.
    @Test(.timeLimit(.minutes(1)), arguments: modes)
    func aLargePayloadDroppedMidBodyAfterItsHeaderWasReadIsAnError(inline: Bool) async throws {
        let fault = ScriptedRedisServer.Step.replyThenClose(
            bulkHeader(3_000_000) + Data(repeating: 9, count: 1_500_000))
        let outcome = try await outcome(of: fault, inline: inline)
        #expect(outcome.error == .unavailable(reason: "Server closed the connection"))
        #expect(outcome.elapsed < .seconds(2))
        #expect(outcome.nextGetMissed)
    }

    /// A payload of each size class is read whole and leaves the connection in step for the next reply (a value
    /// read short or long would make the next reply unparseable): a small bulk (hiredis's reader), direct ones,
    /// and one over 1 MiB (deferred to the queue when read inline). Scripted values are not entries, so each reads
    /// as invalid and the tier deletes it: the `DEL`s are answered too. Bytes compared against a real Redis:
    /// ``RedisCacheTests``.
    @Test(.timeLimit(.minutes(1)), arguments: modes)
    func wholePayloadsOfEverySizeAreReadOnOneConnection(inline: Bool) async throws {
        let sizes = [100, 5000, 300_000, 2_000_000]
        let reads = Locked((count: 0, connections: Set<Int>()))
        let server = try ScriptedRedisServer { connection, _, name in
            // The first GETRANGE misses; the next ones get each size in turn; the DELs of the invalid values and
            // the counters sent at close get integers.
            guard name == "GETRANGE" else { return .reply(Data(":1\r\n".utf8)) }
            let read = reads.withLock { reads in
                defer { reads.count += 1 }
                reads.connections.insert(connection)
                return reads.count
            }
            guard read > 0 else { return .reply(nilReply) }
            let size = sizes[(read - 1) % sizes.count]
            return .reply(bulkHeader(size) + Data(repeating: UInt8(size % 251), count: size) + Data("\r\n".utf8))
        }
        defer { server.stop() }
        let cache = try cache(server, inline: inline)
        defer { cache.close() }
        #expect(try await cache.entry(for: "k") == nil)

        for _ in sizes { #expect(try await cache.entry(for: "k") == nil) }

        #expect(cache.statistics.invalidRemoved == sizes.count)
        #expect(cache.statistics.failures == 0)
        // Every read on the first connection: none was left out of step (that breaks it, and the next reconnects).
        #expect(reads.withLock { $0.connections } == [0])
        #expect(reads.withLock { $0.count } == sizes.count + 1)
    }
}
