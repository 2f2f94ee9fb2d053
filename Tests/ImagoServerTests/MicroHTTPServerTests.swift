import Foundation
import Imago
import ImagoCore
import ImagoServer
import ImagoTesting
import Testing

@Suite("MicroHTTPServer: the proxy over libmicrohttpd")
struct MicroHTTPServerTests {
    @Test(.timeLimit(.minutes(1)))
    func servesGETHEADAnd304OverTheWire() async throws {
        let fixture = try ProxyFixture()
        let server = try fixture.served()
        defer { server.stop() }
        let client = TestHTTPClient()
        let base = "http://127.0.0.1:\(server.port)"
        // A percent-encoded plain source reaches the handler still encoded (libmicrohttpd must not unescape it)
        let encodedSource = fixture.source().addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let get = try await client.send(URL(string: base + "/_/rs:fit:80:80/plain/" + encodedSource)!)
        #expect(get.status == 200 && get.headers["content-type"] == "image/jpeg")
        #expect(get.headers["content-length"] == "\(get.body.count)")
        #expect(try ServerTestImages.decode(get.body).size == PixelSize(width: 80, height: 40))
        let etag = try #require(get.headers["etag"])

        let head = try await client.send(URL(string: base + fixture.path("rs:fit:80:80"))!, method: "HEAD")
        #expect(head.status == 200 && head.body.isEmpty && head.headers["content-length"] == "\(get.body.count)")
        #expect(head.headers["etag"] == etag)

        let conditional = try await client.send(
            URL(string: base + fixture.path("rs:fit:80:80"))!, headers: ["If-None-Match": etag])
        #expect(conditional.status == 304 && conditional.body.isEmpty)
        // with the 200's length (libmicrohttpd wrote "Content-Length: 0", which RFC 9110 forbids in a 304)
        #expect(conditional.headers["content-length"] == "\(get.body.count)")
        #expect(conditional.headers["etag"] == etag)
        // and no byte of a body follows it: the next answer on the same connection starts right after its headers
        let raw = try RawHTTPClient(port: server.port)
        let rawConditional = try raw.get(fixture.path("rs:fit:80:80"), headers: ["If-None-Match": etag])
        #expect(rawConditional.status == 304 && rawConditional.headers["content-length"] == "\(get.body.count)")
        let next = try raw.get("/healthz")
        #expect(next.status == 200 && String(decoding: next.body, as: UTF8.self).contains("ok"))

        let health = try await client.send(URL(string: base + "/healthz")!)
        #expect(health.status == 200 && String(decoding: health.body, as: UTF8.self).contains("ok"))
        let error = try await client.send(URL(string: base + fixture.path("nope:1"))!)
        #expect(error.status == 400 && error.headers["content-type"] == "application/json")
        #expect(fixture.origin.requestCount(for: "/a.jpg") == 1)
    }

    @Test(.timeLimit(.minutes(1)))
    func theUnspecifiedIPv6AddressListensOnBothFamiliesAndAnyOtherOnItsOwn() async throws {
        // `--listen :PORT` (imgproxy's IMGPROXY_BIND) is `::`: one socket for IPv4 and IPv6 peers alike
        let client = TestHTTPClient()
        // (each answer names the peer's address as the access log has it)
        let every = try MicroHTTPServer(host: "::", port: 0) { request in
            ServerResponse(status: 200, headers: [], body: Data((request.clientAddress ?? "none").utf8))
        }
        defer { every.stop() }
        let overIPv4 = try await client.send(URL(string: "http://127.0.0.1:\(every.port)/")!)
        #expect(overIPv4.status == 200 && overIPv4.body == Data("127.0.0.1".utf8))  // not ::ffff:127.0.0.1
        guard FileManager.default.fileExists(atPath: "/proc/net/if_inet6") else {
            #expect(every.host == "0.0.0.0")  // a machine without IPv6: every IPv4 interface
            return
        }
        #expect(every.host == "::")
        let overIPv6 = try RawHTTPClient(port: every.port, overIPv6: true).get("/")
        #expect(overIPv6.status == 200 && overIPv6.body == Array("::1".utf8))
        // while ::1 is IPv6's loopback only: an IPv4 peer is refused
        let only = try MicroHTTPServer(host: "::1", port: 0) { _ in
            ServerResponse(status: 200, headers: [], body: Data())
        }
        defer { only.stop() }
        #expect(try RawHTTPClient(port: only.port, overIPv6: true).get("/").status == 200)
        #expect(throws: RawHTTPClient.Failure.self) { try RawHTTPClient(port: only.port) }
    }

    @Test(.timeLimit(.minutes(1)))
    func aRequestTargetInAbsoluteFormIsServedByItsPath() async throws {
        // RFC 9112 §3.2.2: a server must accept `GET http://host/path`; it was a 400 ("the path must start with /")
        let fixture = try ProxyFixture()
        let server = try fixture.served()
        defer { server.stop() }
        let raw = try RawHTTPClient(port: server.port)
        let image = try raw.get("http://127.0.0.1:\(server.port)" + fixture.path("rs:fit:80:80"))
        #expect(image.status == 200 && image.headers["content-type"] == "image/jpeg")
        #expect(try ServerTestImages.decode(Data(image.body)).size == PixelSize(width: 80, height: 40))
        #expect(try raw.get("HTTP://localhost/healthz").status == 200)
        #expect(try raw.get("http://localhost").status == 400)  // the path "/": no route
        #expect(try raw.get("https://localhost:1/healthz").status == 200)
        #expect(try raw.get("ftp://localhost/healthz").status == 400)  // not HTTP: taken as a path, which is none
    }

    @Test(.timeLimit(.minutes(1)))
    func hundredConcurrentIdenticalRequestsCostOneFetchDecodeAndEncode() async throws {
        let fixture = try ProxyFixture()
        let server = try fixture.served()
        defer { server.stop() }
        let client = TestHTTPClient()
        let url = URL(string: "http://127.0.0.1:\(server.port)" + fixture.path("rs:fill:64:64/f:webp"))!
        // Given the origin holds its answer until all 100 requests are in the proxy
        fixture.origin.suspend("/a.jpg")
        let responses = Task {
            try await withThrowingTaskGroup(of: (Int, Data).self) { group in
                for _ in 0..<100 {
                    group.addTask {
                        let r = try await client.send(url); return (r.status, r.body)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
        }
        #expect(await ImagoTesting.eventually(timeout: .seconds(20)) { fixture.proxy.metrics.inFlight == 100 })
        fixture.origin.resume("/a.jpg")
        let results = try await responses.value
        #expect(results.count == 100 && results.allSatisfy { $0.0 == 200 && $0.1 == results[0].1 })
        #expect(fixture.origin.requestCount(for: "/a.jpg") == 1)
        let samples = prometheusSamples(fixture.proxy.metrics.prometheusText())
        // One render (one decode, one encode) led; 99 joined it
        #expect(samples["imago_serve_cache_hits_total{tier=\"origin\"}"] == 1)
        #expect(samples["imago_serve_cache_hits_total{tier=\"coalesced\"}"] == 99)
        #expect(samples["imago_serve_origin_fetches_total"] == 1)
    }

    @Test(.timeLimit(.minutes(1)))
    func metricsCountWhatWasSent() async throws {
        let fixture = try ProxyFixture()
        let server = try fixture.served()
        defer { server.stop() }
        let client = TestHTTPClient()
        let base = "http://127.0.0.1:\(server.port)"
        var bodyBytes = 0
        for width in [30, 30, 30, 40] {
            bodyBytes += try await client.send(URL(string: base + fixture.path("w:\(width)"))!).body.count
        }
        for _ in 0..<2 { _ = try await client.send(URL(string: base + fixture.path("bad:1"))!) }
        _ = try await client.send(URL(string: base + fixture.path("", "/missing.jpg"))!)
        _ = try await client.send(URL(string: base + fixture.path("w:30"))!, method: "HEAD")

        let text = String(decoding: try await client.send(URL(string: base + "/metrics")!).body, as: UTF8.self)
        let samples = prometheusSamples(text)
        #expect(text.contains("# TYPE imago_serve_request_duration_seconds histogram"))
        #expect(samples["imago_serve_requests_total{status=\"200\"}"] == 5)
        #expect(samples["imago_serve_requests_total{status=\"400\"}"] == 2)
        #expect(samples["imago_serve_requests_total{status=\"404\"}"] == 1)
        #expect(samples["imago_serve_request_duration_seconds_count"] == 8)
        #expect(samples["imago_serve_request_duration_seconds_bucket{le=\"+Inf\"}"] == 8)
        // w:30 and w:40 rendered from fresh fetches (this fixture keeps no originals on disk); w:30 twice more and
        // its HEAD from the output cache. The 404 is no completed fetch.
        #expect(samples["imago_serve_cache_hits_total{tier=\"origin\"}"] == 2)
        #expect(samples["imago_serve_cache_hits_total{tier=\"output_memory\"}"] == 3)
        #expect(samples["imago_serve_origin_fetches_total"] == 2)
        #expect(Int(samples["imago_serve_bytes_out_total"] ?? 0) >= bodyBytes)
        #expect(samples["imago_serve_bytes_in_total"] == Double(2 * fixture.jpeg.count))
        // The two renders' stages: each queued, fetched, decoded, processed (resized) and encoded once; none read
        // a disk cache; the sums add up to no more than the requests took
        for stage in ["queue", "fetch", "decode", "process", "encode"] {
            #expect(samples["imago_serve_render_stage_seconds_count{stage=\"\(stage)\"}"] == 2, "\(stage)")
            #expect(samples["imago_serve_render_stage_seconds_bucket{stage=\"\(stage)\",le=\"+Inf\"}"] == 2)
        }
        #expect(samples["imago_serve_render_stage_seconds_count{stage=\"disk\"}"] == 0)
        let stageSum = ["queue", "fetch", "decode", "process", "encode"].reduce(0.0) {
            $0 + (samples["imago_serve_render_stage_seconds_sum{stage=\"\($1)\"}"] ?? .infinity)
        }
        #expect(stageSum > 0 && stageSum <= (samples["imago_serve_request_duration_seconds_sum"] ?? 0))
        #expect(samples["imago_serve_requests_in_flight"] == 1)  // this /metrics request
        #expect(samples["imago_serve_queue_length"] == 0)
    }

    /// Requests libmicrohttpd answers itself, which the proxy never sees, are counted by status all the same: a
    /// request line and header fields over the connection's 16 KiB (414, 431), a header line without a colon or a
    /// `Content-Length` that is no number (400), one too large to hold (413), an unknown HTTP version (505). They
    /// are not in the latency histogram, and nothing else is logged or counted for them.
    @Test(.timeLimit(.minutes(1)))
    func requestsTheServerRefusesItselfAreCountedByStatus() async throws {
        let fixture = try ProxyFixture()
        let server = try fixture.served()
        defer { server.stop() }
        func send(_ request: String) async throws -> String {
            let client = try RawHTTPClient(port: server.port)
            client.send(request)
            return await client.readUntilClosed(waitingAtMost: .seconds(10)).text
        }
        let longLine = "GET /_/w:10/plain/http://127.0.0.1/" + String(repeating: "a", count: 20_000) + " HTTP/1.1\r\n"
        #expect(try await send(longLine + "Host: x\r\n\r\n").hasPrefix("HTTP/1.1 414"))
        let bigField = "X-Big: " + String(repeating: "b", count: 20_000) + "\r\n"
        #expect(try await send("GET /healthz HTTP/1.1\r\nHost: x\r\n" + bigField + "\r\n").hasPrefix("HTTP/1.1 431"))
        #expect(try await send("GET /healthz HTTP/1.1\r\nHost: x\r\nno colon\r\n\r\n").hasPrefix("HTTP/1.1 400"))
        let length = "GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: "
        #expect(try await send(length + "abc\r\n\r\n").hasPrefix("HTTP/1.1 400"))
        #expect(try await send(length + String(repeating: "9", count: 30) + "\r\n\r\n").hasPrefix("HTTP/1.1 413"))
        #expect(try await send("GET /healthz HTTP/9.9\r\nHost: x\r\n\r\n").hasPrefix("HTTP/1.1 505"))
        #expect(
            try await send("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").hasPrefix("HTTP/1.1 200"))

        let text = String(
            decoding: try await TestHTTPClient().send(
                URL(string: "http://127.0.0.1:\(server.port)/metrics")!
            ).body, as: UTF8.self)
        let samples = prometheusSamples(text)
        #expect(samples["imago_serve_requests_total{status=\"414\"}"] == 1, "\(text)")
        #expect(samples["imago_serve_requests_total{status=\"431\"}"] == 1)
        #expect(samples["imago_serve_requests_total{status=\"400\"}"] == 2)
        #expect(samples["imago_serve_requests_total{status=\"413\"}"] == 1)
        #expect(samples["imago_serve_requests_total{status=\"505\"}"] == 1)
        #expect(samples["imago_serve_requests_total{status=\"200\"}"] == 1)  // the health check
        #expect(samples["imago_serve_request_duration_seconds_count"] == 1)
        #expect(samples["imago_serve_requests_in_flight"] == 1)  // this /metrics request
        #expect(fixture.origin.requestCount(for: "/a.jpg") == 0)
    }
}

/// Slow and surplus clients (imgproxy's `IMGPROXY_MAX_CLIENTS` and its timeouts): an idle connection is closed after
/// the connection timeout, mid-request or between requests, and connections over the limit wait in the listen queue.
@Suite("MicroHTTPServer: connection limits")
struct MicroHTTPServerConnectionLimitTests {
    @Test(.timeLimit(.minutes(1)))
    func anIdleConnectionIsClosedAfterTheTimeout() async throws {
        let server = try ProxyFixture().served(connectionTimeout: 1)
        defer { server.stop() }
        // Half a request, never finished: closed, with nothing answered
        let slow = try RawHTTPClient(port: server.port)
        slow.send("GET /healthz HTTP/1.1\r\nHost: x\r\n")
        let halfway = await slow.readUntilClosed(waitingAtMost: .seconds(10))
        #expect(halfway.closed && halfway.text.isEmpty)
        // A kept-alive connection after its answer: closed once idle
        let idle = try RawHTTPClient(port: server.port)
        idle.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        let answered = await idle.readUntilClosed(waitingAtMost: .seconds(10))
        #expect(answered.text.hasPrefix("HTTP/1.1 200") && answered.closed)
    }

    @Test(.timeLimit(.minutes(1)))
    func aLargeBodyIsNotWaitedForAndASmallOneKeepsTheConnection() async throws {
        let fixture = try ProxyFixture()
        let server = try fixture.served(connectionTimeout: 30)
        defer { server.stop() }
        // A POST promising 100 MB and sending 2 bytes: its 405 comes at once (it waited 30 s for the rest, then the
        // connection closed without an answer), and the connection closes after it
        let promised = try RawHTTPClient(port: server.port)
        promised.send("POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\nxx")
        let refused = await promised.readUntilClosed(waitingAtMost: .seconds(10))
        #expect(refused.text.hasPrefix("HTTP/1.1 405") && refused.closed, "\(refused.text)")
        // A GET with a chunked body of unknown length is rendered as any GET, on its headers
        let chunked = try RawHTTPClient(port: server.port)
        chunked.send(
            "GET \(fixture.path("rs:fit:80:80")) HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n"
        )
        let rendered = await chunked.readUntilClosed(waitingAtMost: .seconds(10))
        #expect(rendered.text.hasPrefix("HTTP/1.1 200") && rendered.text.contains("image/jpeg"), "\(rendered.text)")
        #expect(rendered.closed)
        // A small body is read and dropped, and the connection kept for the next request
        let small = try RawHTTPClient(port: server.port)
        small.send("GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
        #expect(try small.readResponse().status == 200)
        #expect(try small.get("/healthz").status == 200)
        #expect(fixture.origin.requestCount(for: "/a.jpg") == 1)
    }

    @Test(.timeLimit(.minutes(1)))
    func connectionsOverTheLimitWaitUntilOneCloses() async throws {
        let server = try ProxyFixture().served(connectionLimit: 2)
        defer { server.stop() }
        var open = [try RawHTTPClient(port: server.port), try RawHTTPClient(port: server.port)]
        // A third client waits in the listen queue, unanswered, while two are open
        let waiting = try RawHTTPClient(port: server.port)
        waiting.send("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        let meanwhile = await waiting.readUntilClosed(waitingAtMost: .seconds(1))
        #expect(!meanwhile.closed && meanwhile.text.isEmpty, "\(meanwhile.text)")
        // and is answered once one of them goes
        open.removeFirst()
        let answer = await waiting.readUntilClosed(waitingAtMost: .seconds(10))
        #expect(answer.text.hasPrefix("HTTP/1.1 200") && answer.closed, "\(answer.text)")
        #expect(open.count == 1)
    }
}

/// imgproxy's `IMGPROXY_SO_REUSEPORT`: several processes on one port.
@Suite("MicroHTTPServer: SO_REUSEPORT")
struct MicroHTTPServerReusePortTests {
    @Test(.timeLimit(.minutes(1)))
    func twoServersShareAPortOnlyWhenBothAsk() async throws {
        let first = try MicroHTTPServer(host: "127.0.0.1", port: 0, reusesPort: true) { _ in
            ServerResponse(status: 200, headers: [], body: Data("first".utf8))
        }
        defer { first.stop() }
        let second = try MicroHTTPServer(host: "127.0.0.1", port: first.port, reusesPort: true) { _ in
            ServerResponse(status: 200, headers: [], body: Data("second".utf8))
        }
        defer { second.stop() }
        #expect(second.port == first.port)
        // Connections reach both (the kernel spreads them by their source ports)
        var seen = Set<String>()
        for _ in 0..<64 where seen.count < 2 {
            let connection = try RawHTTPClient(port: first.port)
            connection.send("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            let text = await connection.readUntilClosed(waitingAtMost: .seconds(5)).text
            if text.hasSuffix("first") { seen.insert("first") }
            if text.hasSuffix("second") { seen.insert("second") }
        }
        #expect(seen == ["first", "second"])
        // Without the option on the newcomer, the port is taken
        #expect(throws: MicroHTTPServer.Error.self) {
            try MicroHTTPServer(host: "127.0.0.1", port: first.port) { _ in
                ServerResponse(status: 200, headers: [], body: Data())
            }
        }
    }
}

/// imgproxy's `IMGPROXY_NETWORK=unix`: listening on a Unix domain socket for a front server on the same machine.
@Suite("MicroHTTPServer: Unix domain socket")
struct MicroHTTPServerUnixSocketTests {

    /// A new empty folder, removed by the caller.
    func folder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "imago-unix-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test(.timeLimit(.minutes(1)))
    func servesOnTheSocketAndRemovesItWhenStopped() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("imago.sock").path
        let server = try MicroHTTPServer(socketPath: path) { request in
            try? await Task.sleep(for: .milliseconds(20))  // suspended and resumed, as the proxy's requests are
            return ServerResponse(status: 200, headers: [.init("X-Path", request.path)], body: Data("over unix".utf8))
        }
        #expect(server.socketPath == path && server.port == 0)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect(attributes[.type] as? FileAttributeType == .typeSocket)
        // Two requests on one keep-alive connection, then one that closes it
        let connection = try RawHTTPClient(socketPath: path)
        connection.send("GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        let (text, closed) = await connection.readUntilClosed(waitingAtMost: .seconds(5))
        #expect(closed && text.components(separatedBy: "HTTP/1.1 200").count == 3, "\(text)")
        #expect(text.contains("X-Path: /a") && text.contains("X-Path: /b") && text.hasSuffix("over unix"))
        // A second server cannot take the socket while the first listens on it
        #expect(throws: MicroHTTPServer.Error.socketFailed(path: path, reason: "another process is listening on it")) {
            try MicroHTTPServer(socketPath: path) { _ in ServerResponse(status: 200, headers: [], body: Data()) }
        }
        server.stop()
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(throws: POSIXError.self) { try LoopbackSocket.connect(socketPath: path) }
    }

    @Test func aStaleSocketIsReplacedAndOtherFilesAreNeverTouched() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        // A socket file whose process is gone: bound, never listened on, closed
        let stale = dir.appendingPathComponent("stale.sock").path
        let leftover = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = try #require(UnixSocketAddress.make(stale))
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(leftover, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        close(leftover)
        #expect(bound == 0 && FileManager.default.fileExists(atPath: stale))
        let server = try MicroHTTPServer(socketPath: stale) { _ in
            ServerResponse(status: 204, headers: [], body: Data())
        }
        let connection = try RawHTTPClient(socketPath: stale)
        connection.send("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(await connection.readUntilClosed(waitingAtMost: .seconds(5)).text.hasPrefix("HTTP/1.1 204"))
        server.stop()
        // A regular file at the path stays, and so does what it holds
        let file = dir.appendingPathComponent("data.txt")
        try Data("keep me".utf8).write(to: file)
        #expect(
            throws: MicroHTTPServer.Error.socketFailed(path: file.path, reason: "the file exists and is not a socket")
        ) {
            try MicroHTTPServer(socketPath: file.path) { _ in ServerResponse(status: 200, headers: [], body: Data()) }
        }
        #expect(try Data(contentsOf: file) == Data("keep me".utf8))
        // A path too long for an address, and a folder that does not exist: typed errors
        let long = dir.path + "/" + String(repeating: "s", count: 120)
        #expect(throws: MicroHTTPServer.Error.socketFailed(path: long, reason: "the path is longer than 107 bytes")) {
            try MicroHTTPServer(socketPath: long) { _ in ServerResponse(status: 200, headers: [], body: Data()) }
        }
        let missing = dir.path + "/no/such/folder.sock"
        #expect(throws: MicroHTTPServer.Error.socketFailed(path: missing, reason: "No such file or directory")) {
            try MicroHTTPServer(socketPath: missing) { _ in ServerResponse(status: 200, headers: [], body: Data()) }
        }
    }
}

/// `--threads N`: a pool of libmicrohttpd polling threads, each with its own epoll set, connections suspended on one
/// thread and resumed from Swift's (RELIABILITY.md §15).
@Suite("MicroHTTPServer: a pool of polling threads")
struct MicroHTTPServerPoolTests {
    /// 32 clients, each on its own thread, send 100 requests in turn: most kept alive on one connection, a quarter
    /// reconnecting for every request. Answers come three ways: on the polling thread (`immediate`), from the
    /// handler at once (often before libmicrohttpd's access callback has returned from suspending), and after a
    /// short wait. Every read is bounded at 5 s, so a resumed connection that libmicrohttpd never served again fails
    /// the test as a timeout instead of hanging it.
    @Test(.timeLimit(.minutes(2)))
    func everySuspendedRequestIsAnsweredAcrossThePool() async throws {
        let handled = Locked(0)
        let server = try MicroHTTPServer(
            host: "127.0.0.1", port: 0, threads: 2,
            immediate: { request in
                Self.number(request.path) % 3 == 0 ? Self.response(to: request.path) : nil
            }
        ) { request in
            handled.withLock { $0 += 1 }
            let number = Self.number(request.path)
            if number % 3 == 2 { try? await Task.sleep(for: .microseconds(number % 2_000)) }
            return Self.response(to: request.path)
        }
        defer { server.stop() }
        let port = server.port
        let failures = Locked([String]())
        let answered = Locked(0)
        await withCheckedContinuation { (finished: CheckedContinuation<Void, Never>) in
            let clients = DispatchGroup()
            for client in 0..<32 {
                clients.enter()
                Thread {
                    defer { clients.leave() }
                    let reconnects = client % 4 == 3
                    do {
                        var connection = try RawHTTPClient(port: port)
                        for request in 0..<100 {
                            if reconnects && request > 0 { connection = try RawHTTPClient(port: port) }
                            let path = "/\(client)/\(client * 100 + request)"
                            let response = try connection.get(path, headers: reconnects ? ["Connection": "close"] : [:])
                            guard response.status == 200, Data(response.body) == Self.response(to: path).body else {
                                failures.withLock { $0.append("\(path): \(response.status), \(response.body.count) B") }
                                return
                            }
                            answered.withLock { $0 += 1 }
                        }
                    } catch {
                        failures.withLock { $0.append("client \(client): \(error)") }
                    }
                }.start()
            }
            clients.notify(queue: .global()) { finished.resume() }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0.prefix(5) })")
        #expect(answered.withLock { $0 } == 3_200)
        // The handler saw exactly the requests the polling threads did not answer themselves
        #expect(handled.withLock { $0 } == (0..<3_200).filter { $0 % 3 != 0 }.count)
        #expect(await ImagoTesting.eventually(timeout: .seconds(10)) { server.inFlightCount == 0 })
    }

    /// The number at the end of a test path (`/client/number`).
    private static func number(_ path: String) -> Int { Int(path.split(separator: "/").last ?? "") ?? 0 }

    /// A body that names its request and varies in size (100 B to 16 KB), so a response sent on the wrong
    /// connection or cut short does not match.
    private static func response(to path: String) -> ServerResponse {
        let number = number(path)
        let filler = Data(repeating: UInt8(truncatingIfNeeded: number), count: 100 + (number * 37) % 16_000)
        return ServerResponse(status: 200, headers: [], body: Data(path.utf8) + filler)
    }
}
