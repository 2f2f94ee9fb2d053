import Foundation
import ImagoCore
import ImagoRedis
import ImagoTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Redis failures are never user errors: timeouts, breaker, recovery")
struct RedisFailureTests {
    @Test(.timeLimit(.minutes(1)))
    func redisKilledMidRunOpensTheBreakerAndEveryRequestSucceedsThenItComesBack() async throws {
        // Given a pipeline sharing Redis (breaker after 3 failures, 300 ms back-off) and an origin of 30 images
        let server = try RedisServer()
        let origin = try LoopbackServer()
        defer { origin.stop() }
        for i in 0..<30 {
            origin.setRoute("/\(i).png", .bytes(try RedisTestSupport.png(seed: i + 10), contentType: "image/png"))
        }
        let cache = try makeCache([server.url]) {
            $0.breakerThreshold = 3
            $0.breakerBackoff = .milliseconds(300)
        }
        defer { cache.close() }
        let directory = RedisTestSupport.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let pipeline = try RedisTestSupport.pipeline(shared: cache, directory: directory)
        defer { (pipeline.configuration.dataCache as? DiskCache)?.close() }

        // When Redis is killed after the first ten loads
        var failures = 0
        for i in 0..<30 {
            if i == 10 { server.kill() }
            do {
                _ = try await pipeline.image(for: ImageRequest(url: origin.url(for: "/\(i).png")))
            } catch {
                failures += 1
            }
        }

        // Then every request succeeded, the breaker opened and calls were skipped while it was open
        #expect(failures == 0)
        let stats = cache.statistics
        #expect(stats.breakerOpens >= 1)
        #expect(stats.skippedWhileOpen > 0)
        #expect(pipeline.statistics.sharedCacheErrors > 0)

        // When Redis comes back, then after the back-off a probe closes the breaker and values are stored again
        try server.restart()
        #expect(
            await eventually {
                try? await cache.store(entry("back"), for: "probe", timeToLive: nil)
                return (try? await cache.entry(for: "probe")) == entry("back")
            })
        #expect(cache.statistics.openNodes == 0)
    }

    @Test(.timeLimit(.minutes(1)))
    func aSilentServerTimesOutWithinTheCommandTimeout() async throws {
        // Given a Redis stopped with SIGSTOP: connections are accepted by the kernel, nothing answers
        let server = try RedisServer(tcp: true)
        let cache = try makeCache([server.url]) { $0.commandTimeout = .milliseconds(50) }
        defer { cache.close() }
        try await cache.store(entry("x"), for: "k", timeToLive: nil)
        let pid = try #require(server.pid)
        Glibc.kill(pid, SIGSTOP)
        defer { Glibc.kill(pid, SIGCONT) }

        let started = ContinuousClock.now
        await #expect(throws: SharedCacheError.timedOut(after: .milliseconds(50))) {
            try await cache.entry(for: "k")
        }
        #expect(ContinuousClock.now - started < .seconds(1))
        #expect(cache.statistics.timeouts == 1)
    }
}
