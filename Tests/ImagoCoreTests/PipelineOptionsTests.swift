import Foundation
import ImagoCore
import ImagoTesting
import Testing

@Suite("Pipeline request options", .timeLimit(.minutes(1)))
struct PipelineOptionsTests {
    @Test func ignoreMemoryCacheWritesLeavesTheMemoryCacheEmpty() async throws {
        let f = PipelineFixture()
        let url = testURL("nowrite.img")
        f.serve(url)

        _ = try await f.pipeline.image(for: ImageRequest(url: url, options: [.skipsMemoryCacheWrites]))

        #expect(f.imageCache.keys.isEmpty)
        #expect(await f.waitForDisk(url.absoluteString))
    }

    @Test func ignoreDiskCacheWritesLeavesTheDiskEmpty() async throws {
        let f = PipelineFixture()
        let url = testURL("nodisk.img")
        f.serve(url)

        _ = try await f.pipeline.image(for: ImageRequest(url: url, options: [.skipsDiskCacheWrites]))
        // a second load through the same disk queue: when it is done, an earlier write would have been too
        let other = testURL("probe.img")
        f.serve(other)
        _ = try await f.pipeline.image(for: other)
        #expect(await f.waitForDisk(other.absoluteString))

        #expect(!f.dataCache.containsData(for: url.absoluteString))
    }

    @Test func ignoreDiskCacheReadsGoesToTheNetwork() async throws {
        let f = PipelineFixture()
        let url = testURL("noread.img")
        f.serve(url)
        f.dataCache.store(
            MockImageDecoder.make(width: 1, height: 1, color: RGBA(r: 0, g: 0, b: 0, a: 255)), for: url.absoluteString)

        let response = try await f.pipeline.response(for: ImageRequest(url: url, options: [.skipsDiskCacheReads]))

        #expect(response.source == .network)
        #expect(f.dataCache.readCount == 0)
    }

    @Test func keepsOriginalDataAttachesTheBytes() async throws {
        let f = PipelineFixture()
        let url = testURL("keep.img")
        let data = f.serve(url)

        let image = try await f.pipeline.image(for: ImageRequest(url: url, options: [.keepsOriginalData]))
        let plain = try await f.pipeline.image(
            for: ImageRequest(url: testURL("keep.img"), options: [.reloadsIgnoringCaches]))

        #expect(image.originalData == data)
        #expect(plain.originalData == nil)
    }

    @Test func decodesFirstFrameOnlyReachesTheDecoderAndTheKey() async throws {
        let f = PipelineFixture()
        let url = testURL("first.img")
        f.serve(url)

        _ = try await f.pipeline.image(for: ImageRequest(url: url, options: [.decodesFirstFrameOnly]))

        #expect(
            f.imageCache.keys == [ImageCacheKey(source: url.absoluteString, variant: .init(isFirstFrameOnly: true))])
    }

    @Test func perRequestDecodingOptionsApply() async throws {
        let f = PipelineFixture()
        let url = testURL("huge.img")
        f.serve(url, width: 100, height: 100)
        var request = ImageRequest(url: url)
        request.decodingOptions = DecodingOptions(pixelLimit: 50)

        await #expect(
            throws: ImagePipeline.Error.decodingFailed(
                source: url.absoluteString, underlying: .tooManyPixels(width: 100, height: 100, limit: 50))
        ) {
            try await f.pipeline.image(for: request)
        }
    }

    @Test func ownDecodingOptionsHaveCacheEntriesOfTheirOwn() async throws {
        let f = PipelineFixture()
        let url = testURL("variants.img")
        f.serve(url, width: 100, height: 100)
        _ = try await f.pipeline.image(for: ImageRequest(url: url))
        var unrotated = ImageRequest(url: url)
        unrotated.decodingOptions = DecodingOptions(appliesOrientation: false)
        // Not the default decode's memory entry: decoded again, under a key of its own
        _ = try await f.pipeline.image(for: unrotated)
        #expect(f.decoder.decodeCount == 2)
        #expect(unrotated.imageCacheKey != ImageRequest(url: url).imageCacheKey)
        #expect(unrotated.imageCacheKey.dataCacheKey.contains("decoding=orient=0;"))
        // Limits only decide whether an image decodes: a request differing only in them shares the entry
        var limited = unrotated
        limited.decodingOptions?.pixelLimit = 1_000_000
        #expect(limited.imageCacheKey == unrotated.imageCacheKey)
        let response = try await f.pipeline.response(for: limited)
        #expect(response.source == .memory && f.decoder.decodeCount == 2)
        var kept = unrotated
        kept.decodingOptions?.colorPolicy = .keep
        #expect(kept.imageCacheKey != unrotated.imageCacheKey)
    }

    @Test func storeAllKeepsOriginalAndProcessedOnDisk() async throws {
        let f = PipelineFixture { $0.dataCachePolicy = .storeAll }
        let url = testURL("all.img")
        f.serve(url)
        let request = ImageRequest(url: url, processors: [MockProcessor("p")])

        _ = try await f.pipeline.image(for: request)

        #expect(await f.waitForDisk(url.absoluteString))
        #expect(await f.waitForDisk(request.processedDataCacheKey))
    }

    @Test func requestCopiesAreIndependent() {
        let a = ImageRequest(url: testURL("cow.img"), processors: [MockProcessor("x")])
        var b = a
        b.processors = []
        b.options = [.reloadsIgnoringCaches]
        #expect(a.processors.count == 1 && a.options.isEmpty)
        #expect(
            a.imageCacheKey
                == ImageCacheKey(source: testURL("cow.img").absoluteString, variant: .init(processors: ["x"])))
        #expect(b.imageCacheKey == ImageCacheKey(testURL("cow.img").absoluteString))
    }
}
