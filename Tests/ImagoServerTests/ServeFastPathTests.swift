import Foundation
import Imago
import ImagoTesting
import Testing

@testable import ImagoServer

@Suite("ImageProxy and MicroHTTPServer: the cached path answers at once, checks once, counts once")
struct ServeFastPathTests {
    @Test(.timeLimit(.minutes(1)))
    func aCachedOutputIsAnsweredImmediatelyAndCountedOnce() async throws {
        let fixture = try ProxyFixture()
        let request = ServerRequest(method: "GET", path: fixture.path("rs:fit:80:80/f:webp"))
        // Not rendered yet: the immediate path declines (and counts nothing), the async path renders
        #expect(fixture.proxy.immediateResponse(to: request) == nil)
        #expect(fixture.proxy.metrics.inFlight == 0)
        let rendered = await fixture.proxy.respond(to: request)
        #expect(rendered.status == 200)
        // Now the memory output cache answers without waiting, the same bytes and validators
        let immediate = try #require(fixture.proxy.immediateResponse(to: request))
        #expect(immediate.status == 200 && immediate.body == rendered.body)
        #expect(immediate.header("ETag") == rendered.header("ETag"))
        #expect(immediate.header("Content-Type") == "image/webp")
        let conditional = try #require(
            fixture.proxy.immediateResponse(
                to: ServerRequest(
                    method: "GET", path: request.path, headers: ["If-None-Match": rendered.header("ETag") ?? ""])))
        #expect(conditional.status == 304 && conditional.body.isEmpty)
        // URL errors need no waiting either
        let bad = try #require(fixture.proxy.immediateResponse(to: ServerRequest(method: "GET", path: "/_/x:1/plain/")))
        #expect(bad.status == 400)

        let samples = prometheusSamples(fixture.proxy.metrics.prometheusText())
        #expect(samples["imago_serve_requests_total{status=\"200\"}"] == 2)
        #expect(samples["imago_serve_requests_total{status=\"304\"}"] == 1)
        #expect(samples["imago_serve_requests_total{status=\"400\"}"] == 1)
        #expect(samples["imago_serve_request_duration_seconds_count"] == 4)
        #expect(samples["imago_serve_cache_hits_total{tier=\"output_memory\"}"] == 2)
        #expect(samples["imago_serve_cache_hits_total{tier=\"origin\"}"] == 1)
        #expect(samples["imago_serve_requests_in_flight"] == 0)
        // A /metrics answered at once counts itself in flight, as one answered by respond(to:) does
        let metrics = try #require(fixture.proxy.immediateResponse(to: ServerRequest(method: "GET", path: "/metrics")))
        #expect(prometheusSamples(String(decoding: metrics.body, as: UTF8.self))["imago_serve_requests_in_flight"] == 1)
        #expect(fixture.origin.requestCount(for: "/a.jpg") == 1)
    }

    @Test func aRememberedPathStillNeedsItsOwnValidSignature() async throws {
        let signer = try URLSigner(keyHex: ImageProxyResponseTests.keyHex, saltHex: ImageProxyResponseTests.saltHex)
        let fixture = try ProxyFixture {
            $0.signer = signer
            $0.allowsUnsigned = false
        }
        let rest = "/rs:fit:64:64/f:png/plain/" + fixture.source()
        let good = "/" + signer.signature(for: rest) + rest
        // The good path twice (the second from the cache of checked paths), then forgeries of it: each refused
        for _ in 0..<2 { #expect(await fixture.get(good).status == 200) }
        let forged = "/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" + rest
        for _ in 0..<2 {
            #expect(await fixture.get(forged).status == 403)
            #expect(fixture.proxy.immediateResponse(to: ServerRequest(method: "GET", path: forged))?.status == 403)
        }
        #expect(await fixture.get("/_" + rest).status == 403)
        #expect(fixture.proxy.verifiedPaths.withLock { $0.value(for: forged, now: { .zero }) } == nil)
        #expect(fixture.proxy.verifiedPaths.withLock { $0.value(for: good, now: { .zero }) } != nil)
    }

    @Test func resizesDeclareTheSmallestDecodeTheyNeed() throws {
        func target(_ options: String) throws -> DecodeTarget? {
            var parsed = ProcessingOptions()
            for option in options.split(separator: "/") { try OptionParser.apply(option, to: &parsed) }
            return ProxyResize(parsed)?.decodeTarget
        }
        // fill and force need the whole box on both axes (cover); fit fits; a 0 side is unbounded and fits
        #expect(try target("rs:fill:256:256") == DecodeTarget(size: PixelSize(width: 256, height: 256), mode: .cover))
        #expect(try target("rs:force:100:50") == DecodeTarget(size: PixelSize(width: 100, height: 50), mode: .cover))
        #expect(try target("rs:fit:256:128") == DecodeTarget(size: PixelSize(width: 256, height: 128), mode: .fit))
        #expect(try target("rs:fill:256:0") == DecodeTarget(size: PixelSize(width: 256, height: 1 << 20), mode: .fit))
        #expect(
            try target("rs:fill:128:128/dpr:2") == DecodeTarget(size: PixelSize(width: 256, height: 256), mode: .cover))
        #expect(try target("q:80") == nil)
        // The pipeline request carries the resize first, so the decoder is given its target
        let request = ImageProxy.imageRequest(
            for: try {
                var o = ProcessingOptions(); try OptionParser.apply("rs:fill:64:64", to: &o); return o
            }(),
            source: URL(string: "http://127.0.0.1/a.jpg")!)
        #expect(request.processors.first?.decodeTarget?.mode == .cover && request.targetSize == nil)
    }

    @Test(.timeLimit(.minutes(1)))
    func aFillFromACoverDecodeMatchesTheFullDecode() async throws {
        // A 1600 × 800 JPEG filled into 200 × 200: decoded at 1/2 (800 × 400, covering 400 × 200), then cropped
        let fixture = try ProxyFixture()
        fixture.origin.setRoute(
            "/big.jpg", .bytes(try ServerTestImages.jpeg(width: 1600, height: 800), contentType: "image/jpeg"))
        let response = await fixture.get(fixture.path("rs:fill:200:200/g:we/f:png", "/big.jpg"))
        #expect(response.status == 200)
        let image = try ServerTestImages.decode(response.body)
        #expect(image.size == PixelSize(width: 200, height: 200))
        // West gravity keeps the left (red) half only; the top row is what halves() paints, red here too
        #expect(image[pixel: 10, 100].r > 200 && image[pixel: 10, 100].b < 60)
        #expect(image[pixel: 190, 100].r > 200 && image[pixel: 190, 100].b < 60)
        let centred = try ServerTestImages.decode(
            await fixture.get(fixture.path("rs:fill:200:200/f:png", "/big.jpg")).body)
        // Centred: the red/blue edge in the middle
        #expect(centred[pixel: 40, 100].r > 200 && centred[pixel: 160, 100].b > 200)
    }

    @Test(.timeLimit(.minutes(1)))
    func theServerAnswersCachedOutputsOnItsOwnThreadsWithoutTheAsyncHandler() async throws {
        let fixture = try ProxyFixture()
        let proxy = fixture.proxy
        let handled = Locked(0)
        let server = try MicroHTTPServer(
            host: "127.0.0.1", port: 0, threads: 2, immediate: { proxy.immediateResponse(to: $0) }
        ) { request in
            handled.withLock { $0 += 1 }
            return await proxy.respond(to: request)
        }
        defer { server.stop() }
        let client = TestHTTPClient()
        let url = URL(string: "http://127.0.0.1:\(server.port)" + fixture.path("rs:fit:80:80/f:webp"))!
        let first = try await client.send(url)
        #expect(first.status == 200 && first.body.count > 64)
        let again = try await withThrowingTaskGroup(of: Data.self) { group in
            for _ in 0..<20 { group.addTask { try await client.send(url).body } }
            return try await group.reduce(into: [Data]()) { $0.append($1) }
        }
        #expect(again.count == 20 && again.allSatisfy { $0 == first.body })
        #expect(handled.withLock { $0 } == 1)  // only the render went through the async handler
        #expect(await ImagoTesting.eventually(timeout: .seconds(10)) { server.inFlightCount == 0 })
        #expect(fixture.origin.requestCount(for: "/a.jpg") == 1)
    }

    @Test(.timeLimit(.minutes(1)))
    func theOriginalCacheHoldsTheOriginalBytesAndNoReencodedIntermediate() async throws {
        let originals = MockDataCache()
        let fixture = try ProxyFixture { $0.originalCache = originals }
        let response = await fixture.get(fixture.path("rs:fit:80:80/f:webp"))
        #expect(response.status == 200)
        await fixture.proxy.pipeline.waitForPendingCacheWrites()
        // One write: the origin's bytes as loaded (the pipeline's default policy would store the resized image,
        // JPEG-encoded, costing an encode per cold render)
        #expect(originals.writeCount == 1)
        #expect(originals.keys.count == 1 && originals.keys.allSatisfy { originals.data(for: $0) == fixture.jpeg })
        // Another output of the same source starts from those bytes, not from the origin
        let png = await fixture.get(fixture.path("rs:fit:40:40/f:png"))
        #expect(png.status == 200 && fixture.origin.requestCount(for: "/a.jpg") == 1)
    }

    @Test(.timeLimit(.minutes(1)))
    func flushingTheCachesWaitsForTheOriginalStoredAfterTheResponse() async throws {
        // Given a render answered while the store of its original is held (it runs after the response)
        let originals = HoldingDataCache()
        originals.gate.hold()
        let fixture = try ProxyFixture { $0.originalCache = originals }
        let response = await fixture.get(fixture.path("rs:fit:80:80/f:webp"))
        #expect(response.status == 200)
        #expect(await ImagoTesting.eventually { originals.gate.waitingCount == 1 })

        // When the caches are flushed (as on SIGTERM, the server stopped)
        let flushing = PendingCall { await fixture.proxy.flushCaches() }
        try await Task.sleep(for: .milliseconds(100))

        // Then the flush waits for the store, and returns with the origin's bytes in the cache
        #expect(!flushing.hasReturned, "returned while the original was still on its way to the cache")
        originals.gate.release()
        await flushing.value()
        #expect(originals.inner.writeCount == 1)
        #expect(
            originals.inner.keys.count == 1
                && originals.inner.keys.allSatisfy { originals.inner.entry(for: $0)?.data == fixture.jpeg })
    }

    @Test(.timeLimit(.minutes(1)))
    func flushingTheCachesWaitsForTheOutputsCopyToTheSharedTier() async throws {
        // Given a render answered while its output's copy to the shared tier is held (sent after the response)
        let shared = MockSharedCache()
        shared.holdWrites()
        let fixture = try ProxyFixture { $0.outputCache = OutputCache(shared: shared) }
        let response = await fixture.get(fixture.path("rs:fit:80:80/f:webp"))
        #expect(response.status == 200)
        #expect(await ImagoTesting.eventually { shared.heldWriteCount == 1 })

        // When the caches are flushed, the flush waits for the copy, and returns with the output in the tier
        let flushing = PendingCall { await fixture.proxy.flushCaches() }
        try await Task.sleep(for: .milliseconds(100))
        #expect(!flushing.hasReturned, "returned while the output was still on its way to the shared tier")
        shared.releaseWrites()
        await flushing.value()
        #expect(shared.writeCount == 1)
        #expect(shared.keys.count == 1)
    }
}
