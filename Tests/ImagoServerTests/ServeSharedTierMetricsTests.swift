import Foundation
import Imago
import ImagoServer
import ImagoTesting
import Testing

@testable import ImagoCLI

@Suite("imago serve --redis: the shared tier's counters and breakers at /metrics")
struct ServeSharedTierMetricsTests {
    @Test(.timeLimit(.minutes(1)))
    func redisKilledRaisesTheErrorCounterAndOpensTheBreakerGauge() async throws {
        let redis = try RedisServer()
        let origin = try LoopbackServer()
        defer { origin.stop() }
        origin.setRoute("/a.jpg", .bytes(try ServerTestImages.jpeg(), contentType: "image/jpeg"))
        let directory = ServeCommandTests.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let serve = try await InProcessServe.start([
            "--listen", "127.0.0.1:0", "--unsigned", "--allow-private", "--cache-dir", directory.path, "--redis",
            redis.url, "--redis-timeout", "500",
        ])
        let base = "http://127.0.0.1:\(serve.port)"
        let client = TestHTTPClient()
        func image(width: Int) async throws -> Int {
            let url = URL(string: base + "/_/w:\(width)/plain/" + origin.url(for: "/a.jpg").absoluteString)!
            return try await client.send(url).status
        }
        func samples() async throws -> [String: Double] {
            prometheusSamples(
                String(decoding: try await client.send(URL(string: base + "/metrics")!).body, as: UTF8.self))
        }
        func breakerOpen(_ s: [String: Double]) -> Double? {
            s.first { $0.key.hasPrefix("imago_serve_shared_cache_breaker_open{node=\"unix://") }?.value
        }

        // Given Redis up: a first render misses the tier and writes the original and the output to it
        #expect(try await image(width: 20) == 200)
        var before: [String: Double] = [:]
        for _ in 0..<200 {
            before = try await samples()
            if (before["imago_serve_shared_cache_writes_total"] ?? 0) >= 2 { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect((before["imago_serve_shared_cache_misses_total"] ?? 0) >= 1)
        #expect((before["imago_serve_shared_cache_writes_total"] ?? 0) >= 2)
        #expect(before["imago_serve_shared_cache_hits_total"] == 0)
        #expect(before["imago_serve_shared_cache_errors_total{kind=\"failure\"}"] == 0)
        #expect(breakerOpen(before) == 0)

        // When Redis is killed, requests still succeed; the error counter rises and the breaker gauge shows open
        redis.kill()
        var after: [String: Double] = [:]
        for width in 21..<41 {
            #expect(try await image(width: width) == 200)
            after = try await samples()
            if breakerOpen(after) == 1 { break }
        }
        let failures =
            (after["imago_serve_shared_cache_errors_total{kind=\"failure\"}"] ?? 0)
            + (after["imago_serve_shared_cache_errors_total{kind=\"timeout\"}"] ?? 0)
        #expect(failures >= 1)
        #expect(breakerOpen(after) == 1)
        #expect(await serve.stop() == 0)
    }
}
