import Foundation
import ImagoTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("LoopbackServer basics", .timeLimit(.minutes(1)))
struct LoopbackServerBasicTests {
    @Test func servesBytesAndCountsRequestsPerPath() async throws {
        // Given a server with one route of 200 KB
        let server = try LoopbackServer()
        defer { server.stop() }
        let payload = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        server.setRoute("/a.jpg", .bytes(payload, contentType: "image/jpeg"))

        // When a client fetches it twice and a missing path once
        let (first, response) = try await URLSession.shared.data(from: server.url(for: "/a.jpg"))
        _ = try await URLSession.shared.data(from: server.url(for: "/a.jpg?v=2"))
        let (_, missing) = try await URLSession.shared.data(from: server.url(for: "/missing"))

        // Then the bytes, headers and counters are exact
        #expect(first == payload)
        let http = try #require(response as? HTTPURLResponse)
        #expect(http.statusCode == 200)
        #expect(http.value(forHTTPHeaderField: "Content-Type") == "image/jpeg")
        #expect((missing as? HTTPURLResponse)?.statusCode == 404)
        #expect(server.requestCount(for: "/a.jpg") == 2)
        #expect(server.requestCount(for: "/missing") == 1)
        #expect(server.totalRequestCount == 3)
        #expect(server.lastRequest(for: "/a.jpg")?.query == "v=2")
    }

    @Test func reusesKeepAliveConnections() throws {
        // Given a server and one raw client connection
        let server = try LoopbackServer()
        defer { server.stop() }
        server.setRoute("/k", .text("kept"))
        let client = try RawHTTPClient(port: server.port)

        // When three requests go over the same connection
        for _ in 0..<3 {
            let response = try client.get("/k")
            #expect(response.status == 200)
            #expect(response.body == Array("kept".utf8))
            #expect(response.headers["connection"] == "keep-alive")
        }

        // Then the server accepted one connection for three requests
        #expect(server.requestCount(for: "/k") == 3)
        #expect(server.connectionsAccepted == 1)
    }

    @Test func urlSessionReusesConnections() async throws {
        // Given a server and one session
        let server = try LoopbackServer()
        defer { server.stop() }
        server.setRoute("/k", .bytes(patternData(count: 50_000)))
        let session = makeSession()
        defer { session.invalidateAndCancel() }

        // When twenty requests run one after another
        for _ in 0..<20 { _ = try await session.data(from: server.url(for: "/k")) }

        // Then they shared fewer connections than requests
        #expect(server.requestCount(for: "/k") == 20)
        #expect(server.connectionsAccepted < 20)
    }

    @Test func removedRouteAnswersNotFound() throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        server.setRoute("/gone", .text("here"))
        let client = try RawHTTPClient(port: server.port)
        let before = try client.get("/gone")

        server.removeRoute("/gone")
        let after = try client.get("/gone")

        #expect(before.status == 200)
        #expect(after.status == 404)
    }

    @Test func honoursConnectionClose() throws {
        // Given a server
        let server = try LoopbackServer()
        defer { server.stop() }
        server.setRoute("/c", .text("bye"))
        let client = try RawHTTPClient(port: server.port)

        // When the client asks to close
        let response = try client.get("/c", headers: ["Connection": "close"])

        // Then the server answers and closes the connection
        #expect(response.headers["connection"] == "close")
        #expect(response.body == Array("bye".utf8))
        #expect(client.isClosedByPeer())
    }

    @Test func headReturnsHeadersWithoutBody() throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        server.setRoute("/h", .bytes(Data(count: 1234)))
        let client = try RawHTTPClient(port: server.port)

        let head = try client.get("/h", method: "HEAD")
        let get = try client.get("/h")

        #expect(head.headers["content-length"] == "1234")
        #expect(head.body.isEmpty)
        #expect(get.body.count == 1234)
        #expect(server.lastRequest(for: "/h")?.method == "GET")
    }

    @Test func stopClosesEveryDescriptorItOpened() throws {
        // Given a server with four clients holding keep-alive connections
        let server = try LoopbackServer()
        server.setRoute("/x", .text("x"))
        var clients: [RawHTTPClient] = []
        for _ in 0..<4 {
            let client = try RawHTTPClient(port: server.port)
            _ = try client.get("/x")
            clients.append(client)
        }
        #expect(server.connectionsAccepted == 4)
        let serverDescriptors = openDescriptorTargets(server.openDescriptors)
        #expect(serverDescriptors.count == 3 + 4 - 1)  // the two pipe ends share one identity

        // When the server stops
        server.stop()

        // Then every client sees its connection closed and none of the server's descriptors is open any more
        for client in clients { #expect(client.isClosedByPeer()) }
        #expect(openDescriptorTargets().isDisjoint(with: serverDescriptors))
        #expect(server.openDescriptors.isEmpty)
    }
}
