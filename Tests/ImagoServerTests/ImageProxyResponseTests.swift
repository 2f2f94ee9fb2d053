import Foundation
import Imago
import ImagoServer
import ImagoTesting
import Testing

@Suite("ImageProxy: signatures, statuses, negotiation, validators")
struct ImageProxyResponseTests {
    static let keyHex = "943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881"
    static let saltHex = "520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5"

    @Test func signedURLsAreServedAndUnsignedOnlyWhenAllowed() async throws {
        let signer = try URLSigner(keyHex: Self.keyHex, saltHex: Self.saltHex)
        let fixture = try ProxyFixture {
            $0.signer = signer
            $0.allowsUnsigned = false
        }
        let rest = "/rs:fit:64:64/plain/" + fixture.source()
        #expect(await fixture.get("/" + signer.signature(for: rest) + rest).status == 200)
        let forged = await fixture.get("/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" + rest)
        #expect(forged.status == 403 && errorMessage(forged) == "invalid signature")
        #expect(await fixture.get("/insecure" + rest).status == 403)
        #expect(await fixture.get("/_" + rest).status == 403)
        // A signature for other options does not carry over
        #expect(
            await fixture.get("/" + signer.signature(for: rest) + "/rs:fit:65:64/plain/" + fixture.source()).status
                == 403)
    }

    @Test(.timeLimit(.minutes(1)))
    func signaturesMadeWithPythonsHMACAreAccepted() async throws {
        let fixture = try ProxyFixture {
            $0.signer = try URLSigner(keyHex: Self.keyHex, saltHex: Self.saltHex)
            $0.allowsUnsigned = false
        }
        let encoded = Data(fixture.source().utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        for rest in ["/rs:fill:32:32/g:so/plain/\(fixture.source())@png", "/w:20/\(encoded).webp"] {
            let signature = try pythonSignature(path: rest)
            let response = await fixture.get("/" + signature + rest)
            #expect(response.status == 200, "\(errorMessage(response))")
        }
    }

    /// imgproxy's scheme written independently, in Python's standard library.
    func pythonSignature(path: String) throws -> String {
        let script = """
            import base64, hashlib, hmac, sys
            key = bytes.fromhex(sys.argv[1]); salt = bytes.fromhex(sys.argv[2])
            digest = hmac.new(key, salt + sys.argv[3].encode(), hashlib.sha256).digest()
            print(base64.urlsafe_b64encode(digest).rstrip(b"=").decode())
            """
        let (status, output) = try python(script, arguments: [Self.keyHex, Self.saltHex, path])
        try #require(status == 0, "\(output)")
        return output
    }

    @Test(.timeLimit(.minutes(1)))
    func everyErrorStatusSaysWhoseFaultItIs() async throws {
        let fixture = try ProxyFixture {
            $0.pixelLimit = 100_000
            var loader = HTTPDataLoader.Configuration()
            loader.maximumBodySize = 50_000
            loader.idleTimeout = .seconds(1)
            loader.resourceTimeout = .seconds(2)
            loader.retryPolicy.maximumRetries = 0
            $0.dataLoader = HTTPDataLoader(configuration: loader)
        }
        let origin = fixture.origin
        origin.setRoute(
            "/big.jpg", .bytes(try ServerTestImages.jpeg(width: 600, height: 400), contentType: "image/jpeg"))
        origin.setRoute("/huge.bin", .bytes(Data(repeating: 7, count: 60_000)))
        origin.setRoute("/text.bin", .bytes(Data("not an image at all".utf8)))
        origin.setRoute("/page.html", .text("<html></html>").withContentType("text/html"))
        origin.setRoute("/broken", .status(500))
        origin.setRoute("/slow.jpg", .bytes(fixture.jpeg, contentType: "image/jpeg").delayed(by: .seconds(4)))

        let cases: [(String, Int)] = [
            (fixture.path("", "/missing.jpg"), 404),
            (fixture.path("", "/huge.bin"), 413),
            (fixture.path("", "/text.bin"), 415),
            (fixture.path("", "/page.html"), 415),
            (fixture.path("", "/big.jpg"), 422),
            (fixture.path("", "/broken"), 502),
            (fixture.path("", "/slow.jpg"), 504),
            (fixture.path("xx:1"), 400),
            ("/_/plain/ftp://files.example/a.jpg", 400),
        ]
        for (path, status) in cases {
            let response = await fixture.get(path)
            #expect(response.status == status, "\(path): \(errorMessage(response))")
            #expect(response.header("Content-Type") == "application/json")
        }
        // A 405 names the methods that are served (RFC 9110 asks for Allow; it was missing)
        let post = await fixture.get(fixture.path(""), method: "POST")
        #expect(post.status == 405 && post.header("Allow") == "GET, HEAD")
        #expect(await fixture.get("/").status == 400)
    }

    /// The origin's own 4xx is passed on, as imgproxy does, except the ones about the proxy's own request; its 5xx
    /// is a 502. The access log and the metrics see the status answered.
    @Test func theOriginsClientErrorsArePassedOn() async throws {
        let fixture = try ProxyFixture {
            var loader = HTTPDataLoader.Configuration()
            loader.retryPolicy.maximumRetries = 0
            $0.dataLoader = HTTPDataLoader(configuration: loader)
        }
        let cases =
            [(403, 403), (410, 410), (429, 429), (451, 451), (404, 404), (407, 502), (408, 502), (416, 502)]
            + [(500, 502), (503, 502)]
        for (origin, answered) in cases {
            fixture.origin.setRoute("/s\(origin).jpg", .status(origin))
            let response = await fixture.get(fixture.path("w:10", "/s\(origin).jpg"))
            #expect(response.status == answered, "\(origin): \(errorMessage(response))")
            #expect(errorMessage(response).contains("the origin answered HTTP \(origin)"), "\(errorMessage(response))")
            #expect(response.header("Content-Type") == "application/json")
        }
        let samples = prometheusSamples(fixture.proxy.metrics.prometheusText())
        for status in [403, 410, 429, 451] {
            #expect(samples["imago_serve_requests_total{status=\"\(status)\"}"] == 1, "\(status)")
        }
        #expect(samples["imago_serve_requests_total{status=\"502\"}"] == 5)
    }

    @Test func privateAndUnlistedHostsAre403() async throws {
        let fixture = try ProxyFixture { $0.sourcePolicy = SourcePolicy() }
        for host in [
            "127.0.0.1", "127.1", "2130706433", "localhost", "10.1.2.3", "192.168.0.9", "[::1]", "169.254.1.1",
        ] {
            let response = await fixture.get("/_/plain/http://\(host)/a.jpg")
            #expect(response.status == 403, "\(host)")
        }
        let listed = try ProxyFixture { $0.sourcePolicy = SourcePolicy(allowedHosts: ["*.example.com"]) }
        #expect(await listed.get("/_/plain/http://evil.example.org/a.jpg").status == 403)
        #expect(SourcePolicy(allowedHosts: ["*.example.com"]).allows("https://cdn.EXAMPLE.com/a.jpg"))
        #expect(!SourcePolicy(allowedHosts: ["*.example.com"]).allows("https://example.com.evil/a.jpg"))
        #expect(fixture.origin.totalRequestCount == 0)
    }

    @Test func theQueueRefusesWith503AndRetryAfterWhenFull() async throws {
        let fixture = try ProxyFixture {
            $0.workers = 1
            $0.queueLimit = 0
        }
        fixture.origin.suspend("/a.jpg")
        let first = Task { await fixture.get(fixture.path("w:10")) }
        #expect(await fixture.origin.waitUntil { $0.suspendedRequestCount(for: "/a.jpg") == 1 })
        let refused = await fixture.get(fixture.path("w:11"))
        #expect(refused.status == 503 && refused.header("Retry-After") == "1")
        fixture.origin.resume("/a.jpg")
        #expect(await first.value.status == 200)
    }

    @Test(.timeLimit(.minutes(1)))
    func aRequestOverTheTimeoutIs503AndItsRenderIsCachedForTheRetry() async throws {
        let fixture = try ProxyFixture { $0.requestTimeout = .milliseconds(300) }
        fixture.origin.suspend("/a.jpg")
        let path = fixture.path("w:10")
        // Two requests for one output wait on one render; both give up at the timeout
        let clock = ContinuousClock()
        let started = clock.now
        async let first = fixture.get(path)
        async let second = fixture.get(path)
        let (a, b) = await (first, second)
        let waited = clock.now - started
        #expect(a.status == 503 && b.status == 503 && a.header("Retry-After") == "1", "\(errorMessage(a))")
        #expect(errorMessage(a).contains("longer than 300 ms"), "\(errorMessage(a))")
        #expect(waited >= .milliseconds(300), "\(waited)")
        // The render goes on once the origin answers, and the retry is served from the output cache
        fixture.origin.resume("/a.jpg")
        var retried = await fixture.get(path)
        for _ in 0..<200 where retried.status != 200 {
            try await Task.sleep(for: .milliseconds(50))
            retried = await fixture.get(path)
        }
        #expect(retried.status == 200 && (try? ServerTestImages.decode(retried.body).width) == 10)
        #expect(fixture.origin.requestCount(for: "/a.jpg") == 1)
        // Without a timeout a slow render is waited for
        let patient = try ProxyFixture()
        patient.origin.setRoute(
            "/a.jpg", .bytes(try ServerTestImages.jpeg(), contentType: "image/jpeg").delayed(by: .milliseconds(400)))
        #expect(await patient.get(patient.path("w:10")).status == 200)
    }

    @Test func acceptChoosesWebPThenTheSourceFormatThenJPEGOrPNG() async throws {
        let fixture = try ProxyFixture()
        let webp = await fixture.get(fixture.path("w:50"), headers: ["Accept": "image/avif;q=0,image/webp,*/*"])
        #expect(webp.header("Content-Type") == "image/webp" && webp.header("Vary") == "Accept")
        let avifOnly = await fixture.get(fixture.path("w:50"), headers: ["Accept": "image/avif"])
        // AVIF when an AVIF encoder is registered, else the source's format
        let hasAVIF = ImageEncoderRegistry.makeDefault().encoder(for: .avif) != nil
        #expect(avifOnly.header("Content-Type") == (hasAVIF ? "image/avif" : "image/jpeg"))
        let both = await fixture.get(fixture.path("w:50"), headers: ["Accept": "image/avif,image/webp"])
        #expect(both.header("Content-Type") == (hasAVIF ? "image/avif" : "image/webp"))
        if hasAVIF { #expect(ImageFormat(sniffing: avifOnly.body) == .avif) }
        // JPEG XL only when asked for (browsers do not negotiate it), once its encoder is registered
        let hasJXL = ImageEncoderRegistry.makeDefault().encoder(for: .jpegXL) != nil
        let jxl = await fixture.get(fixture.path("w:20/f:jxl"))
        #expect(jxl.status == (hasJXL ? 200 : 400))
        if hasJXL { #expect(jxl.header("Content-Type") == "image/jxl" && ImageFormat(sniffing: jxl.body) == .jpegXL) }
        let none = await fixture.get(fixture.path("w:50"))
        #expect(none.header("Content-Type") == "image/jpeg" && none.header("Vary") == "Accept")
        let refusedWebP = await fixture.get(fixture.path("w:50"), headers: ["Accept": "image/webp;q=0"])
        #expect(refusedWebP.header("Content-Type") == "image/jpeg")

        // A source no encoder writes (GIF): JPEG when opaque; PNG keeps alpha
        fixture.origin.setRoute("/alpha.png", .bytes(try ServerTestImages.pngWithAlpha(), contentType: "image/png"))
        let png = await fixture.get(fixture.path("", "/alpha.png"))
        #expect(png.header("Content-Type") == "image/png")
        let noWebPEncoder = try ProxyFixture { $0.encoders = ImageEncoderRegistry([JPEGEncoder(), PNGEncoder()]) }
        let fallback = await noWebPEncoder.get(noWebPEncoder.path("w:50"), headers: ["Accept": "image/webp"])
        #expect(fallback.header("Content-Type") == "image/jpeg")
        let explicit = await noWebPEncoder.get(noWebPEncoder.path("f:webp"))
        #expect(explicit.status == 400 && errorMessage(explicit).contains("format"))
    }

    @Test func etagsAreStrongStableAndAnswer304() async throws {
        let fixture = try ProxyFixture { $0.maxAge = .seconds(600) }
        let first = await fixture.get(fixture.path("w:60"))
        let etag = try #require(first.header("ETag"))
        #expect(etag.hasPrefix("\"") && !etag.hasPrefix("W/"))
        #expect(first.header("Cache-Control") == "public, max-age=600")
        #expect(first.header("Content-Length") == "\(first.body.count)")
        let again = await fixture.get(fixture.path("w:60"))
        #expect(again.header("ETag") == etag && again.body == first.body)
        let other = await fixture.get(fixture.path("w:61"))
        #expect(other.header("ETag") != etag)
        let webp = await fixture.get(fixture.path("w:60"), headers: ["Accept": "image/webp"])
        #expect(webp.header("ETag") != etag)

        let notModified = await fixture.get(fixture.path("w:60"), headers: ["If-None-Match": "\"x\", \(etag)"])
        #expect(notModified.status == 304 && notModified.body.isEmpty && notModified.header("ETag") == etag)
        let modified = await fixture.get(fixture.path("w:60"), headers: ["If-None-Match": "\"x\""])
        #expect(modified.status == 200)
        let head = await fixture.get(fixture.path("w:60"), method: "HEAD")
        #expect(head.status == 200 && head.header("Content-Length") == "\(first.body.count)")
        // w:60 fetched once (every later w:60 from the output or pipeline memory cache); w:61 once more, as this
        // fixture keeps no originals on disk.
        #expect(fixture.origin.requestCount(for: "/a.jpg") == 2)
    }

    @Test(.timeLimit(.minutes(1)))
    func outputsComeFromTheDiskCacheAfterARestart() async throws {
        let fixture = try RestartFixture()
        fixture.origin.setRoute("/a.jpg", .bytes(try ServerTestImages.jpeg(), contentType: "image/jpeg"))
        let path = fixture.path("w:40", "/a.jpg")
        var etags: [String?] = []
        for _ in 0..<2 {
            let response = try await fixture.respondAfterRestart(path)
            #expect(response.status == 200)
            etags.append(response.header("ETag"))
        }
        #expect(etags[0] != nil && etags[0] == etags[1])
        #expect(fixture.origin.requestCount(for: "/a.jpg") == 1)
    }

    /// A disk read takes as long as the disk does: made on a thread of Swift's executor, a slow one would hold
    /// every other request's steps behind it (the executor has one thread per core).
    @Test(.timeLimit(.minutes(1)))
    func aSlowOutputDiskHoldsNoThreadOfSwiftsExecutor() async throws {
        let disk = GatedDataCache()
        let fixture = try ProxyFixture { $0.outputCache = OutputCache(disk: disk) }
        // More requests than the executor has threads, each reading the output disk first, which does not answer
        let requests = (0..<ProcessInfo.processInfo.activeProcessorCount + 2).map { width in
            let path = fixture.path("w:\(40 + width)")
            return Task.detached { await fixture.get(path).status }
        }
        // The disk answers after 3 s, measured from a thread outside the executor
        let opened = Locked<ContinuousClock.Instant?>(nil)
        DispatchQueue.global().asyncAfter(deadline: .now() + 3) {
            opened.withLock { $0 = .now }
            disk.open()
        }
        while disk.waitingReads == 0 { try await Task.sleep(for: .milliseconds(5)) }
        let probed = await Task.detached { ContinuousClock.now }.value
        for request in requests { #expect(await request.value == 200) }
        let openedAt = try #require(opened.withLock { $0 })
        #expect(probed < openedAt, "a task ran while the disk was being read")
        #expect(disk.waitingReads >= 1)
    }
}

/// A ``DataCaching`` whose reads wait until ``open()`` (a disk that does not answer), and hold nothing.
final class GatedDataCache: DataCaching, Sendable {
    private let gate = DispatchGroup()
    private let waiting = Locked(0)

    init() { gate.enter() }

    /// Reads that have waited so far.
    var waitingReads: Int { waiting.withLock { $0 } }

    /// Lets every read through, now and later.
    func open() { gate.leave() }

    func entry(for key: String) -> DataCacheEntry? {
        waiting.withLock { $0 += 1 }
        gate.wait()
        return nil
    }

    func store(_ data: Data, for key: String, metadata: DataCacheMetadata) {}
    func updateMetadata(_ metadata: DataCacheMetadata, for key: String) {}
    func containsData(for key: String) -> Bool { false }
    func removeData(for key: String) {}
    func removeAll() {}
}

extension SourcePolicy {
    /// Whether the policy lets `url` through.
    func allows(_ url: String) -> Bool {
        guard let url = URL(string: url) else { return false }
        do {
            try check(url)
            return true
        } catch {
            return false
        }
    }
}
