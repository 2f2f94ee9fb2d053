import Foundation
import ImagoTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("LoopbackServer HTTP semantics", .timeLimit(.minutes(1)))
struct LoopbackServerHTTPTests {
    @Test func answersNotModifiedForMatchingETag() throws {
        // Given a route with an ETag and Cache-Control
        let server = try LoopbackServer()
        defer { server.stop() }
        server.setRoute("/e", .bytes(patternData(count: 500)).withETag("\"v1\"").withCacheControl("max-age=60"))
        let client = try RawHTTPClient(port: server.port)

        // When fetched plainly, with the matching tag (weak form, in a list) and with a stale tag
        let plain = try client.get("/e")
        let matching = try client.get("/e", headers: ["If-None-Match": "\"v0\", W/\"v1\""])
        let stale = try client.get("/e", headers: ["If-None-Match": "\"v0\""])

        // Then only the matching request gets 304 without a body, and the validators are always sent
        #expect(plain.status == 200)
        #expect(plain.headers["etag"] == "\"v1\"")
        #expect(plain.headers["cache-control"] == "max-age=60")
        #expect(matching.status == 304)
        #expect(matching.body.isEmpty)
        #expect(matching.headers["etag"] == "\"v1\"")
        #expect(stale.status == 200)
        #expect(stale.body.count == 500)
        #expect(server.lastRequestHeaders(for: "/e")?["if-none-match"] == "\"v0\"")
        #expect(server.connectionsAccepted == 1)
    }

    @Test func answersNotModifiedSinceLastModified() throws {
        // Given a route last modified at a known second
        let server = try LoopbackServer()
        defer { server.stop() }
        let modified = Date(timeIntervalSince1970: 1_700_000_000)
        server.setRoute("/m", .bytes(Data(count: 10)).withLastModified(modified))
        let client = try RawHTTPClient(port: server.port)

        // When fetched plainly, then with If-Modified-Since equal to, after and before it
        let plain = try client.get("/m")
        let same = try client.get("/m", headers: ["If-Modified-Since": "Tue, 14 Nov 2023 22:13:20 GMT"])
        let later = try client.get("/m", headers: ["If-Modified-Since": "Wed, 15 Nov 2023 00:00:00 GMT"])
        let earlier = try client.get("/m", headers: ["If-Modified-Since": "Tue, 14 Nov 2023 22:13:19 GMT"])

        // Then the header is an IMF-fixdate and only "not before" gets 304
        #expect(plain.headers["last-modified"] == "Tue, 14 Nov 2023 22:13:20 GMT")
        #expect([same.status, later.status, earlier.status] == [Int]([304, 304, 200]))
    }

    @Test func followsARedirectChain() async throws {
        // Given /r1 → /r2 (301) → /r3 (307) → /final
        let server = try LoopbackServer()
        defer { server.stop() }
        server.setRoute("/r1", .redirect(to: "/r2"))
        server.setRoute("/r2", .redirect(to: "/r3", status: 301))
        server.setRoute("/r3", .redirect(to: server.url(for: "/final").absoluteString, status: 307))
        server.setRoute("/final", .text("arrived"))
        let session = makeSession()
        defer { session.invalidateAndCancel() }

        // When the first is fetched
        let (data, response) = try await session.data(from: server.url(for: "/r1"))

        // Then the client lands on the final route, each hop requested once
        #expect(String(decoding: data, as: UTF8.self) == "arrived")
        #expect(response.url?.path == "/final")
        for path in ["/r1", "/r2", "/r3", "/final"] { #expect(server.requestCount(for: path) == 1) }
    }

    @Test func redirectLoopEndsInAClientError() async throws {
        // Given /a → /b → /a
        let server = try LoopbackServer()
        defer { server.stop() }
        server.setRoute("/a", .redirect(to: "/b"))
        server.setRoute("/b", .redirect(to: "/a"))
        let session = makeSession()
        defer { session.invalidateAndCancel() }

        // When fetched, then the client gives up with an error after going round several times
        await #expect(throws: (any Error).self) { _ = try await session.data(from: server.url(for: "/a")) }
        #expect(server.requestCount(for: "/a") + server.requestCount(for: "/b") > 2)
    }

    @Test func sendsAnyStatusWithItsBodyAndHeaders() async throws {
        // Given a 503 with a body, a wrong content type, and a gzip-encoded route
        let server = try LoopbackServer()
        defer { server.stop() }
        server.setRoute("/busy", .status(503, body: Data("try later".utf8)).withHeader("Retry-After", "1"))
        server.setRoute("/wrong", .bytes(patternData(count: 100), contentType: "text/html"))
        let text = Data(String(repeating: "imago ", count: 5000).utf8)
        server.setRoute(
            "/gz", .bytes(ImagoTesting.Gzip.stored(text), contentType: "text/plain").withContentEncoding("gzip"))
        let session = makeSession()
        defer { session.invalidateAndCancel() }

        // When fetched
        let (busyBody, busy) = try await session.data(from: server.url(for: "/busy"))
        let (_, wrong) = try await session.data(from: server.url(for: "/wrong"))
        let (inflated, gz) = try await session.data(from: server.url(for: "/gz"))
        let raw = try RawHTTPClient(port: server.port).get("/gz")

        // Then the client sees exactly what the route says (URLSession inflates gzip itself)
        #expect(busy.status == 503)
        #expect(busyBody == Data("try later".utf8))
        #expect(busy.header("Retry-After") == "1")
        #expect(wrong.header("Content-Type") == "text/html")
        #expect(gz.status == 200)
        #expect(inflated == text)
        #expect(raw.headers["content-encoding"] == "gzip")
        #expect(Data(raw.body) == ImagoTesting.Gzip.stored(text))
    }

    @Test func handlerSeesTheRequestAndAnswers() async throws {
        // Given a handler echoing the Authorization header and the body length
        let server = try LoopbackServer()
        defer { server.stop() }
        server.setRoute(
            "/echo",
            .handler { request in
                .init(text: "\(request.method) \(request.headers["authorization"] ?? "-") \(request.body.count)")
            })
        let session = makeSession()
        defer { session.invalidateAndCancel() }

        // When a POST with a body and a GET with credentials arrive
        var post = URLRequest(url: server.url(for: "/echo"))
        post.httpMethod = "POST"
        post.httpBody = Data(count: 3000)
        let (posted, _) = try await session.data(for: post)
        var get = URLRequest(url: server.url(for: "/echo"))
        get.setValue("Bearer t0k3n", forHTTPHeaderField: "Authorization")
        let (got, response) = try await session.data(for: get)

        // Then the handler saw both
        #expect(String(decoding: posted, as: UTF8.self) == "POST - 3000")
        #expect(String(decoding: got, as: UTF8.self) == "GET Bearer t0k3n 0")
        #expect(response.header("Content-Type") == "text/plain; charset=utf-8")
        #expect(server.lastRequestHeaders(for: "/echo")?["Authorization"] == "Bearer t0k3n")
    }

    @Test func servesFilesFromADirectoryWithoutEscaping() throws {
        // Given a folder with a nested PNG-named file, served under /static
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("loopback-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("nested"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data("png bytes".utf8).write(to: folder.appendingPathComponent("nested/a b.png"))
        try Data("secret".utf8).write(to: folder.appendingPathComponent("../\(folder.lastPathComponent).secret"))
        defer {
            try? FileManager.default.removeItem(
                at: folder.appendingPathComponent("../\(folder.lastPathComponent).secret"))
        }
        let server = try LoopbackServer()
        defer { server.stop() }
        server.setRoute("/static", .directory(folder))
        let client = try RawHTTPClient(port: server.port)

        // When a file, a missing file, and escapes (plain and percent-encoded) are requested
        let file = try client.get("/static/nested/a%20b.png")
        let missing = try client.get("/static/nested/none.png")
        let escape = try client.get("/static/../\(folder.lastPathComponent).secret")
        let encoded = try client.get("/static/%2e%2e/\(folder.lastPathComponent).secret")
        let prefixOnly = try client.get("/staticx/nested/a%20b.png")

        // Then only the file inside is served, with a type from its extension
        #expect(file.status == 200)
        #expect(file.body == Array("png bytes".utf8))
        #expect(file.headers["content-type"] == "image/png")
        #expect([missing.status, escape.status, encoded.status, prefixOnly.status] == [Int](repeating: 404, count: 4))
        #expect(server.requestCount(for: "/static/nested/a%20b.png") == 1)
    }

    @Test func rejectsOversizedAndMalformedRequests() throws {
        // Given a server
        let server = try LoopbackServer()
        defer { server.stop() }
        server.setRoute("/x", .text("x"))

        // When one client sends 70 KB of headers and another a malformed request line
        let big = try RawHTTPClient(port: server.port)
        big.send("GET /x HTTP/1.1\r\nX-Big: \(String(repeating: "a", count: 70_000))\r\n\r\n")
        let bigResponse = try big.readResponse()
        let bad = try RawHTTPClient(port: server.port)
        bad.send("NONSENSE\r\n\r\n")
        let badResponse = try bad.readResponse()

        // Then they get 431 and 400, the connections close, and nothing is counted as a request
        #expect(bigResponse.status == 431)
        #expect(big.isClosedByPeer())
        #expect(badResponse.status == 400)
        #expect(bad.isClosedByPeer())
        #expect(server.totalRequestCount == 0)
    }

    @Test func serializesPipelinedRequests() throws {
        // Given two requests written at once on one connection
        let server = try LoopbackServer()
        defer { server.stop() }
        server.setRoute("/1", .text("one"))
        server.setRoute("/2", .text("two"))
        let client = try RawHTTPClient(port: server.port)
        client.send("GET /1 HTTP/1.1\r\nHost: x\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\n\r\n")

        // When both responses are read, then they come in order
        #expect(try client.readResponse().body == Array("one".utf8))
        #expect(try client.readResponse().body == Array("two".utf8))
    }
}

@Suite("LoopbackServer request bodies", .timeLimit(.minutes(1)))
struct LoopbackServerRequestBodyTests {
    @Test func answersExpectContinueAndReadsTheBody() throws {
        // Given a handler reporting the body size
        let server = try LoopbackServer()
        defer { server.stop() }
        server.setRoute("/upload", .handler { .init(text: "\($0.body.count)") })
        let client = try RawHTTPClient(port: server.port)

        // When a client announces a body and waits for 100 Continue before sending it
        client.send("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\nExpect: 100-continue\r\n\r\n")
        let interim = try client.readResponse(isHead: true)
        client.send(String(repeating: "b", count: 5000))
        let response = try client.readResponse()

        // Then the server sent 100 first, and the handler saw the whole body
        #expect(interim.status == 100)
        #expect(response.status == 200)
        #expect(response.body == Array("5000".utf8))
        #expect(server.lastRequest(for: "/upload")?.body == Data(repeating: UInt8(ascii: "b"), count: 5000))
    }
}
