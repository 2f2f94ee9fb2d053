import Foundation
import Imago
import ImagoTesting
import Testing

@testable import ImagoServer

@Suite(
    "ImageProxy: the source's Last-Modified and freshness passed on, as imgproxy's IMGPROXY_USE_LAST_MODIFIED and IMGPROXY_CACHE_CONTROL_PASSTHROUGH"
)
struct ImageProxySourceHeadersTests {
    static let modified = Date(timeIntervalSince1970: 1_700_000_000)
    static let modifiedText = HTTPDateParser.imfFixdate(from: modified)

    /// A proxy whose origin serves `/m.jpg` with `Last-Modified` and `cacheControl`.
    func fixture(
        cacheControl: String? = "max-age=600", _ configure: @escaping (inout ImageProxy.Configuration) -> Void
    ) throws -> ProxyFixture {
        let fixture = try ProxyFixture { configure(&$0) }
        var route = LoopbackServer.Route.bytes(fixture.jpeg, contentType: "image/jpeg")
            .withLastModified(Self.modified)
        if let cacheControl { route = route.withCacheControl(cacheControl) }
        fixture.origin.setRoute("/m.jpg", route)
        return fixture
    }

    @Test func lastModifiedIsSentAndIfModifiedSinceIsAnswered() async throws {
        let fixture = try fixture { $0.usesLastModified = true }
        let path = fixture.path("rs:fit:40:40", "/m.jpg")

        // The render carries the source's Last-Modified, and the origin was asked once
        let first = await fixture.get(path)
        #expect(first.status == 200)
        #expect(first.header("Last-Modified") == Self.modifiedText)
        #expect(fixture.origin.requestCount(for: "/m.jpg") == 1)

        // Not modified since then, or since later: 304 with the validators; since earlier: the image
        let later = HTTPDateParser.imfFixdate(from: Self.modified.addingTimeInterval(60))
        let earlier = HTTPDateParser.imfFixdate(from: Self.modified.addingTimeInterval(-60))
        for (since, status) in [(Self.modifiedText, 304), (later, 304), (earlier, 200), ("not a date", 200)] {
            let response = await fixture.get(path, headers: ["if-modified-since": since])
            #expect(response.status == status, "\(since)")
            #expect(response.header("Last-Modified") == Self.modifiedText)
            #expect(response.header("ETag") == first.header("ETag"))
        }
        // If-None-Match takes precedence (RFC 9110 §13.2.2): a tag that does not match gets the image
        let mismatch = await fixture.get(
            path, headers: ["if-modified-since": Self.modifiedText, "if-none-match": "\"other\""])
        #expect(mismatch.status == 200 && mismatch.body == first.body)
        // Every answer came from the one render
        #expect(fixture.origin.requestCount(for: "/m.jpg") == 1)
    }

    @Test func aLastModifiedBusterIsTheEarliestDateSent() async throws {
        // imgproxy's IMGPROXY_LAST_MODIFIED_BUSTER: a source modified before it is said to be modified then
        let buster = Self.modified.addingTimeInterval(3_600)
        let busterText = HTTPDateParser.imfFixdate(from: buster)
        let fixture = try fixture {
            $0.usesLastModified = true
            $0.lastModifiedBuster = buster
        }
        let path = fixture.path("rs:fit:40:40", "/m.jpg")
        #expect(await fixture.get(path).header("Last-Modified") == busterText)
        // A client holding the output from before the buster gets it again; one from after gets 304
        let before = await fixture.get(path, headers: ["if-modified-since": Self.modifiedText])
        #expect(before.status == 200 && before.header("Last-Modified") == busterText)
        #expect(await fixture.get(path, headers: ["if-modified-since": busterText]).status == 304)
        // A source modified after the buster keeps its own date
        let early = try self.fixture {
            $0.usesLastModified = true
            $0.lastModifiedBuster = Self.modified.addingTimeInterval(-3_600)
        }
        #expect(await early.get(early.path("rs:fit:40:40", "/m.jpg")).header("Last-Modified") == Self.modifiedText)
    }

    @Test func withoutTheSettingsNothingOfTheSourceIsPassedOn() async throws {
        let fixture = try fixture { _ in }
        let response = await fixture.get(fixture.path("rs:fit:40:40", "/m.jpg"))
        #expect(response.status == 200)
        #expect(response.header("Last-Modified") == nil)
        #expect(response.header("Cache-Control") == "public, max-age=31536000")
        let conditional = await fixture.get(
            fixture.path("rs:fit:40:40", "/m.jpg"), headers: ["if-modified-since": Self.modifiedText])
        #expect(conditional.status == 200)
    }

    @Test func cacheControlFollowsTheTimeLeftOfTheSourcesFreshness() async throws {
        let passes: (inout ImageProxy.Configuration) -> Void = { $0.passesSourceCacheControl = true }
        // max-age=600 at the origin: at most 600 s, a little less once time has passed
        let fresh = try fixture(cacheControl: "public, max-age=600", passes)
        let response = await fresh.get(fresh.path("rs:fit:40:40", "/m.jpg"))
        #expect(response.status == 200)
        let maxAge = try #require(response.header("Cache-Control")?.split(separator: "=").last.flatMap { Int($0) })
        #expect((590...600).contains(maxAge), "\(response.headers)")
        #expect(response.header("Last-Modified") == nil)

        // The seconds left count down from the render's fetch (a cached output too), and stop at 0
        var rendition = Rendition(data: Data(), format: .jpeg, etag: "\"x\"")
        let now = Date()
        rendition.sourceExpiresAt = now.addingTimeInterval(100.5)
        #expect(fresh.proxy.cacheControl(for: rendition, now: now) == "public, max-age=100")
        rendition.sourceExpiresAt = now.addingTimeInterval(-5)
        #expect(fresh.proxy.cacheControl(for: rendition, now: now) == "public, max-age=0")

        // no-cache and no-store: 0; nothing said: the proxy's own --max-age
        for said in ["no-cache", "no-store"] {
            let fixture = try fixture(cacheControl: said, passes)
            let answer = await fixture.get(fixture.path("rs:fit:40:40", "/m.jpg"))
            #expect(answer.header("Cache-Control") == "public, max-age=0", "\(said)")
        }
        let silent = try fixture(cacheControl: nil, passes)
        #expect(
            await silent.get(silent.path("rs:fit:40:40", "/m.jpg")).header("Cache-Control")
                == "public, max-age=31536000")
    }

    @Test(.timeLimit(.minutes(1)))
    func theSourcesFactsOutliveARestartInTheDiskCache() async throws {
        let fixture = try RestartFixture()
        let origin = fixture.origin
        origin.setRoute(
            "/m.jpg",
            .bytes(try ServerTestImages.jpeg(), contentType: "image/jpeg").withLastModified(Self.modified)
                .withCacheControl("max-age=86400"))
        let path = "/_/w:40/plain/" + origin.url(for: "/m.jpg").absoluteString
        var answers: [ServerResponse] = []
        for _ in 0..<2 {
            answers.append(
                try await fixture.respondAfterRestart(path) {
                    $0.usesLastModified = true
                    $0.passesSourceCacheControl = true
                })
        }
        // The second process answered from the disk, with the first render's Last-Modified and freshness
        #expect(origin.requestCount(for: "/m.jpg") == 1)
        #expect(answers.allSatisfy { $0.status == 200 && $0.header("Last-Modified") == Self.modifiedText })
        let ages = answers.compactMap { $0.header("Cache-Control")?.split(separator: "=").last.flatMap { Int($0) } }
        #expect(ages.count == 2 && ages.allSatisfy { (86_380...86_400).contains($0) }, "\(ages)")
    }

    @Test(.timeLimit(.minutes(1)), arguments: [true, false])
    func anOutputIsRenderedAgainOnceItsSourcesFreshnessRunsOut(keepsOriginals: Bool) async throws {
        let fixture = try ProxyFixture {
            $0.passesSourceCacheControl = true
            $0.originalCache = keepsOriginals ? MockDataCache() : nil
            $0.staleRetryInterval = .seconds(1)
            $0.maximumStaleRetryInterval = .seconds(1)  // no growth here: see aFailingOriginIsAskedLessOften
        }
        func serve(_ data: Data, etag: String) {
            fixture.origin.setRoute(
                "/r.jpg", .bytes(data, contentType: "image/jpeg").withETag(etag).withCacheControl("max-age=1"))
        }
        func waitOutTheSecond() async throws { try await Task.sleep(for: .milliseconds(1_100)) }
        serve(fixture.jpeg, etag: "\"v1\"")
        let path = fixture.path("rs:fit:40:40", "/r.jpg")
        let first = await fixture.get(path)
        #expect(first.status == 200)
        #expect(fixture.origin.requestCount(for: "/r.jpg") == 1)

        // Unchanged at the origin: one request (conditional, answered 304, when the original was kept), and the same
        // bytes and ETag, fresh again, without a render (the same validators)
        try await waitOutTheSecond()
        let unchanged = await fixture.get(path)
        #expect(unchanged.status == 200 && unchanged.body == first.body)
        #expect(unchanged.header("ETag") == first.header("ETag"))
        #expect(["public, max-age=1", "public, max-age=0"].contains(unchanged.header("Cache-Control")))
        #expect(fixture.origin.requestCount(for: "/r.jpg") == 2)
        let validator = fixture.origin.lastRequestHeaders(for: "/r.jpg")?["If-None-Match"]
        #expect(validator == (keepsOriginals ? "\"v1\"" : nil))

        // Changed at the origin: the new image, under a new ETag
        let gray = try ImageEncoderRegistry.makeDefault().encode(ServerTestImages.checkeredQuarter(), as: .jpeg)
        serve(gray, etag: "\"v2\"")
        try await waitOutTheSecond()
        let changed = await fixture.get(path)
        #expect(changed.status == 200 && changed.header("ETag") != first.header("ETag"))
        let pixel = try ServerTestImages.decode(changed.body)[pixel: 2, 2]
        #expect(abs(Int(pixel.r) - 128) < 8 && abs(Int(pixel.b) - 128) < 8, "\(pixel)")
        #expect(fixture.origin.requestCount(for: "/r.jpg") == 3)

        // The origin fails: the output as it was (stale-if-error), answered at once for the retry interval (1 s
        // here), then the origin is asked again
        fixture.origin.setRoute("/r.jpg", .status(500))
        try await waitOutTheSecond()
        let failing = await fixture.get(path)
        #expect(failing.status == 200 && failing.body == changed.body)
        #expect(["public, max-age=0", "public, max-age=1"].contains(failing.header("Cache-Control")))
        let asked = fixture.origin.requestCount(for: "/r.jpg")
        #expect(asked > 3)
        #expect(await fixture.get(path).body == changed.body)
        #expect(fixture.origin.requestCount(for: "/r.jpg") == asked)
        // An origin limiting this server (429) counts as failing too
        fixture.origin.setRoute("/r.jpg", .status(429))
        try await waitOutTheSecond()
        let limited = await fixture.get(path)
        #expect(limited.status == 200 && limited.body == changed.body)
        #expect(fixture.origin.requestCount(for: "/r.jpg") > asked)

        // Refused at the origin: its 403, not the old output
        fixture.origin.setRoute("/r.jpg", .status(403))
        try await waitOutTheSecond()
        let refused = await fixture.get(path)
        #expect(refused.status == 403 && errorMessage(refused) == "the origin answered HTTP 403")

        // Gone at the origin: a 404, not the old output
        fixture.origin.setRoute("/r.jpg", .status(404))
        try await waitOutTheSecond()
        #expect(await fixture.get(path).status == 404)

        // One output kept (unchanged), one rendered again (changed), two stale answers (one per retry interval)
        let samples = prometheusSamples(fixture.proxy.metrics.prometheusText())
        #expect(samples["imago_serve_outputs_renewed_total{outcome=\"unchanged\"}"] == 1)
        #expect(samples["imago_serve_outputs_renewed_total{outcome=\"rendered\"}"] == 1)
        #expect(samples["imago_serve_outputs_renewed_total{outcome=\"stale\"}"] == 2)
    }
}

extension ImageProxySourceHeadersTests {
    @Test(.timeLimit(.minutes(1)))
    func aSourceThatRevalidatesUnchangedAfterARestartIsNotRenderedAgain() async throws {
        let fixture = try RestartFixture()
        let origin = fixture.origin
        func serve(_ data: Data) {
            origin.setRoute(
                "/v.jpg", .bytes(data, contentType: "image/jpeg").withETag("\"v1\"").withCacheControl("max-age=1"))
        }
        serve(try ServerTestImages.jpeg())
        let path = "/_/w:40/plain/" + origin.url(for: "/v.jpg").absoluteString
        let first = try await fixture.respondAfterRestart(path) { $0.passesSourceCacheControl = true }
        // Other bytes under the same validator: only a render would show them. The source's validators were kept
        // on disk with the output, so the next process, once the second has passed, keeps the output instead.
        serve(try ImageEncoderRegistry.makeDefault().encode(ServerTestImages.checkeredQuarter(), as: .jpeg))
        try await Task.sleep(for: .milliseconds(1_100))
        let second = try await fixture.respondAfterRestart(path) { $0.passesSourceCacheControl = true }
        #expect(first.status == 200 && second.status == 200)
        #expect(second.body == first.body && second.header("ETag") == first.header("ETag"))
        #expect(origin.requestCount(for: "/v.jpg") == 2)
    }

    @Test(.timeLimit(.minutes(1)))
    func debugHeadersTellTheSourceAndResultSizesFromEveryTier() async throws {
        let fixture = try RestartFixture()
        let origin = fixture.origin
        let jpeg = try ServerTestImages.jpeg()
        origin.setRoute("/d.jpg", .bytes(jpeg, contentType: "image/jpeg"))
        let source = origin.url(for: "/d.jpg").absoluteString
        func headers(_ response: ServerResponse) -> [String?] {
            ["X-Origin-Content-Length", "X-Origin-Width", "X-Origin-Height", "X-Result-Width", "X-Result-Height"].map {
                response.header($0)
            }
        }
        // Rendered, then (a new process) from the disk: the same headers, one origin fetch
        for _ in 0..<2 {
            let response = try await fixture.respondAfterRestart("/_/w:100/plain/" + source) {
                $0.sendsDebugHeaders = true
            }
            #expect(response.status == 200)
            #expect(headers(response) == ["\(jpeg.count)", "400", "200", "100", "50"])
        }
        #expect(origin.requestCount(for: "/d.jpg") == 1)
        // The source's own bytes (skip_processing): its size twice
        let passed = try await fixture.respondAfterRestart("/_/skp:jpg/plain/" + source) {
            $0.sendsDebugHeaders = true
        }
        #expect(headers(passed) == ["\(jpeg.count)", "400", "200", "400", "200"])
        // Off (the default): none
        let plain = try await fixture.respondAfterRestart("/_/w:100/plain/" + source)
        #expect(plain.status == 200 && headers(plain).allSatisfy { $0 == nil })
    }

    /// The stale-if-error interval doubles while the origin keeps failing (1 s, 2 s, then the 2 s cap here), and
    /// starts again from 1 s once the origin has answered.
    @Test(.timeLimit(.minutes(1)))
    func aFailingOriginIsAskedLessOften() async throws {
        let fixture = try ProxyFixture {
            $0.passesSourceCacheControl = true
            $0.staleRetryInterval = .seconds(1)
            $0.maximumStaleRetryInterval = .seconds(2)
        }
        func serve() {
            fixture.origin.setRoute(
                "/f.jpg",
                .bytes(fixture.jpeg, contentType: "image/jpeg").withETag("\"f1\"").withCacheControl("max-age=1"))
        }
        func wait(_ milliseconds: Int) async throws { try await Task.sleep(for: .milliseconds(milliseconds)) }
        func maxAge(_ response: ServerResponse) -> Int? {
            response.header("Cache-Control")?.split(separator: "=").last.flatMap { Int($0) }
        }
        let path = fixture.path("rs:fit:40:40", "/f.jpg")
        var asked: Int { fixture.origin.requestCount(for: "/f.jpg") }
        serve()
        let first = await fixture.get(path)
        #expect(first.status == 200)
        fixture.origin.setRoute("/f.jpg", .status(500))
        try await wait(1_100)
        // Failure 1: answered stale for 1 s
        let stale1 = await fixture.get(path)
        #expect(stale1.status == 200 && stale1.body == first.body && (maxAge(stale1) ?? 9) <= 1)
        try await wait(1_100)
        // Failure 2: the origin was asked again after 1 s; now 2 s
        let before2 = asked
        let stale2 = await fixture.get(path)
        #expect(asked > before2 && stale2.status == 200 && maxAge(stale2).map { (1...2).contains($0) } == true)
        try await wait(1_100)
        // 1.1 s into the 2 s: not asked
        let quiet = asked
        #expect(await fixture.get(path).body == first.body)
        #expect(asked == quiet)
        try await wait(1_000)
        // Failure 3: asked after 2 s; still 2 s (the cap)
        let stale3 = await fixture.get(path)
        #expect(asked > quiet && stale3.status == 200 && maxAge(stale3).map { (1...2).contains($0) } == true)
        // The origin answers again: the output is renewed, and a later failure starts again from 1 s
        serve()
        try await wait(2_100)
        #expect(await fixture.get(path).status == 200)
        fixture.origin.setRoute("/f.jpg", .status(500))
        try await wait(1_100)
        let again = await fixture.get(path)
        #expect(
            again.status == 200 && (maxAge(again) ?? 9) <= 1, "\(String(describing: again.header("Cache-Control")))")
    }
}
