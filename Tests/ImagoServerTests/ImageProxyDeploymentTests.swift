import Foundation
import Imago
import ImagoTesting
import Testing

@testable import ImagoCLI
@testable import ImagoServer

@Suite("ImageProxy: a path prefix and CORS, as imgproxy's IMGPROXY_PATH_PREFIX and IMGPROXY_ALLOW_ORIGIN")
struct ImageProxyDeploymentTests {
    @Test func imageURLsLiveUnderThePrefixAndTheSignatureCoversWhatFollowsIt() async throws {
        let signer = try URLSigner(keyHex: "736563726574", saltHex: "68656c6c6f")
        let fixture = try ProxyFixture {
            $0.pathPrefix = "/img"
            $0.signer = signer
        }
        let unsigned = fixture.path("rs:fit:20:20")  // "/_/rs:fit:20:20/plain/…"

        #expect(await fixture.get("/img" + unsigned).status == 200)
        #expect(await fixture.get(unsigned).status == 404)
        #expect(await fixture.get("/imgx" + unsigned).status == 404)  // whole segments only
        let signedPart = "/rs:fit:20:20/plain/" + fixture.source()
        let signed = "/img/" + signer.signature(for: signedPart) + signedPart
        #expect(await fixture.get(signed).status == 200)
        #expect(await fixture.get("/img/" + signer.signature(for: "/other") + signedPart).status == 403)
        for health in ["/healthz", "/img/healthz"] { #expect(await fixture.get(health).status == 200, "\(health)") }
        #expect(await fixture.get("/img/metrics").status == 200)
    }

    @Test func everyResponseCarriesTheOriginAndPreflightsAreAnswered() async throws {
        let fixture = try ProxyFixture { $0.allowedOrigin = "*" }

        let image = await fixture.get(fixture.path("rs:fit:20:20"))
        let error = await fixture.get(fixture.path("nope:1"))
        let preflight = await fixture.get(fixture.path("rs:fit:20:20"), method: "OPTIONS")

        for response in [image, error, preflight] {
            #expect(response.header("Access-Control-Allow-Origin") == "*")
            #expect(response.header("Access-Control-Allow-Methods") == "GET, HEAD, OPTIONS")
        }
        #expect(image.status == 200 && error.status == 400)
        #expect(preflight.status == 204 && preflight.body.isEmpty)
        #expect(image.header("Vary") != "Origin")
        // A named origin makes the responses vary by Origin; without the setting, no CORS and no OPTIONS
        let named = try ProxyFixture { $0.allowedOrigin = "https://app.example.com" }
        let response = await named.get(named.path("rs:fit:20:20"))
        #expect(response.headers.contains(ServerResponse.Header("Vary", "Origin")))
        let plain = try ProxyFixture()
        #expect(await plain.get(plain.path("rs:fit:20:20")).header("Access-Control-Allow-Origin") == nil)
        let options = await plain.get(plain.path("rs:fit:20:20"), method: "OPTIONS")
        #expect(options.status == 405 && options.header("Allow") == "GET, HEAD")
        // With preflights answered, a 405 names OPTIONS too
        #expect(await named.get(named.path("rs:fit:20:20"), method: "DELETE").header("Allow") == "GET, HEAD, OPTIONS")
    }

    @Test(.timeLimit(.minutes(1)))
    func thePreflightAndTheHeadersGoOverTheWire() async throws {
        let fixture = try ProxyFixture {
            $0.allowedOrigin = "*"
            $0.pathPrefix = "/img"
        }
        let server = try fixture.served()
        defer { server.stop() }
        let client = TestHTTPClient()
        let url = URL(string: "http://127.0.0.1:\(server.port)/img" + fixture.path("rs:fit:20:20"))!

        let preflight = try await client.send(url, method: "OPTIONS", headers: ["Origin": "https://a.example"])
        let get = try await client.send(url)

        #expect(preflight.status == 204 && preflight.headers["access-control-allow-origin"] == "*")
        #expect(get.status == 200 && get.headers["access-control-allow-origin"] == "*")
        #expect(try ServerTestImages.decode(get.body).size == PixelSize(width: 20, height: 10))
    }

    @Test func inPresetsOnlyModeTheURLNamesPresetsAndNothingElse() async throws {
        let fixture = try ProxyFixture {
            $0.presets = try PresetTable(definitions: ["thumb=rs:fit:20:20", "png=f:png", "default=q:70"])
            $0.onlyPresets = true
        }
        let source = "/plain/" + fixture.source()

        let thumb = await fixture.get("/_/thumb:png" + source)
        #expect(thumb.status == 200, "\(errorMessage(thumb))")
        #expect(thumb.header("Content-Type") == "image/png")
        #expect(try ServerTestImages.decode(thumb.body).size == PixelSize(width: 20, height: 10))
        #expect(await fixture.get("/_/thumb" + source + "@png").header("Content-Type") == "image/png")
        // Options of its own, an unknown preset, or no preset segment: 400
        for path in ["/_/rs:fit:30:30" + source, "/_/thumb/rs:fit:30:30" + source, "/_/huge" + source, "/_" + source] {
            let response = await fixture.get(path)
            #expect(response.status == 400, "\(path): \(response.status)")
        }
    }

    @Test func presetsOnlyParsingReadsOneSegmentOfNames() throws {
        let presets = try PresetTable(definitions: ["a=w:10", "b=h:20"])
        let path = try ProxyPath(parsing: "/_/a:b/plain/https://img.example/x.jpg", presets: presets, onlyPresets: true)
        #expect(path.options.width == 10 && path.options.height == 20)
        #expect(path.source.absoluteString == "https://img.example/x.jpg")
        let encoded = try ProxyPath(
            parsing: "/_/a/" + Base64URL.encode(Array("https://img.example/y.jpg".utf8)) + ".png", presets: presets,
            onlyPresets: true)
        #expect(encoded.source.absoluteString == "https://img.example/y.jpg" && encoded.options.format == .png)
        #expect(throws: ProxyError.self) {
            try ProxyPath(parsing: "/_/w:10/plain/https://img.example/x.jpg", presets: presets, onlyPresets: true)
        }
    }

    @Test func onlyTheAllowedProcessingOptionsMayBeUsed() async throws {
        // imgproxy's own test case: w, h and pr allowed, a preset that blurs
        let fixture = try ProxyFixture {
            $0.presets = try PresetTable(definitions: ["soft=bl:2"])
            $0.allowedProcessingOptions = ["w", "h", "pr"]
        }
        let source = "/plain/" + fixture.source()
        for allowed in ["/_/w:20/h:10", "/_/w:20/h:10/pr:soft", "/_"] {
            let response = await fixture.get(allowed + source)
            #expect(response.status == 200, "\(allowed): \(errorMessage(response))")
        }
        #expect(try ServerTestImages.decode(await fixture.get("/_/w:20" + source).body).size.width == 20)
        // Another option, an alias of an allowed one, or an option after an allowed preset: 403 naming it
        for (path, name) in [("/_/w:20/bl:2", "bl"), ("/_/width:20", "width"), ("/_/pr:soft/blur:3", "blur")] {
            let response = await fixture.get(path + source)
            #expect(response.status == 403, "\(path): \(response.status)")
            #expect(errorMessage(response).contains("'\(name)' is not allowed"), "\(errorMessage(response))")
        }
        #expect(ProxyPath.isOptionName("rs") && ProxyPath.isOptionName("max_src_resolution"))
        #expect(!ProxyPath.isOptionName("resize_to") && !ProxyPath.isOptionName(""))
    }

    @Test func aBase64SourceMayEndWithAFileName() async throws {
        let encoded = Base64URL.encode(Array("https://img.example/a/b.jpg".utf8))
        let path = "/_/w:10/" + encoded.prefix(12) + "/" + encoded.dropFirst(12) + ".png/holiday.png"
        let named = try ProxyPath(parsing: path, base64IncludesFilename: true)
        #expect(named.source.absoluteString == "https://img.example/a/b.jpg" && named.options.format == .png)
        // A single segment is the source itself, file name or not
        let whole = try ProxyPath(parsing: "/_/w:10/" + encoded + ".webp", base64IncludesFilename: true)
        #expect(whole.source.absoluteString == "https://img.example/a/b.jpg" && whole.options.format == .webp)
        // Without the setting the name is read as part of the source: an error
        #expect(throws: ProxyError.self) { try ProxyPath(parsing: path) }
        // Through the proxy
        let fixture = try ProxyFixture { $0.base64URLIncludesFilename = true }
        let source = Base64URL.encode(Array(fixture.source().utf8))
        let response = await fixture.get("/_/w:20/" + source + ".png/my-photo.png")
        #expect(response.status == 200 && response.header("Content-Type") == "image/png", "\(errorMessage(response))")
    }

    @Test func anArgumentsSeparatorOtherThanTheColon() async throws {
        // imgproxy's IMGPROXY_ARGUMENTS_SEPARATOR: options, presets and the only-presets segment all use it
        let source = "http://img.example/a.jpg"
        let path = try ProxyPath(parsing: "/_/rs,fill,30,20/g,no/plain/\(source)@png", argumentsSeparator: ",")
        #expect(path.options.resizingType == .fill && path.options.width == 30 && path.options.height == 20)
        #expect(path.options.gravity == .north && path.options.format == .png && path.source.absoluteString == source)
        // A colon is then part of the source, which is not base64: an error, as in imgproxy
        #expect(throws: ProxyError.self) { try ProxyPath(parsing: "/_/w:10/plain/\(source)", argumentsSeparator: ",") }
        let presets = try PresetTable(
            definitions: ["thumb=rs,fill,64,64/q,70", "gray=pr,thumb/bl,2"], argumentsSeparator: ",")
        let named = try ProxyPath(parsing: "/_/pr,gray/plain/\(source)", presets: presets, argumentsSeparator: ",")
        #expect(named.options.width == 64 && named.options.quality == 70 && named.options.blurSigma == 2)
        let only = try ProxyPath(
            parsing: "/_/thumb,gray/plain/\(source)", presets: presets, onlyPresets: true, argumentsSeparator: ",")
        #expect(only.options.width == 64 && only.options.blurSigma == 2)
        // Presets keep the separator they were written with when URLs use another
        let colonPresets = try PresetTable(definitions: ["thumb=rs:fill:64:64"])
        #expect(
            try ProxyPath(parsing: "/_/pr;thumb/plain/\(source)", presets: colonPresets, argumentsSeparator: ";")
                .options.width == 64)
        #expect(throws: ProxyError.self) {
            try PresetTable(definitions: ["thumb=rs:fill:64:64"], argumentsSeparator: ",")
        }
        for bad: Character in ["/", ".", "@", "%", "-", "_", "=", "a", "7", " ", "é"] {
            #expect(!ProxyPath.isArgumentsSeparator(bad), "\(bad)")
            #expect(throws: ProxyError.self) { try PresetTable(definitions: [], argumentsSeparator: bad) }
            #expect(throws: ProxyError.self) { try ProxyPath(parsing: "/_/plain/\(source)", argumentsSeparator: bad) }
        }
        #expect([":", ",", ";", "!", "~", "|", "*", "+", "$"].allSatisfy { ProxyPath.isArgumentsSeparator($0) })
        // Through the proxy
        let fixture = try ProxyFixture { $0.argumentsSeparator = "," }
        let response = await fixture.get("/_/rs,fit,20,20/f,png/plain/" + fixture.source())
        try #require(response.status == 200, "\(errorMessage(response))")
        #expect(try ServerTestImages.decode(response.body).size == PixelSize(width: 20, height: 10))
        #expect(await fixture.get(fixture.path("rs:fit:20:20")).status == 400)
    }

    @Test func cookiesGoToTheOriginAndTheirOutputsStayPrivate() async throws {
        // imgproxy's IMGPROXY_COOKIE_PASSTHROUGH_ALL
        let fixture = try ProxyFixture { $0.cookiePassthrough = .all }
        let path = fixture.path("rs:fit:20:20")
        let alice = await fixture.get(path, headers: ["cookie": "session=alice"])
        #expect(alice.status == 200 && alice.header("Cache-Control")?.hasPrefix("private, max-age=") == true)
        #expect(fixture.origin.lastRequestHeaders(for: "/a.jpg")?["Cookie"] == "session=alice")
        // Another client's cookies: fetched again, never answered from the first one's output
        let bob = await fixture.get(path, headers: ["cookie": "session=bob"])
        #expect(bob.status == 200 && fixture.origin.requestCount(for: "/a.jpg") == 2)
        #expect(fixture.origin.lastRequestHeaders(for: "/a.jpg")?["Cookie"] == "session=bob")
        // Without cookies: fetched without any, public and cached
        let plain = await fixture.get(path)
        #expect(plain.status == 200 && plain.header("Cache-Control")?.hasPrefix("public") == true)
        #expect(fixture.origin.requestCount(for: "/a.jpg") == 3)
        #expect(fixture.origin.lastRequestHeaders(for: "/a.jpg")?["Cookie"] == nil)
        #expect(await fixture.get(path).status == 200 && fixture.origin.requestCount(for: "/a.jpg") == 3)
        // The cached public output is not the answer to a request with cookies either
        #expect(await fixture.get(path, headers: ["cookie": "session=alice"]).status == 200)
        #expect(fixture.origin.requestCount(for: "/a.jpg") == 4)
    }

    @Test func cookiesGoOnlyToTheHostTheyAreFor() async throws {
        // imgproxy's IMGPROXY_COOKIE_PASSTHROUGH: the request's own host, or IMGPROXY_COOKIE_BASE_URL's
        func sentCookie(_ passthrough: CookiePassthrough, headers: [String: String]) async throws -> String? {
            let fixture = try ProxyFixture { $0.cookiePassthrough = passthrough }
            let response = await fixture.get(fixture.path("w:10"), headers: headers.merging(["cookie": "s=1"]) { $1 })
            try #require(response.status == 200, "\(errorMessage(response))")
            return fixture.origin.lastRequestHeaders(for: "/a.jpg")?["Cookie"]
        }
        let own = CookiePassthrough.sameHost(baseURL: nil)
        #expect(try await sentCookie(own, headers: ["host": "127.0.0.1:8080"]) == "s=1")
        #expect(try await sentCookie(own, headers: ["host": "images.example"]) == nil)
        #expect(try await sentCookie(own, headers: [:]) == nil)
        #expect(
            try await sentCookie(
                own, headers: ["host": "images.example", "x-forwarded-host": "127.0.0.1, proxy.example"])
                == "s=1")
        let base = CookiePassthrough.sameHost(baseURL: URL(string: "http://127.0.0.1/app/"))
        #expect(try await sentCookie(base, headers: ["host": "images.example"]) == "s=1")
        let other = CookiePassthrough.sameHost(baseURL: URL(string: "https://app.example.com/"))
        #expect(try await sentCookie(other, headers: ["host": "127.0.0.1"]) == nil)
        #expect(CookiePassthrough.bare("[::1]:8080") == "::1" && CookiePassthrough.bare("a.example:80") == "a.example")
    }

    @Test func aSecretIsRequiredOfEveryRequestButTheHealthCheck() async throws {
        let fixture = try ProxyFixture { $0.secret = "s3cret-token" }
        let path = fixture.path("rs:fit:20:20")

        #expect(await fixture.get(path).status == 403)
        #expect(errorMessage(await fixture.get(path)).contains("Authorization"))
        #expect(await fixture.get(path, headers: ["authorization": "Bearer wrong"]).status == 403)
        #expect(await fixture.get(path, headers: ["authorization": "s3cret-token"]).status == 403)
        #expect(await fixture.get(path, headers: ["authorization": "Bearer s3cret-token"]).status == 200)
        #expect(await fixture.get("/metrics").status == 403)
        for health in ["/healthz", "/health"] { #expect(await fixture.get(health).status == 200, "\(health)") }
        // Nothing was fetched for the refused requests
        #expect(fixture.origin.requestCount(for: "/a.jpg") == 1)
    }

    @Test func allowedSourcesArePrefixesThatCannotBeTalkedAround() throws {
        let policy = SourcePolicy(allowedSources: ["https://cdn.example.com/images/", "https://*.static.example/"])
        func allows(_ text: String) -> Bool {
            guard let url = URL(string: text) else { return false }
            return (try? policy.check(url)) != nil
        }
        #expect(allows("https://cdn.example.com/images/a.jpg"))
        #expect(allows("https://CDN.example.com/images/./a.jpg"))
        #expect(allows("https://eu.static.example/x/y.png"))
        #expect(!allows("https://cdn.example.com/other/a.jpg"))
        #expect(!allows("https://cdn.example.com/images/../secret.jpg"))
        #expect(!allows("https://cdn.example.com/images/%2E%2E/secret.jpg"))
        #expect(!allows("https://cdn.example.com/images/..%2Fsecret.jpg"))
        #expect(!allows("https://cdn.example.com@evil.example/images/a.jpg"))  // user info is not the host
        #expect(!allows("https://a.b.static.example.evil.example/x.png"))
        #expect(!allows("http://cdn.example.com/images/a.jpg"))  // the scheme is part of the prefix
        // A prefix that ends inside the host ends there: no longer host passes
        let bare = SourcePolicy(allowedSources: ["https://cdn.example.com"])
        #expect((try? bare.check(URL(string: "https://cdn.example.com/a.jpg")!)) != nil)
        #expect((try? bare.check(URL(string: "https://cdn.example.com.evil.example/a.jpg")!)) == nil)
        // Local sources are matched too, and skip the host rules
        let local = SourcePolicy(allowedSources: ["local:///public/"])
        #expect((try? local.check(URL(string: "local:///public/a.jpg")!)) != nil)
        #expect((try? local.check(URL(string: "local:///private/a.jpg")!)) == nil)
        // Object stores' buckets (imgproxy's IMGPROXY_S3_ALLOWED_BUCKETS, by prefix)
        let buckets = SourcePolicy(allowedSources: ["s3://media/", "abs://public-assets"])
        #expect((try? buckets.check(URL(string: "s3://media/photos/a.jpg")!)) != nil)
        #expect((try? buckets.check(URL(string: "abs://public-assets/a.jpg")!)) != nil)
        #expect((try? buckets.check(URL(string: "s3://media-private/a.jpg")!)) == nil)
        #expect((try? buckets.check(URL(string: "s3://other/media/a.jpg")!)) == nil)
        #expect((try? buckets.check(URL(string: "abs://public-assets-2/a.jpg")!)) == nil)
    }

    /// imgproxy 4's `IMGPROXY_*_DENIED_BUCKETS`, as URL prefixes: refused whatever the allow list says.
    @Test func deniedSourcesAreRefusedEvenWhereAllowed() async throws {
        var policy = SourcePolicy(allowedSources: ["s3://", "https://cdn.example.com/"])
        policy.deniedSources = ["s3://private", "https://cdn.example.com/internal/", "gs://secrets/"]
        func allows(_ text: String) -> Bool { (try? policy.check(URL(string: text)!)) != nil }
        #expect(allows("s3://media/a.jpg") && allows("https://cdn.example.com/a.jpg"))
        #expect(!allows("s3://private/a.jpg"), "a prefix ending inside the bucket ends there, as allowed ones do")
        #expect(allows("s3://private-2/a.jpg"))
        #expect(!allows("https://cdn.example.com/internal/a.jpg"))
        #expect(!allows("https://cdn.example.com/public/../internal/a.jpg"), "no climbing into a denied folder")
        #expect(!allows("https://cdn.example.com/public/%2E%2E/internal/a.jpg"))
        var denyOnly = SourcePolicy()
        denyOnly.deniedSources = ["gs://secrets/"]
        #expect((try? denyOnly.check(URL(string: "gs://secrets/a.jpg")!)) == nil)
        #expect((try? denyOnly.check(URL(string: "gs://public/a.jpg")!)) != nil)
        // Through the command, before any fetch
        let fixture = try ProxyFixture {
            $0.sourcePolicy = try ServeCommand.parse(
                parseArguments(
                    ["--unsigned", "--allow-private", "--deny-source", "http://127.0.0.1:*/internal/"],
                    options: ServeCommand.command.options),
                environment: [:]
            ).sourcePolicy
        }
        fixture.origin.setRoute("/internal/a.jpg", .bytes(fixture.jpeg, contentType: "image/jpeg"))
        let refused = await fixture.get(fixture.path("rs:fit:20:20", "/internal/a.jpg"))
        #expect(refused.status == 403, "\(errorMessage(refused))")
        #expect(fixture.origin.requestCount(for: "/internal/a.jpg") == 0)
        #expect(await fixture.get(fixture.path("rs:fit:20:20", "/a.jpg")).status == 200)
        #expect(throws: UsageError.self) {
            try ServeCommand.parse(
                parseArguments(["--unsigned", "--deny-source", "ftp://x/"], options: ServeCommand.command.options),
                environment: [:])
        }
    }

    @Test func aSourceOutsideTheAllowedPrefixesIsRefusedBeforeAnyFetch() async throws {
        let fixture = try ProxyFixture {
            $0.sourcePolicy = SourcePolicy(allowsPrivateAddresses: true, allowedSources: ["http://127.0.0.1:*/images/"])
        }
        fixture.origin.setRoute("/images/a.jpg", .bytes(fixture.jpeg, contentType: "image/jpeg"))

        #expect(await fixture.get(fixture.path("rs:fit:20:20", "/images/a.jpg")).status == 200)
        let refused = await fixture.get(fixture.path("rs:fit:20:20", "/a.jpg"))
        #expect(refused.status == 403, "\(errorMessage(refused))")
        #expect(fixture.origin.requestCount(for: "/a.jpg") == 0)
    }

    @Test func trustedSignaturesAreAcceptedWithoutAKeyThatSignsThem() async throws {
        let signer = try URLSigner(keyHex: "943b421c9eb07c83", saltHex: "520f986b99854578")
        let fixture = try ProxyFixture {
            $0.allowsUnsigned = false
            $0.signer = signer
            $0.trustedSignatures = ["kept-from-an-old-key"]
        }
        let path = "/rs:fit:40:40/plain/" + fixture.source()
        #expect(await fixture.get("/kept-from-an-old-key" + path).status == 200)
        #expect(await fixture.get("/" + signer.signature(for: path) + path).status == 200)
        #expect(await fixture.get("/another-signature" + path).status == 403)
        #expect(await fixture.get("/_" + path).status == 403)
    }

    /// imgproxy's `IMGPROXY_PROMETHEUS_NAMESPACE` left empty: bare metric names, the shared tier's too.
    @Test func anEmptyMetricsNamespaceGivesBareNames() {
        let shared = {
            var metrics = SharedCacheMetrics()
            metrics.hits = 2
            metrics.invalidRemoved = 4
            return metrics
        }()
        let metrics = ServerMetrics(namespace: "", queueLength: { 3 }, sharedTier: { shared })
        let text = metrics.prometheusText()
        let samples = prometheusSamples(text)
        #expect(samples["queue_length"] == 3 && samples["shared_cache_hits_total"] == 2)
        #expect(samples["shared_cache_discarded_total{reason=\"invalid\"}"] == 4)
        #expect(samples["shared_cache_discarded_total{reason=\"oversized\"}"] == 0)
        #expect(samples["requests_in_flight"] == 0 && !text.contains("imago_serve"))
        #expect(text.contains("# TYPE request_duration_seconds histogram\n"))
        let named = ServerMetrics(namespace: "img", queueLength: { 3 }, sharedTier: { shared }).prometheusText()
        #expect(prometheusSamples(named)["img_shared_cache_hits_total"] == 2)
        #expect(ServerMetrics.isValidNamespace("") && ServerMetrics.isValidNamespace("a_b:c1"))
        #expect(!ServerMetrics.isValidNamespace("1a") && !ServerMetrics.isValidNamespace("a b"))
    }
}
