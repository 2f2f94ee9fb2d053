import Foundation
import ImagoCore
import ImagoTesting
import Testing

@Suite("Pipeline flow: each layer of one request", .timeLimit(.minutes(1)))
struct PipelineFlowTests {
    @Test func loadsFromNetworkThenStoresInBothCaches() async throws {
        // Given a served image and empty caches
        let f = PipelineFixture()
        let url = testURL("a.img")
        let data = f.serve(url, width: 8, height: 6)

        // When it is requested
        let response = try await f.pipeline.response(for: ImageRequest(url: url))

        // Then it came from the network, decoded once, and both caches hold it
        #expect(response.source == .network)
        #expect(response.image.image.size == PixelSize(width: 8, height: 6))
        #expect(response.image.image[pixel: 3, 2] == RGBA(r: 10, g: 20, b: 30, a: 255))
        #expect(f.loader.loadCount == 1)
        #expect(f.decoder.decodeCount == 1)
        #expect(f.imageCache.keys == [ImageCacheKey(url.absoluteString)])
        #expect(await f.waitForDisk(url.absoluteString))
        #expect(f.dataCache.entry(for: url.absoluteString)?.data == data)
        #expect(response.metrics.load != nil && response.metrics.decode != nil)
    }

    @Test func memoryHitReturnsWithoutLoadingOrDecoding() async throws {
        let f = PipelineFixture()
        let url = testURL("m.img")
        f.serve(url)
        _ = try await f.pipeline.image(for: url)

        let response = try await f.pipeline.response(for: ImageRequest(url: url))

        #expect(response.source == .memory)
        #expect(f.loader.loadCount == 1)
        #expect(f.decoder.decodeCount == 1)
        #expect(f.pipeline.cachedImage(for: ImageRequest(url: url)) != nil)
        #expect(f.pipeline.statistics.memoryHits == 1)
    }

    @Test func diskHitDecodesAndFillsMemoryWithoutNetwork() async throws {
        let f = PipelineFixture()
        let url = testURL("d.img")
        f.serve(url)
        _ = try await f.pipeline.image(for: url)
        #expect(await f.waitForDisk(url.absoluteString))
        f.imageCache.removeAll()

        let response = try await f.pipeline.response(for: ImageRequest(url: url))

        #expect(response.source == .disk)
        #expect(response.metrics.diskRead != nil)
        #expect(f.loader.loadCount == 1)
        #expect(f.decoder.decodeCount == 2)
        #expect(f.imageCache.keys == [ImageCacheKey(url.absoluteString)])
    }

    @Test func cacheOnlyMissFailsWithNotCached() async throws {
        let f = PipelineFixture()
        let url = testURL("c.img")
        f.serve(url)

        await #expect(throws: ImagePipeline.Error.notCached(url.absoluteString)) {
            try await f.pipeline.image(for: ImageRequest(url: url, options: [.skipsLoading]))
        }
        #expect(f.loader.loadCount == 0)
    }

    @Test func cacheOnlyHitsDisk() async throws {
        let f = PipelineFixture()
        let url = testURL("c2.img")
        f.dataCache.store(
            MockImageDecoder.make(width: 2, height: 2, color: RGBA(r: 1, g: 2, b: 3, a: 4)), for: url.absoluteString)

        let response = try await f.pipeline.response(for: ImageRequest(url: url, options: [.skipsLoading]))

        #expect(response.source == .disk)
        #expect(f.loader.loadCount == 0)
    }

    @Test func reloadIgnoresBothCachesAndStoresAgain() async throws {
        let f = PipelineFixture()
        let url = testURL("r.img")
        f.serve(url, color: RGBA(r: 1, g: 1, b: 1, a: 255))
        _ = try await f.pipeline.image(for: url)
        #expect(await f.waitForDisk(url.absoluteString))
        f.serve(url, color: RGBA(r: 2, g: 2, b: 2, a: 255))

        let response = try await f.pipeline.response(for: ImageRequest(url: url, options: [.reloadsIgnoringCaches]))

        #expect(response.source == .network)
        #expect(f.loader.loadCount == 2)
        #expect(response.image.image[pixel: 0, 0].r == 2)
        let cached = try #require(f.pipeline.cachedImage(for: ImageRequest(url: url)))
        #expect(cached.image[pixel: 0, 0].r == 2)
    }

    @Test func processorsRunInOrderAndExtendTheKey() async throws {
        let f = PipelineFixture()
        let url = testURL("p.img")
        f.serve(url, color: RGBA(r: 10, g: 0, b: 0, a: 255))
        let a = MockProcessor("a", redIncrement: 5)
        let b = MockProcessor("b", redIncrement: 7)

        let image = try await f.pipeline.image(for: ImageRequest(url: url, processors: [a, b]))

        #expect(image.image[pixel: 0, 0].r == 22)
        #expect(a.processCount == 1 && b.processCount == 1)
        #expect(
            f.imageCache.keys == [ImageCacheKey(source: url.absoluteString, variant: .init(processors: ["a", "b"]))])
    }

    @Test func targetSizeDownsamplesWhileDecodingAndIsPartOfTheKey() async throws {
        let f = PipelineFixture()
        let url = testURL("t.img")
        f.serve(url, width: 100, height: 50)

        let image = try await f.pipeline.image(
            for: ImageRequest(url: url, targetSize: PixelSize(width: 10, height: 10)))

        #expect(image.image.size == PixelSize(width: 10, height: 5))
        #expect(f.decoder.targetSizes == [PixelSize(width: 10, height: 10)])
        #expect(
            f.imageCache.keys
                == [
                    ImageCacheKey(
                        source: url.absoluteString, variant: .init(targetSize: PixelSize(width: 10, height: 10)))
                ])
    }

    @Test func loaderFailureIsReportedWithTheURL() async throws {
        let f = PipelineFixture()
        let url = testURL("missing.img")

        await #expect(throws: ImagePipeline.Error.dataLoadingFailed(url: url, underlying: .statusCode(404, url: url))) {
            try await f.pipeline.image(for: url)
        }
        #expect(f.pipeline.statistics.failures[.dataLoadingFailed] == 1)
    }

    @Test func corruptDataFailsDecoding() async throws {
        let f = PipelineFixture()
        let url = testURL("corrupt.img")
        f.loader.setResponse(Data("not an image".utf8), for: url)

        do {
            _ = try await f.pipeline.image(for: url)
            Issue.record("expected a decoding failure")
        } catch {
            guard case .decodingFailed = error else {
                Issue.record("unexpected \(error)")
                return
            }
        }
    }

    @Test func processingFailureNamesTheProcessor() async throws {
        let f = PipelineFixture()
        let url = testURL("pf.img")
        f.serve(url)
        let failing = MockProcessor("broken", fails: true)

        await #expect(
            throws: ImagePipeline.Error.processingFailed(identifier: "broken", reason: "mock processor failure")
        ) {
            try await f.pipeline.image(for: ImageRequest(url: url, processors: [failing]))
        }
    }

    @Test func customDataSourceIsDecodedWithoutTheLoader() async throws {
        let f = PipelineFixture()
        let data = MockImageDecoder.make(width: 3, height: 3, color: RGBA(r: 9, g: 9, b: 9, a: 255))

        let response = try await f.pipeline.response(for: ImageRequest(source: .data(id: "inline-1", data)))

        #expect(response.source == .custom)
        #expect(response.image.image.size == PixelSize(width: 3, height: 3))
        #expect(f.loader.loadCount == 0)
    }

    @Test func customLoaderSourceRunsOnceAndIsStoredOnDisk() async throws {
        let f = PipelineFixture()
        let calls = Locked(0)
        let request = ImageRequest(
            source: .loader(id: "db:42") {
                calls.withLock { $0 += 1 }
                return MockImageDecoder.make(width: 4, height: 4, color: RGBA(r: 1, g: 1, b: 1, a: 255))
            })

        let response = try await f.pipeline.response(for: request)

        #expect(response.source == .custom)
        #expect(calls.value == 1)
        #expect(await f.waitForDisk("db:42"))
    }

    @Test func callbackAPIDeliversProgressAndResultOnTheCallbackQueue() async throws {
        let queue = DispatchQueue(label: "test.callbacks")
        let f = PipelineFixture { $0.callbackQueue = queue }
        let url = testURL("cb.img")
        f.serve(url, payload: 1000)
        let progress = Recorder<ImageTask.Progress>()
        let results = Recorder<ImageResponse.Source>()

        f.pipeline.loadImage(
            with: ImageRequest(url: url),
            progress: { p in
                dispatchPrecondition(condition: .onQueue(queue))
                progress.append(p)
            }
        ) { result in
            dispatchPrecondition(condition: .onQueue(queue))
            if case .success(let r) = result { results.append(r.source) }
        }

        #expect(await ImagoTesting.eventually { results.count == 1 })
        #expect(results.all == [.network])
        #expect(progress.all.last == ImageTask.Progress(completed: 1016, total: 1016))
        #expect(progress.count == 4)
    }

    @Test func eventStreamEndsWithFinished() async throws {
        let f = PipelineFixture()
        let url = testURL("ev.img")
        f.serve(url)
        f.loader.hold(url)
        let task = f.pipeline.loadImage(with: ImageRequest(url: url))
        let events = task.events
        f.loader.release(url)

        var sawProgress = false
        var finished: ImageResponse.Source?
        for await event in events {
            switch event {
            case .progress: sawProgress = true
            case .finished(let result): finished = try result.get().source
            default: break
            }
        }
        #expect(sawProgress)
        #expect(finished == .network)
    }
}
