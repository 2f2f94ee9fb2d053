import Foundation
import Imago
import ImagoServer
import ImagoTesting
import Testing

@testable import ImagoCLI

@Suite("imago serve: the command in-process and as a process")
struct ServeCommandTests {
    static func scratch() -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("imago-serve-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test func refusesToStartWithoutAKeyOrUnsigned() async throws {
        let (console, output) = Console.capturing()
        #expect(await CLI.run(["serve", "--listen", "127.0.0.1:0"], console: console) == 2)
        #expect(output.stderr.contains("--unsigned"))
        #expect(await CLI.run(["serve", "--key", "zz", "--salt", "00"], console: console) == 2)
        #expect(await CLI.run(["serve", "--unsigned", "--log-format", "xml"], console: console) == 2)
        #expect(throws: UsageError.self) { try ServeCommand.parseListen("8080") }
        #expect(try ServeCommand.parseListen("[::1]:81") == ("::1", 81))
        #expect(try ServeCommand.parseListen(":0") == ("::", 0))  // every interface, as imgproxy's IMGPROXY_BIND
        #expect(try ServeCommand.parseListen("[::]:8080") == ("::", 8080))
        #expect(try ServeCommand.parseListen("localhost:1") == ("127.0.0.1", 1))
    }

    @Test(.timeLimit(.minutes(1)))
    func aPrivateHTTPSOriginIsTrustedThroughCacertAndOtherwiseRefused() async throws {
        // Given nginx over TLS with a certificate made for this run, which no system authority signed
        let root = Self.scratch()
        defer { try? FileManager.default.removeItem(at: root) }
        try ServerTestImages.jpeg().write(to: root.appendingPathComponent("a.jpg"))
        let nginx = try NginxServer(root: root)
        defer { nginx.stop() }
        let source = nginx.http2URL.appendingPathComponent("a.jpg").absoluteString
        let client = TestHTTPClient()
        func status(_ extra: [String]) async throws -> (Int, String) {
            let serve = try await InProcessServe.start(
                [
                    "--listen", "127.0.0.1:0", "--unsigned", "--allow-private", "--log-format", "off", "--cache-dir",
                    root.appendingPathComponent("cache-\(extra.count)").path,
                ] + extra)
            let response = try await client.send(
                URL(string: "http://127.0.0.1:\(serve.port)/_/rs:fit:20:20/f:png/plain/\(source)")!)
            _ = await serve.stop()
            return (response.status, String(decoding: response.body, as: UTF8.self))
        }
        // Then without --cacert the certificate is refused (verification is never off), with it the image comes
        let (refused, message) = try await status([])
        #expect(refused == 502, "\(message)")
        let (trusted, body) = try await status(["--cacert", nginx.certificatePath])
        #expect(trusted == 200, "\(body)")
        // (the refused handshake never became a request)
        let port = try #require(nginx.http2URL.port)
        #expect(await ImagoTesting.eventually { nginx.requestCount(port: port) == 1 })
    }

    @Test(.timeLimit(.minutes(1)))
    func inProcessServeAnswersSignedRequestsAndLogsRedactedSources() async throws {
        let origin = try LoopbackServer()
        defer { origin.stop() }
        origin.setRoute("/a.jpg", .bytes(try ServerTestImages.jpeg(), contentType: "image/jpeg"))
        let directory = Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = "0123456789abcdef"
        let salt = "fedcba9876543210"
        let serve = try await InProcessServe.start([
            "--listen", "127.0.0.1:0", "--key", key, "--salt", salt, "--allow-private", "--cache-dir", directory.path,
            "--log-format", "json",
        ])
        let output = serve.output
        // A source with a query must be percent-encoded in a plain URL, as in imgproxy
        let source = origin.url(for: "/a.jpg").absoluteString + "?token=s3cret"
        let rest = "/rs:fit:32:32/plain/" + (source.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
        let signature = try URLSigner(keyHex: key, saltHex: salt).signature(for: rest)
        let client = TestHTTPClient()
        let response = try await client.send(URL(string: "http://127.0.0.1:\(serve.port)/\(signature)\(rest)")!)
        #expect(response.status == 200)
        let unsigned = try await client.send(URL(string: "http://127.0.0.1:\(serve.port)/_\(rest)")!)
        #expect(unsigned.status == 403)
        #expect(await serve.stop() == 0)
        let lines = output.stdout.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines.first?.contains("\"status\":200") == true)
        #expect(!output.stdout.contains("s3cret") && output.stdout.contains("token=<redacted>"))
        // The output went to the disk cache under --cache-dir
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("outputs").path))
    }

    /// Every deployment option of this stop, given on the command line, reaches the running proxy.
    @Test(.timeLimit(.minutes(1)))
    func theDeploymentOptionsReachTheRunningProxy() async throws {
        let origin = try LoopbackServer()
        defer { origin.stop() }
        let jpeg = try ServerTestImages.jpeg()
        let gif = try serverCorpus("gif/samples/moon_impact.gif")
        let modified = Date(timeIntervalSince1970: 1_700_000_000)
        origin.setRoute(
            "/a.jpg",
            .bytes(jpeg, contentType: "image/jpeg").withLastModified(modified).withCacheControl("max-age=300"))
        origin.setRoute("/anim.gif", .bytes(gif, contentType: "image/gif"))
        let directory = Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let files = directory.appendingPathComponent("files")
        try FileManager.default.createDirectory(at: files, withIntermediateDirectories: true)
        try jpeg.write(to: files.appendingPathComponent("b.jpg"))
        let placeholder = directory.appendingPathComponent("placeholder.png")
        try ImageEncoderRegistry.makeDefault().encode(try PixelBuffer(width: 8, height: 4), as: .png).write(
            to: placeholder)
        let serve = try await InProcessServe.start([
            "--listen", "127.0.0.1:0", "--unsigned", "--allow-private", "--cache-dir",
            directory.appendingPathComponent("cache").path, "--log-format", "off", "--path-prefix", "/img",
            "--allow-origin", "*", "--secret", "tok", "--fallback-image", placeholder.path, "--fallback-status", "404",
            "--only-presets", "--preset", "thumb=rs:fit:20:20", "--preset", "pass=skp:gif", "--max-animation-frames",
            "50", "--local-root", files.path, "--allow-source", "http://127.0.0.1:*/", "--allow-source", "local:///",
            "--use-last-modified", "--cache-control-passthrough",
        ])
        let base = "http://127.0.0.1:\(serve.port)/img/_/"
        let client = TestHTTPClient()
        func get(
            _ rest: String, _ headers: [String: String] = [:]
        ) async throws -> (
            status: Int, headers: [String: String], body: Data
        ) {
            try await client.send(
                URL(string: base + rest)!, headers: headers.merging(["Authorization": "Bearer tok"]) { a, _ in a })
        }

        let thumb = try await get("thumb/plain/" + origin.url(for: "/a.jpg").absoluteString + "@png")
        #expect(thumb.status == 200 && thumb.headers["access-control-allow-origin"] == "*")
        #expect(try ServerTestImages.decode(thumb.body).size == PixelSize(width: 20, height: 10))
        #expect(thumb.headers["last-modified"] == HTTPDateParser.imfFixdate(from: modified))
        let maxAge = thumb.headers["cache-control"]?.split(separator: "=").last.flatMap { Int($0) }
        #expect(maxAge.map { (290...300).contains($0) } == true, "\(thumb.headers)")
        let noToken = try await client.send(
            URL(string: base + "thumb/plain/" + origin.url(for: "/a.jpg").absoluteString)!)
        #expect(noToken.status == 403)
        let gone = try await get("thumb/plain/" + origin.url(for: "/gone.jpg").absoluteString + "@png")
        #expect(gone.status == 404 && gone.headers["content-type"] == "image/png")
        #expect(try ServerTestImages.decode(gone.body).size == PixelSize(width: 8, height: 4))  // never enlarged
        let local = try await get("thumb/plain/local:///b.jpg@png")
        #expect(local.status == 200)
        let animated = try await get(
            "thumb/plain/" + origin.url(for: "/anim.gif").absoluteString, ["Accept": "image/webp"])
        #expect(animated.headers["content-type"] == "image/webp")
        #expect(try ImageDecoderRegistry.makeDefault().decode(animated.body).frameCount > 1)
        let passed = try await get("pass/plain/" + origin.url(for: "/anim.gif").absoluteString)
        #expect(passed.status == 200 && passed.body == gif)
        let options = try await get("rs:fit:30:30/plain/" + origin.url(for: "/a.jpg").absoluteString)
        #expect(options.status == 400)  // presets only
        let health = try await client.send(URL(string: "http://127.0.0.1:\(serve.port)/healthz")!)
        #expect(health.status == 200)
        #expect(await serve.stop() == 0)
    }

    @Test(.timeLimit(.minutes(1)))
    func sigtermFinishesRequestsInFlightAndExitsZero() async throws {
        let executable = try #require(imagoExecutable(), "build the imago executable first (swift build)")
        let origin = try LoopbackServer()
        defer { origin.stop() }
        origin.setRoute("/a.jpg", .bytes(try ServerTestImages.jpeg(), contentType: "image/jpeg"))
        origin.suspend("/a.jpg")
        let directory = Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let serve = try ServeProcess(
            executable, ["--listen", "127.0.0.1:0", "--unsigned", "--allow-private"], in: directory)
        let process = serve.process
        defer { serve.terminate() }
        let port = try #require(await serve.listeningPort())
        let base = "http://127.0.0.1:\(port)"
        let client = TestHTTPClient()
        // Given five different requests waiting on the origin
        let requests = Task {
            try await withThrowingTaskGroup(of: Int.self) { group in
                for width in 20..<25 {
                    let url = URL(string: base + "/_/w:\(width)/plain/" + origin.url(for: "/a.jpg").absoluteString)!
                    group.addTask { try await client.send(url).status }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
        }
        #expect(
            await ImagoTesting.eventually(timeout: .seconds(20)) {
                origin.suspendedRequestCount(for: "/a.jpg") >= 1
            })
        var inFlight = 0.0
        for _ in 0..<200 where inFlight < 6 {
            let text = String(decoding: try await client.send(URL(string: base + "/metrics")!).body, as: UTF8.self)
            inFlight = prometheusSamples(text)["imago_serve_requests_in_flight"] ?? 0
        }
        #expect(inFlight == 6)  // the five and this /metrics request
        // When SIGTERM arrives, then the origin answers
        kill(process.processIdentifier, SIGTERM)
        #expect(
            await ImagoTesting.eventually { serve.stderr.contains("stopping") })
        origin.resume("/a.jpg")
        // Then every request in flight completes and the process exits 0
        let statuses = try await requests.value
        #expect(statuses == [200, 200, 200, 200, 200])
        #expect(await ImagoTesting.eventually(timeout: .seconds(15)) { !process.isRunning })
        #expect(process.terminationReason == .exit && process.terminationStatus == 0)
    }

    /// A decoder used to write "colour profile … ignored" to standard error with `FileHandle`, which traps on
    /// `EPIPE`: with serve's stderr a pipe whose reader had gone, any client could end the server by asking for
    /// an image whose ICC profile is unusable.
    @Test(.timeLimit(.minutes(1)))
    func aClosedStandardErrorAndABadColourProfileDoNotEndTheServer() async throws {
        let executable = try #require(imagoExecutable(), "build the imago executable first (swift build)")
        let directory = Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let item = SharedCorpus.item("icc/pillow-icc-after-SOF.jpg")  // its ICC segments are out of sequence
        if let missing = item.missing { Issue.record(Comment(rawValue: missing)) }
        let origin = try LoopbackServer()
        defer { origin.stop() }
        origin.setRoute("/bad.jpg", .bytes(try Data(contentsOf: item.url), contentType: "image/jpeg"))
        // Given imago serve whose standard error is a pipe with no reader left
        let errors = Pipe()
        try errors.fileHandleForReading.close()
        let port = try LoopbackPort.free()
        let serve = try ServeProcess(
            executable, ["--listen", "127.0.0.1:\(port)", "--unsigned", "--allow-private"], in: directory,
            standardError: errors.fileHandleForWriting)
        try errors.fileHandleForWriting.close()
        defer { serve.terminate() }
        let client = TestHTTPClient()
        let health = URL(string: "http://127.0.0.1:\(port)/healthz")!
        var started = false
        for _ in 0..<200 where !started {
            started = (try? await client.send(health).status) == 200
            if !started { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(started)
        // When the image is asked for, twice (the second from the caches)
        let path = "/_/w:40/plain/" + origin.url(for: "/bad.jpg").absoluteString
        for _ in 0..<2 {
            let response = try await client.send(URL(string: "http://127.0.0.1:\(port)\(path)")!)
            #expect(response.status == 200)
        }
        // Then it is served and the server goes on
        #expect(try await client.send(health).status == 200)
        #expect(serve.process.isRunning)
    }

    @Test(.timeLimit(.minutes(1)))
    func anAccessLogNobodyReadsCostsDroppedLinesNotTheServer() async throws {
        let executable = try #require(imagoExecutable(), "build the imago executable first (swift build)")
        let directory = Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        // Given imago serve whose standard output is a pipe nobody reads (64 KiB of room), holding 8 KiB of lines
        let output = Pipe()
        let serve = try ServeProcess(
            executable, ["--listen", "127.0.0.1:0", "--unsigned", "--log-buffer", "8K"], in: directory,
            standardOutput: output.fileHandleForWriting)
        try output.fileHandleForWriting.close()
        let process = serve.process
        defer { serve.terminate() }
        let port = try #require(await serve.listeningPort())
        let client = TestHTTPClient()
        // When 1,500 requests are answered (each line ~150 bytes: about three times what the pipe and buffer hold)
        let health = URL(string: "http://127.0.0.1:\(port)/healthz")!
        var statuses = [Int: Int]()
        for _ in 0..<1_500 { statuses[try await client.send(health).status, default: 0] += 1 }
        // Then every one is answered, and the lines that did not fit are counted
        #expect(statuses == [200: 1_500])
        let metrics = try await client.send(URL(string: "http://127.0.0.1:\(port)/metrics")!)
        let dropped = Int(
            prometheusSamples(String(decoding: metrics.body, as: UTF8.self))[
                "imago_serve_log_records_dropped_total{sink=\"stdout\"}"] ?? -1)
        #expect(dropped > 500, "\(dropped)")
        // When the reader reads again and the server stops: every line not dropped arrives whole, and it exits 0
        let reading = Task.detached { output.fileHandleForReading.readDataToEndOfFile() }
        kill(process.processIdentifier, SIGTERM)
        let lines = String(decoding: await reading.value, as: UTF8.self).split(separator: "\n")
        #expect(await ImagoTesting.eventually(timeout: .seconds(15)) { !process.isRunning })
        #expect(process.terminationReason == .exit && process.terminationStatus == 0)
        let records = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(records.count == lines.count && records.allSatisfy { $0["route"] as? String != nil })
        // The 1,500 and the /metrics request, whose own line may have been dropped after the count was read
        #expect((1_500...1_501).contains(lines.count + dropped), "\(lines.count) + \(dropped)")
        #expect(try Self.parseUnsigned([]).logBuffer == 1 << 20)
        #expect(try Self.parseUnsigned(["--log-buffer", "2M"]).logBuffer == 2 << 20)
        #expect(throws: UsageError.self) { try Self.parseUnsigned(["--log-buffer", "lots"]) }
    }

    @Test(.timeLimit(.minutes(1)))
    func listensOnAUnixSocketAndRemovesItOnSIGTERM() async throws {
        let executable = try #require(imagoExecutable(), "build the imago executable first (swift build)")
        let origin = try LoopbackServer()
        defer { origin.stop() }
        origin.setRoute("/a.jpg", .bytes(try ServerTestImages.jpeg(), contentType: "image/jpeg"))
        let directory = Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let socketPath = directory.appendingPathComponent("imago.sock").path
        let serve = try ServeProcess(
            executable, ["--listen", "unix:" + socketPath, "--unsigned", "--allow-private", "--log-format", "off"],
            in: directory)
        let process = serve.process
        defer { serve.terminate() }
        #expect(await ImagoTesting.eventually { serve.stderr.contains("listening on unix:\(socketPath)") })
        // An image through the socket, as nginx's proxy_pass http://unix:… sends it
        let connection = try RawHTTPClient(socketPath: socketPath)
        let path = "/_/rs:fit:20:20/f:png/plain/" + origin.url(for: "/a.jpg").absoluteString
        connection.send("GET \(path) HTTP/1.1\r\nHost: images\r\nConnection: close\r\n\r\n")
        let (text, closed) = await connection.readUntilClosed(waitingAtMost: .seconds(10))
        #expect(
            closed && text.hasPrefix("HTTP/1.1 200") && text.contains("Content-Type: image/png"), "\(text.prefix(300))")
        #expect(origin.requestCount(for: "/a.jpg") == 1)
        // SIGTERM: exit 0, the socket file gone
        kill(process.processIdentifier, SIGTERM)
        #expect(await ImagoTesting.eventually(timeout: .seconds(15)) { !process.isRunning })
        #expect(process.terminationReason == .exit && process.terminationStatus == 0)
        #expect(!FileManager.default.fileExists(atPath: socketPath))
        // Usage errors: an empty path, and --reuse-port (one listener per socket file)
        #expect(throws: UsageError.self) { try Self.parseUnsigned(["--listen", "unix:"]) }
        #expect(throws: UsageError.self) { try Self.parseUnsigned(["--listen", "unix:/tmp/x.sock", "--reuse-port"]) }
        #expect(try Self.parseUnsigned(["--listen", "unix:/run/imago.sock"]).socketPath == "/run/imago.sock")
    }

    @Test(.timeLimit(.minutes(1)))
    func theGracefulStopTimeoutBoundsTheWaitForRequestsInFlight() async throws {
        let origin = try LoopbackServer()
        defer { origin.stop() }
        origin.setRoute("/a.jpg", .bytes(try ServerTestImages.jpeg(), contentType: "image/jpeg"))
        origin.suspend("/a.jpg")
        let directory = Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let serve = try await InProcessServe.start([
            "--listen", "127.0.0.1:0", "--unsigned", "--allow-private", "--cache-dir", directory.path,
            "--log-format", "off", "--graceful-stop-timeout", "1",
        ])
        let url = URL(
            string: "http://127.0.0.1:\(serve.port)/_/w:20/plain/" + origin.url(for: "/a.jpg").absoluteString)!
        let request = Task { try await TestHTTPClient().send(url).status }
        #expect(await origin.waitUntil { $0.suspendedRequestCount(for: "/a.jpg") == 1 })
        // Stopped while the origin never answers: after about a second the request is answered 503 and it exits 0
        let clock = ContinuousClock()
        let started = clock.now
        #expect(await serve.stop() == 0)
        let took = clock.now - started
        #expect(took >= .milliseconds(900) && took < .seconds(8), "\(took)")
        #expect(try await request.value == 503)
        #expect(serve.output.stderr.contains("still in flight after 1 s"))
        origin.resume("/a.jpg")
    }

    /// Once `ServeCommand.makeSourceLoader` returns the libcurl loader with its `.publicOnly` address policy, a
    /// source that redirects to a loopback address is refused (403) without --allow-private.
    @Test(.enabled(if: ServeCommand.sourceLoaderRefusesPrivateAddresses), .timeLimit(.minutes(1)))
    func redirectToLoopbackIsRefusedWithoutAllowPrivate() async throws {
        let origin = try LoopbackServer()
        defer { origin.stop() }
        origin.setRoute("/a.jpg", .bytes(try ServerTestImages.jpeg(), contentType: "image/jpeg"))
        origin.setRoute("/hop", .redirect(to: origin.url(for: "/a.jpg").absoluteString))
        // The loader as `imago serve` makes it without --allow-private, behind a proxy whose literal-host check
        // lets the loopback origin through, so that the loader's address policy is what refuses (if its allow list
        // can admit the first hop, admit it here).
        let proxy = try Self.proxyAsServeMakesIt(
            ["--unsigned"], sourcePolicy: SourcePolicy(allowsPrivateAddresses: true))
        let response = await proxy.respond(
            to: ServerRequest(method: "GET", path: "/_/plain/" + origin.url(for: "/hop").absoluteString))
        #expect(response.status == 403)
        #expect(origin.requestCount(for: "/a.jpg") == 0)
    }

    /// The in-process proxy with the source loader and source policy `imago serve` makes from `arguments`, or
    /// with `sourcePolicy` instead of that policy when given.
    static func proxyAsServeMakesIt(_ arguments: [String], sourcePolicy: SourcePolicy? = nil) throws -> ImageProxy {
        let options = try ServeCommand.parse(
            parseArguments(arguments, options: ServeCommand.command.options), environment: [:])
        var configuration = ImageProxy.Configuration(dataLoader: ServeCommand.makeSourceLoader(options))
        configuration.allowsUnsigned = options.allowsUnsigned
        configuration.sourcePolicy = sourcePolicy ?? options.sourcePolicy
        return ImageProxy(configuration: configuration)
    }

    /// `imago serve` judges a source by its bytes, as imgproxy does: a JPEG its origin labels `text/plain` (or with
    /// no useful label) is rendered, where the library's default loader refuses the label before the body; a page
    /// that is no image is still a 415, once its bytes are read.
    @Test(.timeLimit(.minutes(1)))
    func aSourceIsJudgedByItsBytesNotItsLabel() async throws {
        let origin = try LoopbackServer()
        defer { origin.stop() }
        let jpeg = try ServerTestImages.jpeg()
        origin.setRoute("/plain.jpg", .bytes(jpeg, contentType: "text/plain"))
        origin.setRoute("/json.jpg", .bytes(jpeg, contentType: "application/json; charset=utf-8"))
        origin.setRoute("/page", .bytes(Data("<html><body>Sign in</body></html>".utf8), contentType: "text/html"))
        let proxy = try Self.proxyAsServeMakesIt(["--unsigned", "--allow-private"])
        func respond(_ route: String) async -> ServerResponse {
            await proxy.respond(
                to: ServerRequest(
                    method: "GET", path: "/_/w:20/plain/" + origin.url(for: route).absoluteString + "@png"))
        }
        for route in ["/plain.jpg", "/json.jpg"] {
            let response = await respond(route)
            #expect(response.status == 200, "\(route): \(String(decoding: response.body, as: UTF8.self))")
            #expect(try ServerTestImages.decode(response.body).size.width == 20, "\(route)")
        }
        let page = await respond("/page")
        #expect(page.status == 415, "\(String(decoding: page.body, as: UTF8.self))")
        // The library's own default still refuses the label, before the body
        var configuration = ImageProxy.Configuration()
        configuration.allowsUnsigned = true
        configuration.sourcePolicy = SourcePolicy(allowsPrivateAddresses: true)
        let library = ImageProxy(configuration: configuration)
        let refused = await library.respond(
            to: ServerRequest(method: "GET", path: "/_/w:20/plain/" + origin.url(for: "/plain.jpg").absoluteString))
        #expect(refused.status == 415)
        #expect(String(decoding: refused.body, as: UTF8.self).contains(#"content type 'text\/plain'"#))
    }

    /// A source that redirects to a URL libcurl cannot parse is the origin's fault (502 naming it), fetched once a
    /// request: not retried (the proxy keeps no failure cache: each request reports its own). A source host no
    /// resolver takes is the client's fault (400), and nothing is fetched.
    @Test(.timeLimit(.minutes(1)))
    func aRedirectThatCannotBeFollowedIsTheOriginsFaultAndIsNotRetried() async throws {
        let origin = try LoopbackServer()
        defer { origin.stop() }
        origin.setRoute("/hop", .redirect(to: "http://[::1/x.jpg"))
        let proxy = try Self.proxyAsServeMakesIt(["--unsigned", "--allow-private"])
        func respond(_ source: String) async -> (status: Int, text: String) {
            let response = await proxy.respond(to: ServerRequest(method: "GET", path: "/_/w:20/plain/" + source))
            return (response.status, String(decoding: response.body, as: UTF8.self))
        }
        let first = await respond(origin.url(for: "/hop").absoluteString)
        #expect(first.status == 502)
        #expect(first.text.contains("redirected to a URL that cannot be requested"), "\(first.text)")
        #expect(await respond(origin.url(for: "/hop").absoluteString).status == 502)
        #expect(origin.requestCount(for: "/hop") == 2)  // --retries 2 by default: as a broken connection, 6
        let badHost = await respond("http://a%2500.example/x.jpg")
        #expect(badHost.status == 400)
        #expect(badHost.text.contains("the host a%00.example holds %00"), "\(badHost.text)")
        #expect(origin.totalRequestCount == 2)
    }

    /// An origin whose certificate does not verify is a 502 naming the TLS refusal, after one handshake: as a
    /// broken connection it was retried twice (`--retries 2` by default), three handshakes a request.
    @Test(.timeLimit(.minutes(1)))
    func anOriginWhoseCertificateDoesNotVerifyIsA502AfterOneHandshake() async throws {
        let origin = try await SelfSignedTLSServer()
        defer { origin.stop() }
        let proxy = try Self.proxyAsServeMakesIt(["--unsigned", "--allow-private"])
        let response = await proxy.respond(
            to: ServerRequest(method: "GET", path: "/_/w:20/plain/https://127.0.0.1:\(origin.port)/a.jpg"))
        let text = String(decoding: response.body, as: UTF8.self)
        #expect(response.status == 502)
        #expect(text.contains("TLS connection was refused") && text.contains("certificate"), "\(text)")
        func handshakes() -> Int { origin.log.components(separatedBy: "unknown ca").count - 1 }
        #expect(await ImagoTesting.eventually { handshakes() >= 1 })
        try await Task.sleep(for: .seconds(1))  // a retry would have come by now (its first back-off is shorter)
        #expect(handshakes() == 1, "\(origin.log)")
    }

    /// `--allow-network`: an intranet range reachable while the metadata address (link-local) stays refused, at
    /// the literal-host check and at the loader's connect-time check after a redirect.
    @Test(.timeLimit(.minutes(1)))
    func anAllowedNetworkLetsItsOriginsThroughAndNothingElse() async throws {
        let origin = try LoopbackServer()
        defer { origin.stop() }
        origin.setRoute("/a.jpg", .bytes(try ServerTestImages.jpeg(), contentType: "image/jpeg"))
        origin.setRoute("/metadata", .redirect(to: "http://169.254.169.254/latest/meta-data/"))
        origin.setRoute("/other", .redirect(to: "http://10.255.255.1/x.jpg"))
        let options = try ServeCommand.parse(
            parseArguments(["--unsigned", "--allow-network", "127.0.0.0/8"], options: ServeCommand.command.options),
            environment: [:])
        #expect(options.sourcePolicy.allowedNetworks == [IPNetwork("127.0.0.0/8")])
        var configuration = ImageProxy.Configuration(dataLoader: ServeCommand.makeSourceLoader(options))
        configuration.allowsUnsigned = true
        configuration.sourcePolicy = options.sourcePolicy
        let proxy = ImageProxy(configuration: configuration)
        func status(_ source: String) async -> Int {
            await proxy.respond(to: ServerRequest(method: "GET", path: "/_/w:20/plain/" + source)).status
        }
        #expect(await status(origin.url(for: "/a.jpg").absoluteString) == 200)
        #expect(await status(origin.url(for: "/metadata").absoluteString) == 403)
        #expect(await status(origin.url(for: "/other").absoluteString) == 403)
        #expect(await status("http://169.254.169.254/latest/meta-data/") == 403)
        #expect(await status("http://10.0.0.1/a.jpg") == 403)
        #expect(await status("http://[::1]/a.jpg") == 403)
        #expect(origin.requestCount(for: "/a.jpg") == 1)
        // Without it, the origin itself is refused
        let strict = try ServeCommand.parse(
            parseArguments(["--unsigned"], options: ServeCommand.command.options), environment: [:])
        #expect(throws: ProxyError.self) { try strict.sourcePolicy.check(origin.url(for: "/a.jpg")) }
        #expect(throws: UsageError.self) {
            try ServeCommand.parse(
                parseArguments(
                    ["--unsigned", "--allow-network", "10.0.0.0/33"], options: ServeCommand.command.options),
                environment: [:])
        }
    }

    /// imgproxy's `IMGPROXY_PROMETHEUS_BIND`, `IMGPROXY_PROMETHEUS_NAMESPACE` and `IMGPROXY_HEALTH_CHECK_PATH`: the
    /// metrics on a listener of their own (gone from the public port) under another namespace, and another
    /// health-check path.
    @Test(.timeLimit(.minutes(1)))
    func metricsOnTheirOwnListenerAndAnotherHealthPath() async throws {
        let directory = Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let serve = try await InProcessServe.start([
            "--listen", "127.0.0.1:0", "--unsigned", "--cache-dir", directory.path, "--log-format", "off",
            "--metrics-listen", "127.0.0.1:0", "--health-check-path", "/ping", "--secret", "token",
            "--metrics-namespace", "images",
        ])
        let announced = try #require(
            await ImagoTesting.eventually { serve.output.stderr.contains("/metrics") } ? serve.output.stderr : nil)
        let line = try #require(announced.split(separator: "\n").first { $0.contains("metrics on") })
        let metricsPort = try #require(
            line.split(separator: ":").last.flatMap { UInt16($0.split(separator: "/").first ?? "") })
        let client = TestHTTPClient()
        let main = "http://127.0.0.1:\(serve.port)"
        let bearer = ["Authorization": "Bearer token"]
        #expect(try await client.send(URL(string: main + "/metrics")!, headers: bearer).status == 404)
        #expect(try await client.send(URL(string: main + "/ping")!).status == 200, "open without the secret")
        #expect(try await client.send(URL(string: main + "/pong")!).status == 403)
        // A request line over libmicrohttpd's limit, answered by it and not by the proxy, is counted too
        let long = try RawHTTPClient(port: serve.port)
        long.send("GET /" + String(repeating: "a", count: 20_000) + " HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(await long.readUntilClosed(waitingAtMost: .seconds(10)).text.hasPrefix("HTTP/1.1 414"))
        let metrics = try await client.send(URL(string: "http://127.0.0.1:\(metricsPort)/metrics")!)
        #expect(metrics.status == 200)
        let text = String(decoding: metrics.body, as: UTF8.self)
        let samples = prometheusSamples(text)
        #expect(samples["images_requests_total{status=\"200\"}"] == 1, "the /ping")
        #expect(samples["images_requests_total{status=\"414\"}"] == 1)
        let families = text.split(separator: "\n").filter { $0.hasPrefix("# TYPE ") }
        #expect(families.count == 13 && families.allSatisfy { $0.hasPrefix("# TYPE images_") }, "\(families)")
        #expect(try await client.send(URL(string: "http://127.0.0.1:\(metricsPort)/_/plain/x")!).status == 404)
        #expect(await serve.stop() == 0)
        // Bad values are usage errors
        for bad in [
            ["--metrics-listen", "9100"], ["--health-check-path", "ping"], ["--health-check-path", "/a b"],
            ["--metrics-namespace", "9lives"], ["--metrics-namespace", "my-app"], ["--metrics-namespace", "é"],
        ] {
            #expect(throws: UsageError.self, "\(bad)") { try Self.parseUnsigned(bad) }
        }
        #expect(throws: UsageError.self) {
            try Self.parseUnsigned(["--listen", "127.0.0.1:9000", "--metrics-listen", "127.0.0.1:9000"])
        }
        #expect(try Self.parseUnsigned(["--reuse-port"]).reusesPort)
        #expect(try Self.parseUnsigned([]).metricsNamespace == "imago_serve")
        #expect(try Self.parseUnsigned(["--metrics-namespace", ""]).metricsNamespace == "")
        #expect(try Self.parseUnsigned(["--metrics-namespace", "_a:b9"]).metricsNamespace == "_a:b9")
    }

    @Test func logFormatOffTurnsTheAccessLogOff() throws {
        func format(_ value: String) throws -> ServeCommand.LogFormat {
            try ServeCommand.parse(
                parseArguments(["--unsigned", "--log-format", value], options: ServeCommand.command.options),
                environment: [:]
            ).logFormat
        }
        #expect(try format("off") == .off && format("text") == .text && format("json") == .json)
        #expect(throws: UsageError.self) { try format("none") }
    }

    /// A datagram socket bound on loopback (`AF_INET`, port chosen by the kernel) or at a Unix path, for syslog's
    /// lines; `receive()` waits up to 5 s for one.
    final class DatagramSink {
        let fd: Int32
        var port: UInt16 = 0

        init(unixPath: String? = nil) throws {
            if let unixPath {
                fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
                var address = sockaddr_un()
                address.sun_family = sa_family_t(AF_UNIX)
                withUnsafeMutableBytes(of: &address.sun_path) { raw in
                    raw.copyBytes(from: Array(unixPath.utf8) + [0])
                }
                let bound = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                    }
                }
                try #require(bound == 0)
            } else {
                fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
                port = UInt16(try #require(LoopbackPort.bindToLoopback(fd)))
            }
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }

        deinit { close(fd) }

        func receive() -> String? {
            var buffer = [UInt8](repeating: 0, count: 65536)
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            return count > 0 ? String(decoding: buffer[..<count], as: UTF8.self) : nil
        }
    }

    /// imgproxy's `IMGPROXY_SYSLOG_*`: access lines at or above the syslog level go to a collector (UDP) with their
    /// severity and tag, besides stdout; the local daemon's form over a Unix socket; bad settings refused.
    @Test(.timeLimit(.minutes(1)))
    func accessLinesGoToSyslogToo() async throws {
        let origin = try LoopbackServer()
        defer { origin.stop() }
        origin.setRoute("/a.jpg", .bytes(try ServerTestImages.jpeg(), contentType: "image/jpeg"))
        let directory = Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let collector = try DatagramSink()
        let serve = try await InProcessServe.start([
            "--listen", "127.0.0.1:0", "--unsigned", "--allow-private", "--cache-dir", directory.path,
            "--syslog", "--syslog-network", "udp", "--syslog-address", "127.0.0.1:\(collector.port)",
            "--syslog-level", "warn", "--syslog-tag", "imago-test",
        ])
        let client = TestHTTPClient()
        let base = "http://127.0.0.1:\(serve.port)/_/rs:fit:32:32/plain/"
        #expect(try await client.send(URL(string: base + origin.url(for: "/a.jpg").absoluteString)!).status == 200)
        #expect(try await client.send(URL(string: base + origin.url(for: "/none.jpg").absoluteString)!).status == 404)
        let line = try #require(collector.receive())
        // user.warning is <12>; RFC 3339 time, the host, the tag and the process
        #expect(
            line.hasPrefix("<12>2") && line.contains(" imago-test[\(getpid())]: {") && line.hasSuffix("}\n"), "\(line)")
        #expect(line.contains("\"status\":404") && line.contains("\"level\":\"warn\""))
        #expect(await serve.stop() == 0)
        #expect(serve.output.stdout.split(separator: "\n").count == 2, "stdout keeps every line at its own level")
        // The 200 never went to syslog
        var quick = timeval(tv_sec: 0, tv_usec: 200_000)
        setsockopt(collector.fd, SOL_SOCKET, SO_RCVTIMEO, &quick, socklen_t(MemoryLayout<timeval>.size))
        #expect(collector.receive() == nil)

        // The local daemon's form, over a Unix datagram socket
        let path = directory.appendingPathComponent("log.sock").path
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let daemon = try DatagramSink(unixPath: path)
        let writer = try SyslogWriter(destination: .unix(path: path), tag: "imago")
        writer.write("hello\nthere", severity: .info)
        let local = try #require(daemon.receive())
        let form = try Regex(#"^<14>[A-Z][a-z]{2} [ 123]\d \d\d:\d\d:\d\d imago\[\d+\]: hello there$"#)
        #expect(try form.wholeMatch(in: local) != nil, "\(local)")
        #expect(writer.droppedCount == 0)

        func parse(_ extra: [String]) throws -> ServeCommand.Options {
            try ServeCommand.parse(
                parseArguments(["--unsigned"] + extra, options: ServeCommand.command.options), environment: [:])
        }
        #expect(try parse(["--syslog"]).syslog?.destination == .local)
        #expect(
            try parse(["--syslog", "--syslog-address", "/run/log.sock"]).syslog?.destination
                == .unix(path: "/run/log.sock"))
        #expect(
            try parse(["--syslog", "--syslog-network", "tcp", "--syslog-address", "[::1]:514"]).syslog?.destination
                == .tcp(host: "::1", port: 514))
        for bad in [
            ["--syslog-tag", "x"], ["--syslog", "--syslog-network", "udp"], ["--syslog", "--syslog-network", "sctp"],
            ["--syslog", "--syslog-network", "udp", "--syslog-address", "host"],
            ["--syslog", "--syslog-level", "loud"],
            ["--syslog", "--syslog-tag", "a b"],
        ] {
            #expect(throws: UsageError.self, "\(bad)") { try parse(bad) }
        }
        // A destination that cannot be reached fails at start
        #expect(throws: UsageError.self) {
            try SyslogWriter(destination: .unix(path: directory.path + "/none"), tag: "x")
        }
    }

    /// imgproxy's `IMGPROXY_SENTRY_*`: a server or origin failure (5xx) becomes one Sentry event, sent as an
    /// envelope with the DSN's key; a client's mistake (4xx) and a success are not reported.
    @Test(.timeLimit(.minutes(1)))
    func serverFailuresAreReportedToSentry() async throws {
        let origin = try LoopbackServer()
        defer { origin.stop() }
        origin.setRoute("/a.jpg", .bytes(try ServerTestImages.jpeg(), contentType: "image/jpeg"))
        let sentry = try LoopbackServer()
        defer { sentry.stop() }
        let received = Locked<[LoopbackServer.Request]>([])
        sentry.setRoute(
            "/relay/api/42/envelope/",
            .handler { request in
                received.withLock { $0.append(request) }
                return LoopbackServer.Response(status: 200, body: Data(#"{"id":"x"}"#.utf8))
            })
        let directory = Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let port = sentry.url(for: "/").port ?? 0
        let serve = try await InProcessServe.start([
            "--listen", "127.0.0.1:0", "--unsigned", "--allow-private", "--cache-dir", directory.path,
            "--log-format", "off", "--sentry-dsn", "http://pub1ickey@127.0.0.1:\(port)/relay/42",
            "--sentry-environment", "staging",
        ])
        let client = TestHTTPClient()
        let base = "http://127.0.0.1:\(serve.port)/_/rs:fit:32:32/plain/"
        #expect(try await client.send(URL(string: base + origin.url(for: "/a.jpg").absoluteString)!).status == 200)
        #expect(try await client.send(URL(string: base + origin.url(for: "/none.jpg").absoluteString)!).status == 404)
        #expect(try await client.send(URL(string: base + "http://127.0.0.1:9/a.jpg?token=s3cret")!).status == 502)
        #expect(await ImagoTesting.eventually { received.value.count == 1 })
        try await Task.sleep(for: .milliseconds(300))
        #expect(await serve.stop() == 0)
        let reports = received.value
        try #require(reports.count == 1, "only the 502")
        let report = reports[0]
        #expect(report.method == "POST" && report.headers["Content-Type"] == "application/x-sentry-envelope")
        #expect(report.headers["X-Sentry-Auth"]?.contains("sentry_key=pub1ickey") == true)
        let lines = String(decoding: report.body, as: UTF8.self).split(separator: "\n").map { Data($0.utf8) }
        try #require(lines.count == 3)
        let item = try #require(try JSONSerialization.jsonObject(with: lines[1]) as? [String: Any])
        #expect(item["type"] as? String == "event" && item["length"] as? Int == lines[2].count)
        let event = try #require(try JSONSerialization.jsonObject(with: lines[2]) as? [String: Any])
        #expect(event["level"] as? String == "error" && event["environment"] as? String == "staging")
        #expect((event["tags"] as? [String: String])?["status"] == "502")
        let url = try #require((event["request"] as? [String: String])?["url"])
        #expect(url.hasPrefix("http://127.0.0.1:9/a.jpg") && !url.contains("s3cret"), "redacted: \(url)")
        #expect(((event["message"] as? [String: String])?["formatted"] ?? "").isEmpty == false)

        // Bounded: with two reports held by a stalled Sentry, a third is dropped, not queued
        let stalled = "/relay/api/43/envelope/"
        sentry.setRoute(stalled, .bytes(Data("{}".utf8), contentType: "application/json"))
        sentry.suspend(stalled)
        let bounded = SentryClient(
            dsn: try #require(SentryClient.DSN("http://k@127.0.0.1:\(port)/relay/43")), maximumInFlight: 2)
        #expect(bounded.capture("one") && bounded.capture("two"))
        #expect(await ImagoTesting.eventually { sentry.suspendedRequestCount(for: stalled) == 2 })
        #expect(!bounded.capture("three") && bounded.droppedCount == 1)
        sentry.resume(stalled)
        #expect(await ImagoTesting.eventually { bounded.deliveredCount == 2 })
        #expect(bounded.capture("four"), "room again once they were sent")

        #expect(
            SentryClient.DSN("https://k@o1.ingest.sentry.io/42")?.envelopeURL.absoluteString
                == "https://o1.ingest.sentry.io/api/42/envelope/")
        for bad in ["https://o1.ingest.sentry.io/42", "https://k@o1.ingest.sentry.io/project", "ftp://k@h/1", "k@h/1"] {
            #expect(SentryClient.DSN(bad) == nil, "\(bad)")
        }
        #expect(throws: UsageError.self) { try Self.parseUnsigned(["--sentry-dsn", "nonsense"]) }
        #expect(throws: UsageError.self) { try Self.parseUnsigned(["--sentry-release", "1.0"]) }
    }

    /// imgproxy's `X-Request-ID` and `client_ip`: the client's (or the load balancer's) request ID is kept, a new
    /// one made otherwise, and both it and the client's address are in the access log.
    @Test(.timeLimit(.minutes(1)))
    func requestIDsAndClientAddressesAreLogged() async throws {
        let origin = try LoopbackServer()
        defer { origin.stop() }
        origin.setRoute("/a.jpg", .bytes(try ServerTestImages.jpeg(), contentType: "image/jpeg"))
        let directory = Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let serve = try await InProcessServe.start([
            "--listen", "127.0.0.1:0", "--unsigned", "--allow-private", "--cache-dir", directory.path,
        ])
        let client = TestHTTPClient()
        let url = URL(
            string: "http://127.0.0.1:\(serve.port)/_/rs:fit:32:32/plain/" + origin.url(for: "/a.jpg").absoluteString)!
        let given = try await client.send(url, headers: ["X-Request-ID": "lb-4f2a_9"])
        let first = try await client.send(url)
        let second = try await client.send(
            url, headers: ["X-Request-ID": "not valid!", "X-Forwarded-For": "203.0.113.9, 10.0.0.1"])
        let missing = try await client.send(URL(string: "http://127.0.0.1:\(serve.port)/_/bad:1/plain/x")!)
        #expect(await serve.stop() == 0)
        #expect(given.headers["x-request-id"] == "lb-4f2a_9")
        let made = [first, second, missing].compactMap { $0.headers["x-request-id"] }
        #expect(made.count == 3 && Set(made).count == 3, "new and distinct: \(made)")
        #expect(made.allSatisfy { $0.count >= 10 && $0 != "not valid!" })
        let lines = serve.output.stdout.split(separator: "\n").map(String.init)
        try #require(lines.count == 4)
        #expect(lines[0].contains("\"request_id\":\"lb-4f2a_9\"") && lines[0].contains("\"client_ip\":\"127.0.0.1\""))
        #expect(lines[1].contains("\"request_id\":\"\(made[0])\""))
        #expect(lines[2].contains("\"client_ip\":\"203.0.113.9\""), "X-Forwarded-For's first entry")
        #expect(lines[3].contains("\"request_id\":\"\(made[2])\"") && lines[3].contains("\"status\":400"))
    }

    /// imgproxy's `IMGPROXY_LOG_LEVEL`: records below the level are not written; each JSON line says its level.
    @Test(.timeLimit(.minutes(1)))
    func theLogLevelLeavesOutLesserRecords() async throws {
        let origin = try LoopbackServer()
        defer { origin.stop() }
        origin.setRoute("/a.jpg", .bytes(try ServerTestImages.jpeg(), contentType: "image/jpeg"))
        let directory = Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        var linesByLevel: [String: [Substring]] = [:]
        for level in ["info", "warn", "error"] {
            let serve = try await InProcessServe.start([
                "--listen", "127.0.0.1:0", "--unsigned", "--allow-private", "--cache-dir", directory.path,
                "--log-level", level, "--timeout", "5",
            ])
            let client = TestHTTPClient()
            let base = "http://127.0.0.1:\(serve.port)/_/rs:fit:32:32/plain/"
            #expect(try await client.send(URL(string: base + origin.url(for: "/a.jpg").absoluteString)!).status == 200)
            #expect(
                try await client.send(URL(string: base + origin.url(for: "/none.jpg").absoluteString)!).status == 404)
            // An origin that refuses connections: 502
            #expect(try await client.send(URL(string: base + "http://127.0.0.1:9/a.jpg")!).status == 502)
            #expect(await serve.stop() == 0)
            linesByLevel[level] = serve.output.stdout.split(separator: "\n")
        }
        func statuses(_ level: String) -> [String] {
            (linesByLevel[level] ?? []).compactMap { line in
                ["200", "404", "502"].first { line.contains("\"status\":\($0)") }
            }
        }
        #expect(statuses("info") == ["200", "404", "502"])
        #expect(statuses("warn") == ["404", "502"])
        #expect(statuses("error") == ["502"])
        let info = linesByLevel["info"] ?? []
        #expect(info.count == 3 && info[0].contains("\"level\":\"info\""))
        #expect(info[1].contains("\"level\":\"warn\"") && info[2].contains("\"level\":\"error\""))
        func level(_ text: String) throws -> AccessLogRecord.Level {
            try ServeCommand.parse(
                parseArguments(["--unsigned", "--log-level", text], options: ServeCommand.command.options),
                environment: [:]
            ).logLevel
        }
        #expect(try level("debug") == .debug && level("warning") == .warn)
        #expect(throws: UsageError.self) { try level("fatal") }
    }

    @Test func mallocTrimIsOffUnlessAsked() throws {
        func interval(_ extra: [String]) throws -> Int? {
            try ServeCommand.parse(
                parseArguments(["--unsigned"] + extra, options: ServeCommand.command.options), environment: [:]
            ).mallocTrimInterval
        }
        #expect(try interval([]) == nil)
        #expect(try interval(["--malloc-trim", "30"]) == 30)
        #expect(throws: UsageError.self) { try interval(["--malloc-trim", "0"]) }
    }

    @Test func presetsAreParsedAndCheckedAtStart() throws {
        func presets(_ extra: [String]) throws -> PresetTable {
            try ServeCommand.parse(
                parseArguments(["--unsigned"] + extra, options: ServeCommand.command.options), environment: [:]
            ).presets
        }
        #expect(try presets([]).names.isEmpty)
        let table = try presets(["--preset", "thumb=rs:fill:64:64/q:70", "--preset", "default=f:webp"])
        #expect(table.names == ["default", "thumb"])
        #expect(throws: UsageError.self) { try presets(["--preset", "bad=nope:1"]) }
        #expect(throws: UsageError.self) { try presets(["--preset", "thumb"]) }
    }

    @Test func keysRotateAndABaseURLIsChecked() throws {
        func parse(_ extra: [String]) throws -> ServeCommand.Options {
            try ServeCommand.parse(parseArguments(extra, options: ServeCommand.command.options), environment: [:])
        }
        let signer = try #require(try parse(["--key", "0011,2233", "--salt", "44,"]).signer)
        let path = "/rs:fit:10:10/plain/http://a.example/i.jpg"
        #expect(signer.isValid(signature: try URLSigner(keyHex: "2233", saltHex: "").signature(for: path), for: path))
        #expect(signer.signature(for: path) == (try URLSigner(keyHex: "0011", saltHex: "44").signature(for: path)))
        #expect(throws: UsageError.self) { try parse(["--key", "0011,2233", "--salt", "44"]) }
        #expect(
            try parse(["--unsigned", "--base-url", "https://img.example/media/"]).baseURL
                == "https://img.example/media/")
        #expect(throws: UsageError.self) { try parse(["--unsigned", "--base-url", "ftp://img.example/"]) }
        #expect(throws: UsageError.self) { try parse(["--unsigned", "--base-url", "images/"]) }
    }

    /// Every option from the environment as IMAGO_NAME (twelve-factor deployments), the command line winning.
    @Test func everyOptionMayComeFromTheEnvironment() throws {
        func parse(_ arguments: [String], _ environment: [String: String]) throws -> ServeCommand.Options {
            try ServeCommand.parse(
                parseArguments(arguments, options: ServeCommand.command.options), environment: environment)
        }
        let options = try parse(
            [],
            [
                "IMAGO_UNSIGNED": "true", "IMAGO_LISTEN": "0.0.0.0:9090", "IMAGO_MAX_PIXELS": "1000",
                "IMAGO_ALLOW_HOST": "a.example, *.b.example,", "IMAGO_SET_CANONICAL_HEADER": "1",
                "IMAGO_USE_LAST_MODIFIED": "no", "IMAGO_PRESET": "thumb=rs:fit:20:20,small=s:8:8",
                "IMAGO_MAX_REDIRECTS": "3", "IMAGO_CACHE_DIR": "/tmp/imago-env", "IMAGO_HELP": "1",
                "IMAGO_QUALITY": "",  // empty: ignored
            ])
        #expect(options.allowsUnsigned && options.host == "0.0.0.0" && options.port == 9090)
        #expect(options.pixelLimit == 1000 && options.setsCanonicalHeader && !options.usesLastModified)
        #expect(options.sourcePolicy.allowedHosts == ["a.example", "*.b.example"])
        #expect(options.presets.names == ["small", "thumb"])
        #expect(options.network.maximumRedirects == 3 && options.cacheDirectory.path == "/tmp/imago-env")
        // Presets written with commas (`--arguments-separator ,`) are separated by another text, as imgproxy's
        // IMGPROXY_PRESETS_SEPARATOR allows, from the environment or the command line
        for (arguments, environment) in [
            ([], ["IMAGO_PRESETS_SEPARATOR": ";"]), (["--presets-separator", ";"], ["IMAGO_PRESETS_SEPARATOR": "|"]),
        ] {
            let separated = try parse(
                arguments + ["--unsigned", "--arguments-separator", ","],
                environment.merging(["IMAGO_PRESET": "thumb=rs,fit,20,20;small=s,8,8"]) { $1 })
            #expect(separated.presets.names == ["small", "thumb"], "\(arguments) \(environment)")
        }
        // The command line wins, value and flag alike
        let overridden = try parse(
            ["--unsigned", "--max-pixels", "2000", "--allow-host", "c.example"],
            ["IMAGO_MAX_PIXELS": "1000", "IMAGO_ALLOW_HOST": "a.example", "IMAGO_UNSIGNED": "false"])
        #expect(overridden.pixelLimit == 2000 && overridden.sourcePolicy.allowedHosts == ["c.example"])
        #expect(overridden.allowsUnsigned)
        // The signing key and the secret, as before
        let signed = try parse([], ["IMAGO_KEY": "0011", "IMAGO_SALT": "44", "IMAGO_SECRET": "token"])
        #expect(signed.signer != nil && signed.secret == "token")
        // A flag that is neither true nor false, and a bad value, are usage errors naming what to fix
        #expect(throws: UsageError("environment variable IMAGO_UNSIGNED expects true or false (got 'maybe')")) {
            try parse([], ["IMAGO_UNSIGNED": "maybe"])
        }
        #expect(throws: UsageError.self) { try parse([], ["IMAGO_UNSIGNED": "1", "IMAGO_MAX_PIXELS": "many"]) }
        #expect(
            ParsedArguments.environmentName(of: OptionSpec("--max-animation-frame-pixels", help: ""), prefix: "IMAGO_")
                == "IMAGO_MAX_ANIMATION_FRAME_PIXELS")
    }

    /// `imago serve --unsigned` with `extra` arguments, parsed.
    static func parseUnsigned(_ extra: [String]) throws -> ServeCommand.Options {
        try ServeCommand.parse(
            parseArguments(["--unsigned"] + extra, options: ServeCommand.command.options), environment: [:])
    }

    /// Runs `body` with a scratch directory holding a 3 × 2 PNG named `name`, removed afterwards.
    static func withScratchPNG(named name: String, _ body: (_ directory: URL, _ file: URL) throws -> Void) throws {
        let directory = scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent(name)
        try ImageEncoderRegistry.makeDefault().encode(try PixelBuffer(width: 3, height: 2), as: .png).write(to: file)
        try body(directory, file)
    }

    @Test func aWatermarkIsReadAtStart() throws {
        func watermark(_ extra: [String]) throws -> WatermarkImage? { try Self.parseUnsigned(extra).watermark }
        try Self.withScratchPNG(named: "mark.png") { directory, file in
            #expect(try watermark([]) == nil)
            let mark = try #require(try watermark(["--watermark", file.path, "--watermark-opacity", "0.4"]))
            #expect(mark.image.size == PixelSize(width: 3, height: 2) && mark.opacity == 0.4 && mark.id.count == 32)
            #expect(throws: UsageError.self) {
                try watermark(["--watermark", directory.appendingPathComponent("no").path])
            }
            #expect(throws: UsageError.self) { try watermark(["--watermark", file.path, "--watermark-opacity", "2"]) }
            #expect(throws: UsageError.self) { try watermark(["--watermark-opacity", "0.5"]) }
        }
    }

    @Test func theWatermarkAndFallbackMayBeGivenAsBase64OrAURL() throws {
        let png = try ImageEncoderRegistry.makeDefault().encode(try PixelBuffer(width: 3, height: 2), as: .png)
        let base64 = png.base64EncodedString()
        let mark = try Self.parseUnsigned(["--watermark-data", base64, "--watermark-opacity", "0.5"])
        #expect(mark.watermark?.image.size == PixelSize(width: 3, height: 2) && mark.watermark?.opacity == 0.5)
        let fallback = try Self.parseUnsigned(["--fallback-image-data", base64, "--fallback-status", "0"])
        #expect(fallback.fallbackImage?.data == png && fallback.fallbackImage?.status == nil)
        // A URL is only checked here; it is fetched when the server starts
        let remote = try Self.parseUnsigned([
            "--watermark-url", "https://cdn.example/mark.png", "--watermark-opacity", "0.4",
            "--fallback-image-url", "http://cdn.example/none.png", "--fallback-max-age", "30",
        ])
        #expect(
            remote.watermark == nil && remote.watermarkURL?.host() == "cdn.example" && remote.watermarkOpacity == 0.4)
        #expect(remote.fallbackImage == nil && remote.fallbackImageURL?.path() == "/none.png")
        #expect(remote.fallbackMaxAge == .seconds(30))
        for bad in [
            ["--watermark-data", "%%%"], ["--watermark-data", base64, "--watermark-url", "https://a.example/m.png"],
            ["--watermark-url", "ftp://a.example/m.png"],
            ["--fallback-image-data", Data("text".utf8).base64EncodedString()],
            ["--fallback-image-url", "file:///etc/passwd"],
            ["--fallback-image", "/nonexistent/x.png", "--fallback-image-data", base64],
        ] {
            #expect(throws: UsageError.self, "\(bad)") { try Self.parseUnsigned(bad) }
        }
    }

    /// imgproxy's `IMGPROXY_WATERMARK_URL` and `IMGPROXY_FALLBACK_IMAGE_DATA`, end to end: the watermark is fetched
    /// once at start through the source loader, and a server whose image cannot be fetched does not start.
    @Test(.timeLimit(.minutes(1)))
    func imagesGivenByURLAreFetchedOnceAtStart() async throws {
        let origin = try LoopbackServer()
        defer { origin.stop() }
        origin.setRoute("/a.jpg", .bytes(try ServerTestImages.jpeg(), contentType: "image/jpeg"))
        var green = try PixelBuffer(width: 8, height: 8)
        for y in 0..<8 { for x in 0..<8 { green[pixel: x, y] = RGBA(r: 0, g: 255, b: 0, a: 255) } }
        origin.setRoute(
            "/mark.png",
            .bytes(try ImageEncoderRegistry.makeDefault().encode(green, as: .png), contentType: "image/png"))
        let placeholder = try ImageEncoderRegistry.makeDefault().encode(try PixelBuffer(width: 8, height: 4), as: .png)
        let directory = Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let common = [
            "--listen", "127.0.0.1:0", "--unsigned", "--allow-private", "--log-format", "off", "--cache-dir",
            directory.appendingPathComponent("cache").path, "--fallback-image-data", placeholder.base64EncodedString(),
            "--fallback-status", "404",
        ]
        let serve = try await InProcessServe.start(
            common + ["--watermark-url", origin.url(for: "/mark.png").absoluteString])
        let client = TestHTTPClient()
        let base = "http://127.0.0.1:\(serve.port)/_/"
        let marked = try await client.send(
            URL(string: base + "wm:1:ce/plain/" + origin.url(for: "/a.jpg").absoluteString + "@png")!)
        #expect(marked.status == 200)
        let image = try ServerTestImages.decode(marked.body)
        #expect(image[pixel: 200, 100] == RGBA(r: 0, g: 255, b: 0, a: 255), "the fetched watermark, at the centre")
        #expect(isBlue(image[pixel: 300, 100]))
        let gone = try await client.send(
            URL(string: base + "plain/" + origin.url(for: "/gone.jpg").absoluteString + "@png")!)
        #expect(gone.status == 404)
        #expect(try ServerTestImages.decode(gone.body).size == PixelSize(width: 8, height: 4))
        #expect(origin.requestCount(for: "/mark.png") == 1)
        #expect(await serve.stop() == 0)

        // A watermark URL that cannot be fetched: the server does not start, and says why
        let args = try parseArguments(
            common + ["--watermark-url", origin.url(for: "/missing.png").absoluteString],
            options: ServeCommand.command.options)
        let (console, output) = Console.capturing()
        #expect(await ServeCommand.run(args, console: console, interrupt: InterruptTrigger()) == 1)
        #expect(output.stderr.contains("--watermark-url") && output.stderr.contains("404"), "\(output.stderr)")
    }

    @Test func aFallbackImageIsReadAtStartWithItsStatusAndAge() throws {
        func fallback(_ extra: [String]) throws -> FallbackImage? { try Self.parseUnsigned(extra).fallbackImage }
        try Self.withScratchPNG(named: "placeholder.png") { directory, file in
            let text = directory.appendingPathComponent("notes.txt")
            try Data("not an image".utf8).write(to: text)
            #expect(try fallback([]) == nil)
            let plain = try #require(try fallback(["--fallback-image", file.path]))
            #expect(plain.status == 200 && plain.maxAge == nil && plain.id.count == 32)
            let kept = try #require(
                try fallback(["--fallback-image", file.path, "--fallback-status", "0", "--fallback-max-age", "60"]))
            #expect(kept.status == nil && kept.maxAge == .seconds(60))
            #expect(try fallback(["--fallback-image", file.path, "--fallback-status", "404"])?.status == 404)
            for bad in [
                ["--fallback-image", text.path], ["--fallback-image", directory.appendingPathComponent("no").path],
                ["--fallback-image", file.path, "--fallback-status", "99"], ["--fallback-status", "404"],
                ["--fallback-max-age", "5"],
            ] {
                #expect(throws: UsageError.self, "\(bad)") { try fallback(bad) }
            }
        }
    }

    @Test func aPathPrefixAndAnOriginAreChecked() throws {
        #expect(try Self.parseUnsigned([]).pathPrefix == "")
        #expect(try Self.parseUnsigned(["--path-prefix", "/images/"]).pathPrefix == "/images")
        #expect(try Self.parseUnsigned(["--path-prefix", "/a/b"]).pathPrefix == "/a/b")
        #expect(try Self.parseUnsigned(["--allow-origin", "*"]).allowedOrigin == "*")
        #expect(try Self.parseUnsigned(["--only-presets", "--preset", "t=w:10"]).onlyPresets)
        // Presets from a file (imgproxy's IMGPROXY_PRESETS_PATH): comments and blank lines skipped, added to --preset
        let file = Self.scratch().appendingPathComponent("presets.txt")
        try FileManager.default.createDirectory(
            at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        try Data("# thumbnails\n\n  thumb=rs:fill:64:64  \nbig=w:1024/q:70\r\n".utf8).write(to: file)
        let fromFile = try Self.parseUnsigned(["--presets-path", file.path, "--preset", "x=w:1", "--only-presets"])
        #expect(fromFile.presets.names == ["big", "thumb", "x"] && fromFile.onlyPresets)
        #expect(throws: UsageError.self) { try Self.parseUnsigned(["--presets-path", file.path + ".missing"]) }
        #expect(throws: UsageError.self) {
            try Self.parseUnsigned(["--presets-path", file.path, "--preset", "big=w:2"])
        }
        #expect(try Self.parseUnsigned(["--base64-url-includes-filename"]).base64URLIncludesFilename)
        // IMGPROXY_LAST_MODIFIED_BUSTER, an RFC 3339 date-time
        #expect(
            try Self.parseUnsigned(["--use-last-modified", "--last-modified-buster", "2026-12-01T00:00:00Z"])
                .lastModifiedBuster == Date(timeIntervalSince1970: 1_796_083_200))
        for bad in [
            ["--last-modified-buster", "2026-12-01T00:00:00Z"],
            ["--use-last-modified", "--last-modified-buster", "yesterday"],
        ] {
            #expect(throws: UsageError.self, "\(bad)") { try Self.parseUnsigned(bad) }
        }
        // IMGPROXY_COOKIE_PASSTHROUGH, _ALL and IMGPROXY_COOKIE_BASE_URL
        #expect(try Self.parseUnsigned([]).cookiePassthrough == nil)
        #expect(try Self.parseUnsigned(["--cookie-passthrough"]).cookiePassthrough == .sameHost(baseURL: nil))
        #expect(try Self.parseUnsigned(["--cookie-passthrough-all"]).cookiePassthrough == .all)
        #expect(
            try Self.parseUnsigned(["--cookie-passthrough", "--cookie-base-url", "https://app.example/"])
                .cookiePassthrough == .sameHost(baseURL: URL(string: "https://app.example/")))
        for bad in [
            ["--cookie-base-url", "https://app.example/"], ["--cookie-passthrough", "--cookie-base-url", "app"],
        ] {
            #expect(throws: UsageError.self, "\(bad)") { try Self.parseUnsigned(bad) }
        }
        // IMGPROXY_ARGUMENTS_SEPARATOR: URLs and the presets given alongside are written with it
        let commas = try Self.parseUnsigned(["--arguments-separator", ",", "--preset", "thumb=rs,fill,64,64"])
        #expect(commas.argumentsSeparator == "," && commas.presets.argumentsSeparator == ",")
        for bad in ["", "ab", "/", ".", "x"] {
            #expect(throws: UsageError.self, "\(bad)") { try Self.parseUnsigned(["--arguments-separator", bad]) }
        }
        #expect(throws: UsageError.self) {
            try Self.parseUnsigned(["--arguments-separator", ",", "--preset", "thumb=rs:fill:64:64"])
        }
        // IMGPROXY_CLIENT_KEEP_ALIVE_TIMEOUT reaches the source loader
        let keepAlive = try Self.parseUnsigned(["--client-keep-alive-timeout", "30"])
        #expect(
            (ServeCommand.makeSourceLoader(keepAlive) as? CurlDataLoader)?.configuration.idleConnectionLifetime
                == .seconds(30))
        #expect(
            (ServeCommand.makeSourceLoader(try Self.parseUnsigned([])) as? CurlDataLoader)?.configuration
                .idleConnectionLifetime == .seconds(118))
        for bad in ["-1", "3601", "soon"] {
            #expect(throws: UsageError.self) { try Self.parseUnsigned(["--client-keep-alive-timeout", bad]) }
        }
        // IMGPROXY_SIGNATURE_SIZE: with a key only, 1 to 32
        let sized = try ServeCommand.parse(
            parseArguments(
                ["--key", "0011", "--salt", "22", "--signature-size", "8"], options: ServeCommand.command.options),
            environment: [:])
        #expect(sized.signer?.signatureSize == 8)
        #expect(throws: UsageError.self) { try Self.parseUnsigned(["--signature-size", "8"]) }
        #expect(throws: UsageError.self) {
            try ServeCommand.parse(
                parseArguments(["--key", "0011", "--signature-size", "33"], options: ServeCommand.command.options),
                environment: [:])
        }
        // IMGPROXY_SOURCE_URL_QUERY_SEPARATOR: "?" unless told; empty allowed
        #expect(try Self.parseUnsigned([]).sourceQuerySeparator == "?")
        #expect(try Self.parseUnsigned(["--source-url-query-separator", ""]).sourceQuerySeparator == "")
        #expect(try Self.parseUnsigned(["--source-url-query-separator", "|"]).sourceQuerySeparator == "|")
        for bad in ["/", "%", "a b", "123456789", "é"] {
            #expect(throws: UsageError.self, "\(bad)") {
                try Self.parseUnsigned(["--source-url-query-separator", bad])
            }
        }
        #expect(
            try Self.parseUnsigned(["--allowed-processing-options", "w, h,pr"]).allowedProcessingOptions == [
                "w", "h", "pr",
            ])
        #expect(try Self.parseUnsigned([]).allowedProcessingOptions == nil)
        #expect(try Self.parseUnsigned([]).requestTimeout == nil)
        #expect(try Self.parseUnsigned([]).gracefulStopSeconds == 10)
        #expect(try Self.parseUnsigned(["--graceful-stop-timeout", "25"]).gracefulStopSeconds == 25)
        #expect(try Self.parseUnsigned(["--request-timeout", "10"]).requestTimeout == 10)
        #expect(
            try Self.parseUnsigned([
                "--allow-source", "s3://media/", "--allow-source", "abs://assets/", "--allow-source", "gs://photos/",
            ]).sourcePolicy.allowedSources == ["s3://media/", "abs://assets/", "gs://photos/"])
        #expect(try Self.parseUnsigned(["--always-rasterize-svg"]).rasterizesSVG)
        #expect(try !Self.parseUnsigned([]).rasterizesSVG)
        #expect(try Self.parseUnsigned([]).svgTimeout == 10)
        #expect(try Self.parseUnsigned(["--svg-timeout", "3"]).svgTimeout == 3)
        #expect(throws: UsageError.self) { try Self.parseUnsigned(["--svg-timeout", "0"]) }
        #expect(throws: UsageError.self) { try Self.parseUnsigned(["--request-timeout", "0"]) }
        for bad in ["", "w,,h", "w,size_to"] {
            #expect(throws: UsageError.self, "\(bad)") {
                try Self.parseUnsigned(["--allowed-processing-options", bad])
            }
        }
        #expect(try Self.parseUnsigned(["--local-root", NSTemporaryDirectory()]).localRoot != nil)
        #expect(
            try Self.parseUnsigned([
                "--allow-source", "https://cdn.example.com", "--allow-source", "local:///p/", "--allow-source",
                "http://127.0.0.1:*/",
            ]).sourcePolicy.allowedSources == ["https://cdn.example.com/", "local:///p/", "http://127.0.0.1:*/"])
        #expect(try Self.parseUnsigned(["--secret", "abc"]).secret == "abc")
        #expect(
            try ServeCommand.parse(
                parseArguments(["--unsigned"], options: ServeCommand.command.options),
                environment: ["IMAGO_SECRET": "env-token"]
            ).secret == "env-token")
        #expect(try Self.parseUnsigned([]).maxAnimationFrames == 1)
        #expect(try Self.parseUnsigned(["--max-animation-frames", "64"]).maxAnimationFrames == 64)
        #expect(try Self.parseUnsigned([]).maxAnimationFramePixels == 0)
        #expect(try !Self.parseUnsigned([]).setsCanonicalHeader)
        #expect(try Self.parseUnsigned(["--set-canonical-header"]).setsCanonicalHeader)
        #expect(try Self.parseUnsigned(["--return-attachment"]).returnsAttachment)
        #expect(try Self.parseUnsigned([]).connectionLimit == 1024 && Self.parseUnsigned([]).connectionTimeout == 30)
        let limits = try Self.parseUnsigned(["--max-clients", "64", "--connection-timeout", "5"])
        #expect(limits.connectionLimit == 64 && limits.connectionTimeout == 5)
        #expect(try Self.parseUnsigned(["--skip-processing-formats", "gif,webp"]).skippedFormats == [.gif, .webp])
        #expect(try Self.parseUnsigned(["--etag-buster", "v2"]).etagBuster == "v2")
        #expect(try Self.parseUnsigned([]).etagBuster.isEmpty)
        #expect(
            try Self.parseUnsigned(["--max-animation-frame-pixels", "2000000"]).maxAnimationFramePixels == 2_000_000)
        for bad in [
            ["--path-prefix", "images"], ["--path-prefix", "/"], ["--path-prefix", "/a//b"], ["--path-prefix", "/a b"],
            ["--allow-origin", ""], ["--allow-origin", "https://a.example, https://b.example"], ["--only-presets"],
            ["--max-animation-frames", "0"], ["--max-animation-frame-pixels", "-1"],
            ["--skip-processing-formats", "mp4"], ["--max-clients", "0"],
            ["--connection-timeout", "0"],
            ["--local-root", "/no/such/directory"], ["--secret", "two words"],
            ["--allow-source", "cdn.example.com/images/"],
            ["--allow-source", "ftp://cdn.example.com/"], ["--allow-source", "local://host/p/"],
        ] {
            #expect(throws: UsageError.self, "\(bad)") { try Self.parseUnsigned(bad) }
        }
    }
}

/// The built `imago` executable (``ImagoTesting/builtExecutable(named:environmentVariable:preferringPlainBuild:filePath:)``;
/// `$IMAGO_CLI` overrides).
func imagoExecutable(filePath: String = #filePath) -> URL? {
    ImagoTesting.builtExecutable(named: "imago", environmentVariable: "IMAGO_CLI", filePath: filePath)
}

/// `imago serve` with `arguments`, run in-process (the command's own parsing and wiring) until ``stop()``.
struct InProcessServe {
    /// The port it listens on.
    let port: UInt16
    /// What it printed.
    let output: CapturedOutput
    private let trigger: InterruptTrigger
    private let run: Task<Int32, Never>

    /// Starts it, its process environment `environment` over ``quietCloudEnvironment`` (no cloud's metadata service
    /// asked unless `environment` names one), and waits until it listens (give `--listen 127.0.0.1:0` for a free
    /// port).
    static func start(_ arguments: [String], environment: [String: String] = [:]) async throws -> InProcessServe {
        let args = try parseArguments(arguments, options: ServeCommand.command.options)
        var quiet = quietCloudEnvironment
        if environment["AWS_EC2_METADATA_SERVICE_ENDPOINT"] != nil { quiet["AWS_EC2_METADATA_DISABLED"] = nil }
        let (console, output) = Console.capturing(environment: quiet.merging(environment) { $1 })
        let trigger = InterruptTrigger()
        let port = Locked<UInt16>(0)
        let run = Task {
            await ServeCommand.run(args, console: console, interrupt: trigger) { p in port.withLock { $0 = p } }
        }
        #expect(await ImagoTesting.eventually { port.value != 0 })
        return InProcessServe(port: port.value, output: output, trigger: trigger, run: run)
    }

    /// Stops it as Ctrl-C would and returns its exit status.
    func stop() async -> Int32 {
        trigger.fire()
        return await run.value
    }
}

/// `imago serve` as a child process, its standard error in a file, for the tests that signal it.
struct ServeProcess {
    let process = Process()
    let stderrFile: URL

    /// Starts `executable serve ARGUMENTS --cache-dir DIRECTORY/cache`, standard error to `standardError` (default
    /// `DIRECTORY/stderr`), standard output to `standardOutput` (default none), with `environment` added to this
    /// process's.
    init(
        _ executable: URL, _ arguments: [String], in directory: URL, environment: [String: String] = [:],
        standardOutput: FileHandle = .nullDevice, standardError: FileHandle? = nil
    ) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        stderrFile = directory.appendingPathComponent("stderr")
        guard FileManager.default.createFile(atPath: stderrFile.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown)
        }
        process.executableURL = executable
        process.environment = ProcessInfo.processInfo.environment.merging(quietCloudEnvironment) { $1 }
            .merging(environment) { $1 }
        process.arguments = ["serve"] + arguments + ["--cache-dir", directory.appendingPathComponent("cache").path]
        process.standardOutput = standardOutput
        process.standardError = try standardError ?? FileHandle(forWritingTo: stderrFile)
        try process.run()
    }

    /// Sends SIGTERM if it still runs and waits up to 15 s for it to exit (then SIGKILL), so that nothing writes
    /// into its folder once the test removes it.
    func terminate() {
        if process.isRunning { process.terminate() }
        let deadline = ContinuousClock.now + .seconds(15)
        while process.isRunning && ContinuousClock.now < deadline { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// What it has written to standard error so far.
    var stderr: String { (try? String(contentsOf: stderrFile, encoding: .utf8)) ?? "" }

    /// The loopback port it says it listens on, once it has said so (`nil` if it has not within the wait).
    func listeningPort() async -> Int? {
        var port = 0
        _ = await ImagoTesting.eventually {
            guard let range = stderr.range(of: "listening on http://127.0.0.1:") else { return false }
            port = Int(stderr[range.upperBound...].prefix { $0.isNumber }) ?? 0
            return port != 0
        }
        return port == 0 ? nil : port
    }
}
