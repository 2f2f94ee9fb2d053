import Foundation
import ImagoCore
import ImagoTesting
import Testing

@Suite("Pipeline revalidation: stale-while-revalidate", .timeLimit(.minutes(1)))
struct PipelineRevalidationTests {
    let red = RGBA(r: 200, g: 0, b: 0, a: 255)
    let blue = RGBA(r: 0, g: 0, b: 200, a: 255)

    /// Loads `url` once so that the disk holds it stale (`max-age=0`), then empties the memory cache.
    func primeStale(_ f: PipelineFixture, _ url: URL, etag: String) async throws {
        f.serve(url, color: red, headers: ["ETag": etag, "Cache-Control": "max-age=0"])
        _ = try await f.pipeline.image(for: url)
        #expect(await f.waitForDisk(url.absoluteString))
        f.imageCache.removeAll()
    }

    @Test func notModifiedRefreshesOnlyTheMetadata() async throws {
        let f = PipelineFixture()
        let url = testURL("stale304.img")
        try await primeStale(f, url, etag: "\"v1\"")

        // When the stale entry is requested, with updates
        let task = f.pipeline.loadImage(with: ImageRequest(url: url, options: [.deliversUpdates]))
        var events: [String] = []
        for await event in task.events {
            switch event {
            case .finished(let result):
                let response = try result.get()
                #expect(response.source == .disk)
                #expect(response.isStale)
                events.append("finished")
            case .updated: events.append("updated")
            default: break
            }
        }

        // Then it was delivered at once, revalidated with If-None-Match, and only the metadata changed
        #expect(events == ["finished"])
        #expect(f.loader.requests.last?.validators?.etag == "\"v1\"")
        #expect(f.loader.notModifiedCount == 1)
        #expect(f.dataCache.metadataUpdateCount == 1)
        #expect(f.dataCache.writeCount == 1)
        #expect(f.pipeline.statistics.revalidationsNotModified == 1)
    }

    @Test func newContentUpdatesCachesAndSubscribers() async throws {
        let f = PipelineFixture()
        let url = testURL("stale200.img")
        try await primeStale(f, url, etag: "\"v1\"")
        let newData = f.serve(url, color: blue, headers: ["ETag": "\"v2\""])

        let task = f.pipeline.loadImage(with: ImageRequest(url: url, options: [.deliversUpdates]))
        var colors: [String: RGBA] = [:]
        for await event in task.events {
            switch event {
            case .finished(let result): colors["finished"] = try result.get().image.image[pixel: 0, 0]
            case .updated(let response): colors["updated"] = response.image.image[pixel: 0, 0]
            default: break
            }
        }

        #expect(colors["finished"] == red)
        #expect(colors["updated"] == blue)
        #expect(f.dataCache.entry(for: url.absoluteString)?.data == newData)
        #expect(f.pipeline.cachedImage(for: ImageRequest(url: url))?.image[pixel: 0, 0] == blue)
        #expect(f.pipeline.statistics.revalidationsUpdated == 1)
    }

    @Test func updatesReachTheUpdatedCallback() async throws {
        let f = PipelineFixture()
        let url = testURL("stale-callback.img")
        try await primeStale(f, url, etag: "\"v1\"")
        f.serve(url, color: blue, headers: ["ETag": "\"v2\""])
        let updates = Recorder<RGBA>()

        f.pipeline.loadImage(
            with: ImageRequest(url: url, options: [.deliversUpdates]),
            updated: { updates.append($0.image.image[pixel: 0, 0]) }
        ) { _ in }

        #expect(await ImagoTesting.eventually { updates.count == 1 })
        #expect(updates.all == [blue])
    }

    @Test func revalidatingBeforeDeliveryWaitsForTheOriginsAnswer() async throws {
        let f = PipelineFixture()
        let waits = ImageRequest.Options.revalidatesBeforeDelivery

        // 304: the entry itself, fresh again, from the disk; nothing rewritten but the metadata
        let same = testURL("first-304.img")
        try await primeStale(f, same, etag: "\"v1\"")
        f.serve(same, color: red, headers: ["ETag": "\"v1\"", "Cache-Control": "max-age=600"])
        let unchanged = try await f.pipeline.data(for: ImageRequest(url: same, options: waits))
        #expect(unchanged.source == .disk && !unchanged.isStale)
        #expect(f.loader.notModifiedCount == 1)
        let renewed = try #require(unchanged.metadata?.expiresAt)
        #expect(renewed > Date().addingTimeInterval(590))
        #expect(f.dataCache.metadataUpdateCount == 1)

        // New bytes: delivered by the request that asked (the image too), and stored for the next
        let changed = testURL("first-200.img")
        try await primeStale(f, changed, etag: "\"v1\"")
        let newData = f.serve(changed, color: blue, headers: ["ETag": "\"v2\"", "Cache-Control": "max-age=600"])
        let updated = try await f.pipeline.response(for: ImageRequest(url: changed, options: waits))
        #expect(updated.source == .network && !updated.isStale)
        #expect(updated.image.image[pixel: 0, 0] == blue)
        #expect(f.dataCache.entry(for: changed.absoluteString)?.data == newData)
        #expect(f.pipeline.statistics.revalidationsUpdated == 1)

        // The origin fails: the stale entry, marked stale, rather than an error
        let failing = testURL("first-failed.img")
        try await primeStale(f, failing, etag: "\"v1\"")
        let stored = try #require(f.dataCache.entry(for: failing.absoluteString)?.data)
        f.loader.setFailure(.timedOut(url: failing), for: failing)
        let stale = try await f.pipeline.data(for: ImageRequest(url: failing, options: waits))
        #expect(stale.source == .disk && stale.isStale)
        #expect(stale.data == stored)
        #expect(f.loader.loadCount(for: failing) == 2)

        // The origin says the source is gone: its 404, and nothing of it is kept
        let gone = testURL("first-gone.img")
        try await primeStale(f, gone, etag: "\"v1\"")
        f.loader.setFailure(.statusCode(404, url: gone), for: gone)
        await #expect(throws: ImagePipeline.Error.dataLoadingFailed(url: gone, underlying: .statusCode(404, url: gone)))
        {
            try await f.pipeline.data(for: ImageRequest(url: gone, options: waits))
        }
        #expect(f.dataCache.entry(for: gone.absoluteString) == nil)

        // The origin refuses (403): its 403 rather than the stale entry, which is kept (the refusal may depend on
        // the credentials); a 429 is the origin's load, so the stale entry is delivered
        let refused = testURL("first-refused.img")
        try await primeStale(f, refused, etag: "\"v1\"")
        f.loader.setFailure(.statusCode(403, url: refused), for: refused)
        await #expect(
            throws: ImagePipeline.Error.dataLoadingFailed(url: refused, underlying: .statusCode(403, url: refused))
        ) {
            try await f.pipeline.data(for: ImageRequest(url: refused, options: waits))
        }
        #expect(f.dataCache.entry(for: refused.absoluteString) != nil)
        f.loader.setFailure(.statusCode(429, url: refused), for: refused)
        let limited = try await f.pipeline.data(for: ImageRequest(url: refused, options: waits))
        #expect(limited.source == .disk && limited.isStale)
    }

    @Test func aSourceGoneAtTheOriginLeavesTheCachesInTheBackground() async throws {
        let f = PipelineFixture()
        let url = testURL("gone-background.img")
        try await primeStale(f, url, etag: "\"v1\"")
        f.loader.setFailure(.statusCode(410, url: url), for: url)

        // The stale entry is delivered at once, as before; the origin's 410 then removes it
        let response = try await f.pipeline.data(for: ImageRequest(url: url))
        #expect(response.source == .disk && response.isStale)
        #expect(await ImagoTesting.eventually { f.dataCache.entry(for: url.absoluteString) == nil })
        await #expect(throws: ImagePipeline.Error.self) { try await f.pipeline.image(for: url) }
    }

    @Test func freshEntriesAreNotRevalidated() async throws {
        let f = PipelineFixture()
        let url = testURL("fresh.img")
        f.serve(url, headers: ["ETag": "\"v1\"", "Cache-Control": "max-age=3600"])
        _ = try await f.pipeline.image(for: url)
        #expect(await f.waitForDisk(url.absoluteString))
        f.imageCache.removeAll()

        let response = try await f.pipeline.response(for: ImageRequest(url: url))

        #expect(response.source == .disk)
        #expect(!response.isStale)
        #expect(f.loader.loadCount == 1)
    }

    @Test func configuredTTLMakesEntriesStale() async throws {
        let f = PipelineFixture { $0.freshness = .fixed(.zero) }
        let url = testURL("ttl.img")
        let data = MockImageDecoder.make(width: 2, height: 2, color: red)
        f.dataCache.store(data, for: url.absoluteString)
        f.loader.setResponse(data, for: url)

        let response = try await f.pipeline.response(for: ImageRequest(url: url))

        #expect(response.isStale)
        #expect(await ImagoTesting.eventually { f.pipeline.statistics.revalidationsNotModified == 1 })  // same bytes
    }

    @Test func noStoreResponsesAreNotWrittenToDisk() async throws {
        let f = PipelineFixture()
        let url = testURL("nostore.img")
        f.serve(url, headers: ["Cache-Control": "no-store"])

        _ = try await f.pipeline.image(for: url)
        _ = try await f.pipeline.image(for: ImageRequest(url: url, options: [.skipsMemoryCacheReads]))

        #expect(f.dataCache.writeCount == 0)
        #expect(f.loader.loadCount == 2)
    }
}

@Suite("Pipeline failure cache", .timeLimit(.minutes(1)))
struct PipelineFailureCacheTests {
    @Test func aRememberedRefusalSaysWhyAsTheFirstFailureDid() async throws {
        let f = PipelineFixture()
        let url = testURL("pinned.img")
        let refusal = DataLoadingError.tlsRefused(url: url, reason: "SSL certificate problem: self-signed certificate")
        f.loader.setFailure(refusal, for: url)
        await #expect(throws: ImagePipeline.Error.dataLoadingFailed(url: url, underlying: refusal)) {
            try await f.pipeline.image(for: url)
        }

        // The fast failure keeps the refusal's sentence (it was "rejected response" alone)
        let second = await #expect(throws: ImagePipeline.Error.self) { try await f.pipeline.image(for: url) }
        guard case .failedRecently(_, _, .rejected(let why))? = second else {
            Issue.record("expected a remembered refusal, got \(String(describing: second))")
            return
        }
        #expect(why == refusal.description)
        #expect("\(second!)".contains("failed recently: the TLS connection to \(url.redactedString) was refused: SSL"))
        #expect(f.loader.loadCount == 1)
    }

    @Test func recentFailureFailsFastUntilRetried() async throws {
        let f = PipelineFixture()
        let url = testURL("broken.img")
        f.loader.setFailure(.statusCode(410, url: url), for: url)
        await #expect(throws: ImagePipeline.Error.self) { try await f.pipeline.image(for: url) }

        // A second request fails fast, without a load
        do {
            _ = try await f.pipeline.image(for: url)
            Issue.record("expected failedRecently")
        } catch {
            guard case .failedRecently(let failedURL, _, let reason) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(failedURL == url && reason == .http(410))
        }
        #expect(f.loader.loadCount == 1)
        #expect(f.pipeline.statistics.failureCacheHits == 1)

        // .skipsFailureCacheReads bypasses it, and a success clears it
        f.serve(url)
        _ = try await f.pipeline.image(for: ImageRequest(url: url, options: [.skipsFailureCacheReads]))
        #expect(f.loader.loadCount == 2)
        f.imageCache.removeAll()
        _ = try await f.pipeline.image(for: ImageRequest(url: url, options: [.skipsDiskCacheReads]))
        #expect(f.loader.loadCount == 3)
    }

    @Test func invalidationForgetsTheFailure() async throws {
        let f = PipelineFixture()
        let url = testURL("broken2.img")
        await #expect(throws: ImagePipeline.Error.self) { try await f.pipeline.image(for: url) }
        f.serve(url)

        f.pipeline.removeAll(for: url)
        _ = try await f.pipeline.image(for: url)

        #expect(f.loader.loadCount == 2)
    }

    @Test func disabledFailureCacheAlwaysLoads() async throws {
        let f = PipelineFixture { $0.failureCache = nil }
        let url = testURL("broken3.img")
        await #expect(throws: ImagePipeline.Error.self) { try await f.pipeline.image(for: url) }
        await #expect(throws: ImagePipeline.Error.self) { try await f.pipeline.image(for: url) }
        #expect(f.loader.loadCount == 2)
    }
}

@Suite("Pipeline cache keys, policies and invalidation", .timeLimit(.minutes(1)))
struct PipelineCacheKeyTests {
    @Test func droppingQueryItemsMatchesCaseInsensitivelyWithPrefixesAndKeepsOrder() {
        let url = URL(string: "https://cdn.example.com/a.jpg?w=10&X-Amz-Signature=abc&TOKEN=t&x-amz-date=1&h=20")!
        var request = ImageRequest(url: url)
        request.cacheKeyPolicy = .droppingQueryItems(["token", "expires", "X-Amz-*"])
        #expect(request.sourceKey == "https://cdn.example.com/a.jpg?w=10&h=20")

        request.cacheKeyPolicy = .droppingQueryItems(["w", "h", "token", "x-amz-*"])
        #expect(request.sourceKey == "https://cdn.example.com/a.jpg")

        request.cacheKeyPolicy = .custom("photo-17")
        #expect(request.sourceKey == "photo-17")
        // The default policy keeps every item, but a secret's value only as its SHA-256 (never the value itself)
        #expect(
            ImageRequest(url: url).sourceKey
                == "https://cdn.example.com/a.jpg?w=10"
                + "&X-Amz-Signature=sha256-ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
                + "&TOKEN=sha256-e3b98a4da31a127d4bde6e43033f66ba274cab0eb7eb1c70ec41402bf6273dd8&x-amz-date=1&h=20")
        #expect(ImageRequest(url: URL(string: "https://cdn.example.com/a.jpg?w=10")!).sourceKey.hasSuffix("?w=10"))
    }

    @Test func memoryKeyCombinesSourceSizeFlagsAndProcessors() {
        var request = ImageRequest(
            url: URL(string: "https://e.com/x.png")!, processors: [MockProcessor("a"), MockProcessor("b")],
            targetSize: PixelSize(width: 3, height: 4))
        request.options = [.decodesFirstFrameOnly]
        let variant = ImageCacheKey.Variant(
            targetSize: PixelSize(width: 3, height: 4), isFirstFrameOnly: true, processors: ["a", "b"])
        #expect(request.imageCacheKey == ImageCacheKey(source: "https://e.com/x.png", variant: variant))
        #expect(
            request.imageCacheKey.dataCacheKey
                == "https://e.com/x.png variant:8:size=3x4,11:first-frame,11:processor=a,11:processor=b")
        #expect(request.processedDataCacheKey == request.imageCacheKey.dataCacheKey)
    }

    @Test func signedURLsWithDifferentTokensShareOneEntryButNotALoad() async throws {
        let f = PipelineFixture()
        func signed(_ token: String) -> ImageRequest {
            var r = ImageRequest(url: URL(string: "https://cdn.example.com/p.img?id=1&token=\(token)")!)
            r.cacheKeyPolicy = .droppingQueryItems(["token"])
            return r
        }
        let a = signed("aaa")
        let b = signed("bbb")
        f.serve(a.url!)
        f.serve(b.url!)
        f.loader.hold(a.url!)
        let results = Recorder<Bool>()
        f.pipeline.loadImage(with: a) { results.append((try? $0.get()) != nil) }
        f.pipeline.loadImage(with: b) { results.append((try? $0.get()) != nil) }
        #expect(await ImagoTesting.eventually { f.loader.heldCount == 1 })
        f.loader.release(a.url!)
        #expect(await ImagoTesting.eventually { results.count == 2 })

        let c = try await f.pipeline.response(for: signed("ccc"))

        // Each token loads with its own URL (issue 23 item 8 changed this from one shared load)
        #expect(f.loader.loadCount == 2)
        #expect(Set(f.loader.requests.map(\.url)) == [a.url!, b.url!])
        #expect(c.source == .memory)
        #expect(f.imageCache.keys == [ImageCacheKey("https://cdn.example.com/p.img?id=1")])
        #expect(await f.waitForDisk("https://cdn.example.com/p.img?id=1"))
    }

    @Test func removeAllForURLDropsEveryVariantFromBothCaches() async throws {
        let f = PipelineFixture()
        let url = testURL("inv.img")
        let other = testURL("keep.img")
        f.serve(url)
        f.serve(other)
        _ = try await f.pipeline.image(for: url)
        _ = try await f.pipeline.image(for: ImageRequest(url: url, processors: [MockProcessor("p")]))
        _ = try await f.pipeline.image(for: ImageRequest(url: url, targetSize: PixelSize(width: 2, height: 2)))
        _ = try await f.pipeline.image(for: other)
        #expect(await f.waitForDisk(url.absoluteString))
        #expect(f.imageCache.keys.count == 4, "\(f.imageCache.keys)")

        f.pipeline.removeAll(for: url)

        #expect(f.imageCache.keys == [ImageCacheKey(other.absoluteString)])
        #expect(!f.dataCache.containsData(for: url.absoluteString))
        #expect(await f.waitForDisk(other.absoluteString))
    }

    @Test func storeEncodedImagesKeepsProcessedImagesOnDisk() async throws {
        let f = PipelineFixture { $0.dataCachePolicy = .storeEncodedImages }
        let url = testURL("enc.img")
        f.serve(url, color: RGBA(r: 10, g: 0, b: 0, a: 255))
        let p = MockProcessor("p", redIncrement: 5)
        let request = ImageRequest(url: url, processors: [p])
        _ = try await f.pipeline.image(for: request)
        #expect(await f.waitForDisk(request.processedDataCacheKey))
        #expect(!f.dataCache.containsData(for: url.absoluteString))  // originals only for unprocessed requests
        f.imageCache.removeAll()

        // A cold start reads the processed image: no load, no processing
        let response = try await f.pipeline.response(for: request)

        #expect(response.source == .disk)
        #expect(response.image.image[pixel: 0, 0].r == 15)
        #expect(p.processCount == 1)
        #expect(f.loader.loadCount == 1)
        #expect(f.encoder.encodeCount == 1)

        // …and invalidation removes it too
        f.pipeline.removeAll(for: url)
        #expect(f.dataCache.keys.isEmpty)
    }
}

@Suite("Pipeline failure cache: undecodable downloads", .timeLimit(.minutes(1)))
struct PipelineUndecodableTests {
    @Test func undecodableDownloadIsRememberedLikeAFailedLoad() async throws {
        let f = PipelineFixture(disk: false)
        let url = testURL("garbage.img")
        f.loader.setResponse(Data("<html>not an image</html>".utf8), for: url)
        let first = await #expect(throws: ImagePipeline.Error.self) { try await f.pipeline.image(for: url) }
        guard case .decodingFailed(_, let codec)? = first else {
            Issue.record("expected decodingFailed, got \(String(describing: first))")
            return
        }

        do {
            _ = try await f.pipeline.image(for: url)
            Issue.record("expected failedRecently")
        } catch {
            guard case .failedRecently(_, _, .decode(let why)) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            // The fast failure says why the bytes did not decode, as the first failure did
            #expect(why == codec.description)
            #expect("\(error)".contains("failed recently: undecodable data: \(why)"), "\(error)")
        }
        #expect(f.loader.loadCount == 1)
        #expect(f.pipeline.statistics.failures[.failedRecently] == 1)
    }
}
