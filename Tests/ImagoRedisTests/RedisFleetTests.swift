import Foundation
import ImagoTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// `imago serve` processes sharing Redis nodes: one origin fetch per image across the fleet.
@Suite("Fleet: imago serve processes sharing two Redis nodes")
struct RedisFleetTests {
    /// One `imago serve` subprocess on a free port with its own cache directory.
    final class Server: @unchecked Sendable {  // safe: `process` and `port` are set in init and only read after
        let process = Process()
        let port: Int

        init(executable: URL, redis: [String], directory: URL) async throws {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let stderrFile = directory.appendingPathComponent("stderr")
            _ = FileManager.default.createFile(atPath: stderrFile.path, contents: nil)
            process.executableURL = executable
            process.arguments =
                ["serve", "--listen", "127.0.0.1:0", "--unsigned", "--allow-private", "--cache-dir", directory.path]
                + redis.flatMap { ["--redis", $0] }
                // 500 ms rather than the default 50 ms: this machine runs other builds; a timeout would be a
                // (correct) fetch without the lease and an extra origin request.
                + ["--redis-timeout", "500"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = try FileHandle(forWritingTo: stderrFile)
            try process.run()
            var found = 0
            _ = await ImagoTesting.eventually(timeout: .seconds(20)) {
                let text = (try? String(contentsOf: stderrFile, encoding: .utf8)) ?? ""
                guard let range = text.range(of: "listening on http://127.0.0.1:") else { return false }
                found = Int(text[range.upperBound...].prefix { $0.isNumber }) ?? 0
                return found != 0
            }
            port = found
            if port == 0 { stop() }
        }

        func stop() {
            guard process.isRunning else { return }
            Glibc.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }

        /// The status of GET `/_/rs:fit:64:64/plain/SOURCE`.
        func get(_ source: URL) async -> Int {
            let url = URL(string: "http://127.0.0.1:\(port)/_/rs:fit:64:64/plain/\(source.absoluteString)")!
            var request = URLRequest(url: url)
            request.timeoutInterval = 20
            guard let (_, response) = try? await URLSession.shared.data(for: request) else { return 0 }
            return (response as? HTTPURLResponse)?.statusCode ?? 0
        }

        /// The shared tier's lines of `/metrics` (what a failed expectation shows: timeouts, lease outcomes,
        /// breaker openings).
        func sharedTierMetrics() async -> String {
            let url = URL(string: "http://127.0.0.1:\(port)/metrics")!
            guard let (data, _) = try? await URLSession.shared.data(from: url) else { return "(no metrics)" }
            return String(decoding: data, as: UTF8.self).split(separator: "\n")
                .filter { $0.hasPrefix("imago_serve_shared_cache_") }.joined(separator: "\n")
        }

        /// The value of `imago_serve_cache_hits_total{tier="TIER"}`.
        func hits(tier: String) async -> Int {
            let url = URL(string: "http://127.0.0.1:\(port)/metrics")!
            guard let (data, _) = try? await URLSession.shared.data(from: url) else { return -1 }
            let prefix = "imago_serve_cache_hits_total{tier=\"\(tier)\"} "
            let line = String(decoding: data, as: UTF8.self).split(separator: "\n").first { $0.hasPrefix(prefix) }
            return line.flatMap { Int($0.dropFirst(prefix.count)) } ?? -1
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func threeServersFetchEachImageOnceAndANewOneNeedsNoOrigin() async throws {
        let executable = try #require(RedisTestSupport.imagoExecutable(), "build the imago executable first")
        let nodes = [try RedisServer(), try RedisServer()]
        let redis = nodes.map(\.url)
        let origin = try LoopbackServer()
        defer { origin.stop() }
        let images = (0..<30).map { origin.url(for: "/img\($0).png") }
        for i in 0..<30 {
            origin.setRoute("/img\(i).png", .bytes(try RedisTestSupport.png(seed: 100 + i), contentType: "image/png"))
        }
        let directory = RedisTestSupport.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        var fleet: [Server] = []
        defer { for server in fleet { server.stop() } }
        for i in 0..<3 {
            fleet.append(
                try await Server(
                    executable: executable, redis: redis, directory: directory.appendingPathComponent("s\(i)")))
        }
        try #require(fleet.allSatisfy { $0.port != 0 })

        // When 30 images × 10 requests are spread over the three servers, 30 at a time
        let servers = fleet
        let statuses = await withTaskGroup(of: Int.self) { group in
            for round in 0..<10 {
                for (i, image) in images.enumerated() {
                    let server = servers[(i + round) % 3]
                    group.addTask { await server.get(image) }
                }
            }
            return await group.reduce(into: [Int]()) { $0.append($1) }
        }

        // Then every answer is 200 and the origin served each image exactly once
        let statusCounts = Dictionary(statuses.map { ($0, 1) }, uniquingKeysWith: +)
        #expect(statuses.count == 300 && statuses.allSatisfy { $0 == 200 }, "statuses (0: no answer): \(statusCounts)")
        let originFetches = images.reduce(0) { $0 + origin.requestCount(for: $1.path) }
        var report: [String] = []
        if originFetches != 30 {
            report = images.filter { origin.requestCount(for: $0.path) != 1 }
                .map { "\($0.path): \(origin.requestCount(for: $0.path)) fetches" }
            for server in servers { report.append(await server.sharedTierMetrics()) }
        }
        #expect(originFetches == 30, "\(report.joined(separator: "\n"))")

        // When the background writes have landed (30 originals and 30 outputs over the two nodes) and a fourth
        // server starts with empty local caches
        #expect(
            await eventually {
                let counts = nodes.map { (try? valueKeys($0).count) ?? 0 }
                return counts.reduce(0, +) == 60
            })
        let fourth = try await Server(
            executable: executable, redis: redis, directory: directory.appendingPathComponent("s3"))
        fleet.append(fourth)
        var fourthStatuses: [Int] = []
        for image in images { fourthStatuses.append(await fourth.get(image)) }

        // Then it serves all 30 from Redis, without the origin
        #expect(fourthStatuses.allSatisfy { $0 == 200 })
        #expect(images.reduce(0) { $0 + origin.requestCount(for: $1.path) } == 30)
        #expect(await fourth.hits(tier: "output_shared") == 30)

        // When one node is killed, then a fifth server still answers 200 for every image, and the keys on the
        // surviving node still hit (only the dead node's share goes back to the origin)
        let survivorKeys = try valueKeys(nodes[0]).count
        nodes[1].kill()
        let fifth = try await Server(
            executable: executable, redis: redis, directory: directory.appendingPathComponent("s4"))
        fleet.append(fifth)
        var fifthStatuses: [Int] = []
        for image in images { fifthStatuses.append(await fifth.get(image)) }
        #expect(fifthStatuses.allSatisfy { $0 == 200 })
        let sharedHits = await fifth.hits(tier: "output_shared") + (await fifth.hits(tier: "pipeline_shared"))
        #expect(survivorKeys > 0)
        #expect(sharedHits > 0)
        let refetched = images.reduce(0) { $0 + origin.requestCount(for: $1.path) } - 30
        #expect(refetched < 30)
        #expect(refetched == 30 - sharedHits)
    }
}
