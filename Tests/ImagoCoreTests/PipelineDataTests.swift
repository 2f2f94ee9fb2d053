import Foundation
import ImagoCore
import ImagoTesting
import Testing

@Suite("Pipeline: a source's bytes without decoding (data(for:))", .timeLimit(.minutes(1)))
struct PipelineDataTests {
    @Test func theBytesAreLoadedOnceStoredAndThenDecodedFromDisk() async throws {
        // Given a source served once
        let f = PipelineFixture()
        let url = testURL("data.img")
        let original = f.serve(url, headers: ["Content-Type": "image/x-test", "ETag": "\"v1\""])

        // When its bytes are asked for
        let response = try await f.pipeline.data(for: ImageRequest(url: url, processors: [MockProcessor("p")]))

        // Then they are the source's own, from the network, with their format and validators, and nothing was
        // decoded or processed
        #expect(response.data == original)
        #expect(response.source == .network)
        #expect(response.format == .unknown)  // the test format's own (MockImageDecoder)
        #expect(response.metadata?.validators.etag == "\"v1\"")
        #expect(response.metadata?.contentType == "image/x-test")
        #expect(!response.isCoalesced)
        #expect(response.metrics.load != nil)
        #expect(f.decoder.decodeCount == 0)
        // and they reach the disk cache, so the image is decoded from there without a second download
        await f.pipeline.waitForPendingCacheWrites()
        #expect(f.dataCache.entry(for: url.absoluteString)?.data == original)
        let image = try await f.pipeline.response(for: ImageRequest(url: url))
        #expect(image.source == .disk)
        #expect(f.loader.loadCount == 1)
        // and the bytes again come from the disk
        #expect(try await f.pipeline.data(for: ImageRequest(url: url)).source == .disk)
        #expect(f.loader.loadCount == 1)
    }

    @Test func aDataRequestAndAnImageRequestInFlightShareOneLoad() async throws {
        // Given a load held in the loader for an image request
        let f = PipelineFixture()
        let url = testURL("shared-data.img")
        let original = f.serve(url)
        f.loader.hold(url)
        let image = Task { try await f.pipeline.image(for: ImageRequest(url: url)) }
        #expect(await ImagoTesting.eventually { f.loader.heldCount == 1 })

        // When the bytes are asked for meanwhile, then the load is released
        let data = Task { try await f.pipeline.data(for: ImageRequest(url: url)) }
        #expect(await ImagoTesting.eventually { f.pipeline.statistics.coalescedJoins == 1 })
        f.loader.release(url)

        // Then both are answered by the one load
        let response = try await data.value
        _ = try await image.value
        #expect(response.data == original)
        #expect(response.isCoalesced)
        #expect(f.loader.loadCount == 1)
        #expect(f.decoder.decodeCount == 1)
    }

    @Test func aCacheOnlyReadOfAnUncachedSourceFailsWithoutLoading() async {
        // Given a source that is in no cache
        let f = PipelineFixture()
        let url = testURL("uncached.img")
        f.serve(url)

        // When its bytes are asked for from the caches only
        let result = await dataResult(f.pipeline, ImageRequest(url: url, options: [.skipsLoading]))

        // Then it fails as not cached, and nothing was loaded
        guard case .failure(.notCached) = result else {
            Issue.record("expected notCached, got \(result)")
            return
        }
        #expect(f.loader.loadCount == 0)
    }

    @Test func aFailedLoadIsItsTypedErrorAndIsRemembered() async {
        // Given a source that answers 404
        let f = PipelineFixture()
        let url = testURL("missing.img")
        f.loader.setResponse(Data("not found".utf8), for: url, statusCode: 404)

        // When its bytes are asked for twice
        for _ in 0..<2 {
            let result = await dataResult(f.pipeline, ImageRequest(url: url))
            guard case .failure(let error) = result else {
                Issue.record("expected a failure, got \(result)")
                return
            }
            #expect(error.kind == .dataLoadingFailed || error.kind == .failedRecently)
        }

        // Then the loader was asked once: the failure cache answered the second
        #expect(f.loader.loadCount == 1)
        #expect(f.pipeline.statistics.failureCacheHits == 1)
    }

    @Test func bytesNoDecoderKnowsAreDeliveredWithTheirFormatButNeverStored() async throws {
        // Given a pipeline with no decoders, and sources that send HTML and the start of a PNG
        let f = PipelineFixture { $0.decoders = ImageDecoderRegistry([]) }
        let pageURL = testURL("page.img")
        let page = Data("<html>an error page</html>".utf8)
        f.loader.setResponse(page, for: pageURL)
        let pngURL = testURL("start.png")
        let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13])
        f.loader.setResponse(png, for: pngURL)

        // When their bytes are asked for
        let pageResponse = try await f.pipeline.data(for: ImageRequest(url: pageURL))
        let pngResponse = try await f.pipeline.data(for: ImageRequest(url: pngURL))

        // Then they are delivered as they are, with the format their signature says, and kept out of the disk
        #expect(pageResponse.data == page)
        #expect(pageResponse.format == .unknown)
        #expect(pngResponse.data == png)
        #expect(pngResponse.format == .png)
        await f.pipeline.waitForPendingCacheWrites()
        #expect(f.dataCache.writeCount == 0)
    }

    @Test func cancellingTheCallerCancelsTheLoad() async throws {
        // Given a data request whose load is held
        let f = PipelineFixture()
        let url = testURL("cancel-data.img")
        f.serve(url)
        f.loader.hold(url)
        let task = Task { try await f.pipeline.data(for: ImageRequest(url: url)) }
        #expect(await ImagoTesting.eventually { f.loader.heldCount == 1 })

        // When the calling task is cancelled
        task.cancel()

        // Then it ends with `cancelled` while the load is still held, and the loader saw the cancel
        let result = await task.result
        #expect(result.failureValue as? ImagePipeline.Error == .cancelled)
        #expect(f.loader.cancelCount == 1)
        f.loader.release(url)
        #expect(await ImagoTesting.eventually { f.pipeline.graphIsIdle })
    }

    @Test func aCallerCancelledBeforeItAsksGetsCancelledAtOnce() async {
        // Given a task that is cancelled before it asks
        let f = PipelineFixture()
        let url = testURL("early-cancel.img")
        f.serve(url)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await f.pipeline.data(for: ImageRequest(url: url))
        }

        // Then it ends with `cancelled`
        let result = await task.result
        #expect(result.failureValue as? ImagePipeline.Error == .cancelled)
        #expect(await ImagoTesting.eventually { f.pipeline.graphIsIdle })
    }

    @Test func anInvalidatedPipelineRefuses() async {
        // Given a pipeline that was shut down
        let f = PipelineFixture()
        let url = testURL("after-shutdown.img")
        f.serve(url)
        await f.pipeline.invalidate()

        // When bytes are asked for
        let result = await dataResult(f.pipeline, ImageRequest(url: url))

        // Then it fails as invalidated, without loading
        guard case .failure(.invalidated) = result else {
            Issue.record("expected invalidated, got \(result)")
            return
        }
        #expect(f.loader.loadCount == 0)
    }
}

/// `pipeline.data(for: request)` as a result.
private func dataResult(
    _ pipeline: ImagePipeline, _ request: ImageRequest
) async -> Result<ImageDataResponse, ImagePipeline.Error> {
    do throws(ImagePipeline.Error) {
        return .success(try await pipeline.data(for: request))
    } catch {
        return .failure(error)
    }
}

extension Result {
    /// The failure, if any.
    fileprivate var failureValue: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
