import Foundation
import ImagoCore
import ImagoRedis
import ImagoTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("One fetch per fleet: Redis leases between processes")
struct RedisLeaseTests {
    @Test(.timeLimit(.minutes(1)))
    func aWaiterTakesTheValueTheHolderStores() async throws {
        let server = try RedisServer()
        let a = try makeCache([server.url])
        let b = try makeCache([server.url])
        defer {
            a.close()
            b.close()
        }

        guard case .fetch(let lease?) = await a.claimFetch(of: "k") else {
            Issue.record("the first claim did not get the lease")
            return
        }
        let waiter = Task { await b.claimFetch(of: "k") }
        // B is waiting (subscribed) before A stores and releases
        #expect(await eventually { (try? server.cli(["PUBSUB", "NUMPAT"])) == "1" })
        try await a.store(entry("fetched once"), for: "k", timeToLive: nil)
        await a.releaseFetch(lease)

        guard case .filled(let filled) = await waiter.value else {
            Issue.record("the waiter did not take the stored value")
            return
        }
        #expect(filled == entry("fetched once"))
        #expect(try server.cli(["KEYS", "imago:l:*"]).isEmpty)  // released
    }

    @Test(.timeLimit(.minutes(1)))
    func fiftyLoadsInTwoProcessesFetchTheOriginOnce() async throws {
        // Given an origin held on one image, and Redis
        let executable = try #require(RedisTestSupport.imagoExecutable(), "build the imago executable first")
        let server = try RedisServer()
        let origin = try LoopbackServer()
        defer { origin.stop() }
        origin.setRoute("/one.png", .bytes(try RedisTestSupport.png(seed: 1), contentType: "image/png"))
        origin.suspend("/one.png")
        let url = origin.url(for: "/one.png")
        let directory = RedisTestSupport.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = try makeCache([server.url])
        defer { cache.close() }
        let pipeline = try RedisTestSupport.pipeline(shared: cache, directory: directory.appendingPathComponent("a"))

        // When this process starts 25 loads (it takes the lease and reaches the origin) ...
        let local = Task {
            try await withThrowingTaskGroup(of: ImageResponse.Source.self) { group in
                for _ in 0..<25 { group.addTask { try await pipeline.response(for: ImageRequest(url: url)).source } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
        }
        #expect(await ImagoTesting.eventually { origin.suspendedRequestCount(for: "/one.png") == 1 })
        // ... and `imago fetch` in a second process asks for the same URL 25 times and waits on the lease
        let child = Process()
        child.executableURL = executable
        child.arguments =
            [
                "fetch", "--json", "-j", "25", "--redis", server.url, "--cache-dir",
                directory.appendingPathComponent("b").path,
            ]
            + Array(repeating: url.absoluteString, count: 25)
        let output = Pipe()
        child.standardOutput = output
        child.standardError = FileHandle.nullDevice
        try child.run()
        defer { if child.isRunning { Glibc.kill(child.processIdentifier, SIGKILL) } }
        #expect(await eventually { (try? server.cli(["PUBSUB", "NUMPAT"])) == "1" })
        origin.resume("/one.png")

        // Then both finish, and the origin served the image once
        let sources = try await local.value
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        child.waitUntilExit()
        #expect(child.terminationStatus == 0)
        #expect(sources.count == 25)
        #expect(text.split(separator: "\n").count == 25)
        #expect(text.contains("\"source\":\"sharedCache\""))
        #expect(origin.requestCount(for: "/one.png") == 1)
        (pipeline.configuration.dataCache as? DiskCache)?.close()
    }

    @Test(.timeLimit(.minutes(1)))
    func aKilledHoldersLeaseExpiresAndOthersFetch() async throws {
        // Given `imago fetch` holding the lease (2 s) while the origin is held, killed with SIGKILL
        let executable = try #require(RedisTestSupport.imagoExecutable(), "build the imago executable first")
        let server = try RedisServer()
        let origin = try LoopbackServer()
        defer { origin.stop() }
        origin.setRoute("/slow.png", .bytes(try RedisTestSupport.png(seed: 2), contentType: "image/png"))
        origin.suspend("/slow.png")
        let url = origin.url(for: "/slow.png")
        let directory = RedisTestSupport.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let child = Process()
        child.executableURL = executable
        child.arguments = [
            "fetch", "--json", "--redis", server.url, "--redis-lease", "2", "--redis-timeout", "500", "--cache-dir",
            directory.appendingPathComponent("b").path, url.absoluteString,
        ]
        child.standardOutput = FileHandle.nullDevice
        child.standardError = FileHandle.nullDevice
        try child.run()
        #expect(await ImagoTesting.eventually { origin.suspendedRequestCount(for: "/slow.png") == 1 })
        #expect(try server.cli(["KEYS", "imago:l:*"]).split(separator: "\n").count == 1)
        Glibc.kill(child.processIdentifier, SIGKILL)
        child.waitUntilExit()
        origin.resume("/slow.png")

        // When this process loads the URL
        let cache = try makeCache([server.url])
        defer { cache.close() }
        let pipeline = try RedisTestSupport.pipeline(shared: cache, directory: directory.appendingPathComponent("a"))
        let response = try await pipeline.response(for: ImageRequest(url: url))

        // Then it waited for the dead lease to expire, fetched itself and stored the value for the others
        #expect(response.source == .network)
        #expect(cache.statistics.leaseWaitsUnfilled == 1)
        #expect(cache.statistics.leasesTaken == 1)
        await pipeline.waitForPendingCacheWrites()
        #expect(try valueKeys(server).count == 1)
        (pipeline.configuration.dataCache as? DiskCache)?.close()
    }
}
