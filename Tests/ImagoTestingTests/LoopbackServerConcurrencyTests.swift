import Foundation
import ImagoTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("LoopbackServer concurrency and gates", .timeLimit(.minutes(1)))
struct LoopbackServerConcurrencyTests {
    @Test func servesSixtyFourConcurrentClients() async throws {
        // Given a gated route, so all requests must be in the server at once before any is answered
        let server = try LoopbackServer()
        defer { server.stop() }
        let payload = patternData(count: 10_000)
        server.setRoute("/many", .bytes(payload))
        server.suspend("/many")
        let session = makeSession(maxConnections: 64)
        defer { session.invalidateAndCancel() }

        // When 64 clients request it concurrently
        async let results = withThrowingTaskGroup(of: Data.self) { group in
            for index in 0..<64 {
                group.addTask { try await session.data(from: server.url(for: "/many?client=\(index)")).0 }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }

        // Then all 64 are held at the gate at the same time, on 64 connections, and all succeed once released
        #expect(await server.waitUntil(timeout: .seconds(20)) { $0.suspendedRequestCount(for: "/many") == 64 })
        #expect(server.maxConcurrentRequests == 64)
        #expect(server.connectionsAccepted == 64)
        server.resume("/many")
        let bodies = try await results
        #expect(bodies.count == 64)
        #expect(bodies.allSatisfy { $0 == payload })
        #expect(await server.waitUntil { $0.completedTransfers(for: "/many") == 64 })
    }

    @Test func gateHoldsRequestsUntilResumed() async throws {
        // Given a suspended path and an open one
        let server = try LoopbackServer()
        defer { server.stop() }
        server.setRoute("/held", .text("held"))
        server.setRoute("/free", .text("free"))
        server.suspend("/held")
        let session = makeSession()
        defer { session.invalidateAndCancel() }

        // When the held path is requested
        async let held = session.data(from: server.url(for: "/held"))
        #expect(await server.waitUntil { $0.suspendedRequestCount(for: "/held") == 1 })

        // Then it is counted but not answered while other paths are served; resuming releases it
        let (free, _) = try await session.data(from: server.url(for: "/free"))
        #expect(String(decoding: free, as: UTF8.self) == "free")
        #expect(server.requestCount(for: "/held") == 1)
        #expect(server.completedTransfers(for: "/held") == 0)
        #expect(await server.waitUntil { $0.concurrentRequests == 1 })
        server.resume("/held")
        let (data, _) = try await held
        #expect(String(decoding: data, as: UTF8.self) == "held")
        #expect(server.suspendedRequestCount(for: "/held") == 0)
    }

    @Test func stopReleasesGatedRequests() async throws {
        // Given a request held at a gate
        let server = try LoopbackServer()
        server.setRoute("/held", .text("held"))
        server.suspend("/held")
        let client = try RawHTTPClient(port: server.port)
        client.send("GET /held HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(await server.waitUntil { $0.suspendedRequestCount(for: "/held") == 1 })

        // When the server stops, then the connection closes without an answer
        server.stop()
        #expect(client.isClosedByPeer())
        #expect(server.concurrentRequests == 0)
    }

    @Test func waitUntilReportsATimeout() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }

        let met = await server.waitUntil(timeout: .milliseconds(20)) { $0.requestCount(for: "/never") == 1 }

        #expect(!met)
    }

    @Test func resetStatisticsStartsCountingAfresh() throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        server.setRoute("/x", .text("x"))
        let client = try RawHTTPClient(port: server.port)
        _ = try client.get("/x")

        server.resetStatistics()
        _ = try client.get("/x")

        #expect(server.requestCount(for: "/x") == 1)
        #expect(server.totalRequestCount == 1)
        #expect(server.connectionsAccepted == 0)
    }
}
