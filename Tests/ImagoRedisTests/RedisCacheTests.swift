import Foundation
import ImagoCore
import ImagoRedis
import ImagoTesting
import Testing

/// A cache on `server` with short timeouts and back-offs for tests.
func makeCache(_ urls: [String], _ configure: (inout RedisCache.Configuration) -> Void = { _ in }) throws -> RedisCache
{
    var configuration = try RedisCache.Configuration(urls: urls)
    configuration.commandTimeout = .milliseconds(500)  // a loaded CI machine; the default 50 ms is for production
    configure(&configuration)
    return RedisCache(configuration: configuration)
}

func entry(_ text: String, etag: String? = nil) -> DataCacheEntry {
    DataCacheEntry(
        data: Data(text.utf8),
        metadata: DataCacheMetadata(
            storedAt: Date(timeIntervalSinceReferenceDate: 1000), validators: HTTPValidators(etag: etag),
            contentType: "image/png"))
}

/// Polls an async condition until it holds or `timeout` passes.
func eventually(timeout: Duration = .seconds(10), _ condition: () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return false
}

@Suite("RedisCache against a real redis-server: hit, miss, TTL, invalid values, cap, AUTH")
struct RedisCacheTests {
    @Test(.timeLimit(.minutes(1)))
    func storesAndReadsBackAnEntryWithItsMetadata() async throws {
        let server = try RedisServer()
        let cache = try makeCache([server.url])
        defer { cache.close() }

        try await cache.store(entry("hello", etag: "\"e1\""), for: "https://a/1.png", timeToLive: nil)
        let hit = try await cache.entry(for: "https://a/1.png")
        let miss = try await cache.entry(for: "https://a/2.png")

        #expect(hit == entry("hello", etag: "\"e1\""))
        #expect(miss == nil)
        #expect(cache.statistics.hits == 1)
        #expect(cache.statistics.misses == 1)
        // The miss is counted in Redis in the background
        #expect(await eventually { await cache.tierStatistics().hitRate == 0.5 })
        let tier = await cache.tierStatistics()
        #expect(tier.keys == 1)
        #expect(tier.bytes > 5)
        #expect(tier.lookups == 2)
    }

    @Test(.timeLimit(.minutes(1)))
    func valuesExpireAfterTheirTimeToLive() async throws {
        let server = try RedisServer()
        let cache = try makeCache([server.url])
        defer { cache.close() }

        try await cache.store(entry("short"), for: "k", timeToLive: .milliseconds(1500))
        let ttl = Int(try server.cli(["PTTL", try #require(valueKeys(server).first)])) ?? -1

        #expect((1...1500).contains(ttl))
        #expect(await eventually { (try? await cache.entry(for: "k")) == .some(nil) })
    }

    @Test(.timeLimit(.minutes(1)))
    func aCorruptValueIsAMissAndIsDeleted() async throws {
        // Given a value overwritten with garbage by redis-cli
        let server = try RedisServer()
        let cache = try makeCache([server.url])
        defer { cache.close() }
        try await cache.store(entry("good bytes"), for: "k", timeToLive: nil)
        let name = try #require(valueKeys(server).first)
        try server.cli(["SETRANGE", name, "90", "XXXX"])  // inside the header: the checksum fails

        // When it is read, then it is a miss and the value is deleted
        #expect(try await cache.entry(for: "k") == nil)
        #expect(await eventually { (try? server.cli(["EXISTS", name])) == "0" })
        #expect(cache.statistics.invalidRemoved == 1)
        #expect(cache.metrics?.invalidRemoved == 1)  // what /metrics exports, the same counters
    }

    @Test(.timeLimit(.minutes(1)))
    func aValueHoldingAnotherKeyIsAMissAndIsDeleted() async throws {
        // Given the valid value of key A copied by redis-cli under the Redis name of key B (a collision)
        let server = try RedisServer()
        let cache = try makeCache([server.url])
        defer { cache.close() }
        try await cache.store(entry("A's bytes"), for: "A", timeToLive: nil)
        let nameA = try #require(valueKeys(server).first)
        try await cache.store(entry("B's bytes"), for: "B", timeToLive: nil)
        let nameB = try #require(valueKeys(server).first { $0 != nameA })
        try server.cli(["COPY", nameA, nameB, "REPLACE"])

        #expect(try await cache.entry(for: "B") == nil)
        #expect(await eventually { (try? server.cli(["EXISTS", nameB])) == "0" })
        #expect(try await cache.entry(for: "A") == entry("A's bytes"))
    }

    @Test(.timeLimit(.minutes(1)))
    func valuesOverTheCapAreSkipped() async throws {
        let server = try RedisServer()
        let cache = try makeCache([server.url]) { $0.maximumValueSize = 1000 }
        defer { cache.close() }

        try await cache.store(entry(String(repeating: "x", count: 2000)), for: "big", timeToLive: nil)
        try await cache.store(entry("small"), for: "small", timeToLive: nil)

        #expect(try valueKeys(server).count == 1)
        #expect(cache.statistics.oversizedSkips == 1)
        // A larger value stored by a process with a higher cap reads as a miss here, without being read whole
        let roomy = try makeCache([server.url])
        defer { roomy.close() }
        try await roomy.store(entry(String(repeating: "y", count: 5000)), for: "big", timeToLive: nil)
        #expect(try await cache.entry(for: "big") == nil)
        #expect(try await roomy.entry(for: "big") != nil)
    }

    /// With the reply read on the node's queue (0 ms), on the calling thread when it comes within 1 ms, and
    /// on the calling thread whenever it is at most 1 MiB (50 ms, the command timeout).
    @Test(.timeLimit(.minutes(1)), arguments: [0, 1, 50])
    func largeValuesComeBackWholeAcrossSeveralReadsAndReplies(inlineReplyWaitMilliseconds: Int) async throws {
        let server = try RedisServer()
        let cache = try makeCache([server.url]) {
            $0.connectionsPerNode = 1
            $0.inlineReplyWait = .milliseconds(inlineReplyWaitMilliseconds)
        }
        defer { cache.close() }
        // Sizes around the 256 KiB read buffer and the 1 MiB kept reader buffer, each read twice on one connection
        let sizes = [5000, 200 * 1024, 256 * 1024 - 100, 256 * 1024 + 1, 3 * 1024 * 1024 + 7]
        var stored: [Int: Data] = [:]
        for size in sizes {
            let bytes = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ size) })
            stored[size] = bytes
            try await cache.store(
                DataCacheEntry(data: bytes, metadata: DataCacheMetadata()), for: "k\(size)", timeToLive: nil)
        }
        for _ in 0..<2 {
            for size in sizes {
                let read = try await cache.entry(for: "k\(size)")
                #expect(read?.data == stored[size])
            }
            #expect(try await cache.entry(for: "absent") == nil)
        }
        #expect(cache.statistics.hits == 2 * sizes.count)
    }

    @Test(.timeLimit(.minutes(1)))
    func lookupCountsAreSentInBatchesAndAtClose() async throws {
        let server = try RedisServer()
        let reader = try makeCache([server.url]) { $0.statisticsInterval = .seconds(3600) }
        try await reader.store(entry("v"), for: "k", timeToLive: nil)
        for _ in 0..<3 { _ = try await reader.entry(for: "k") }
        _ = try await reader.entry(for: "absent")
        // Not on each read's round trip: nothing reached Redis yet (under 64 lookups, within the interval)
        #expect(try server.cli(["HGET", "imago:stats", "lookups"]) == "")
        reader.close()
        // Closing sends them before it returns (a process about to exit keeps them); another process sees them
        #expect(try server.cli(["HGET", "imago:stats", "lookups"]) == "4")
        let other = try makeCache([server.url])
        defer { other.close() }
        let tier = await other.tierStatistics()
        #expect(tier.lookups == 4)
        #expect(tier.misses == 1)
    }

    @Test(.timeLimit(.minutes(1)))
    func authenticatesWithThePasswordInTheURL() async throws {
        let server = try RedisServer(tcp: true, password: "pa55")
        let cache = try makeCache([server.url])
        defer { cache.close() }
        let port = try #require(server.port)
        let wrong = try makeCache(["redis://:nope@127.0.0.1:\(port)/0"])
        defer { wrong.close() }
        let none = try makeCache(["redis://127.0.0.1:\(port)/0"])
        defer { none.close() }

        try await cache.store(entry("secret"), for: "k", timeToLive: nil)

        #expect(try await cache.entry(for: "k") == entry("secret"))
        await #expect(throws: SharedCacheError.self) { try await wrong.entry(for: "k") }
        await #expect(throws: SharedCacheError.self) { try await none.entry(for: "k") }
    }

    @Test(.timeLimit(.minutes(1)))
    func selectsTheDatabaseOfTheURL() async throws {
        let server = try RedisServer(tcp: true)
        let port = try #require(server.port)
        let cache = try makeCache(["redis://127.0.0.1:\(port)/3"])
        defer { cache.close() }

        try await cache.store(entry("three"), for: "k", timeToLive: nil)

        #expect(try server.cli(["-n", "3", "DBSIZE"]) != "0")
        #expect(try server.cli(["-n", "0", "KEYS", "imago:v:*"]).isEmpty)
    }
}

/// The value keys the server holds now.
func valueKeys(_ server: RedisServer) throws -> [String] {
    try server.cli(["KEYS", "imago:v:*"]).split(separator: "\n").map(String.init)
}
