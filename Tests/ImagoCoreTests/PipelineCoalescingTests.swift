import Foundation
import ImagoCore
import ImagoTesting
import Testing

@Suite("Pipeline coalescing: identical work in flight is shared at every stage", .timeLimit(.minutes(1)))
struct PipelineCoalescingTests {
    /// Starts `requests` while `url` is held, releases it, and waits for every result.
    func runHeld(
        _ f: PipelineFixture, _ url: URL, _ requests: [ImageRequest], heldLoads: Int = 1
    ) async throws -> [Result<ImageResponse, ImagePipeline.Error>] {
        f.loader.hold(url)
        let results = Recorder<Result<ImageResponse, ImagePipeline.Error>>()
        for request in requests { f.pipeline.loadImage(with: request) { results.append($0) } }
        // Every load that should exist must be held before the release: a late one would find the first image
        // already in the memory cache.
        #expect(await ImagoTesting.eventually { f.loader.heldCount >= heldLoads })
        f.loader.release(url)
        #expect(await ImagoTesting.eventually { results.count == requests.count })
        return results.all
    }

    @Test func identicalRequestsShareOneLoadAndOneDecode() async throws {
        let f = PipelineFixture()
        let url = testURL("same.img")
        f.serve(url)

        let results = try await runHeld(f, url, Array(repeating: ImageRequest(url: url), count: 50))

        #expect(f.loader.loadCount == 1)
        #expect(f.decoder.decodeCount == 1)
        #expect(results.allSatisfy { (try? $0.get().source) == .network })
        #expect(results.filter { (try? $0.get().isCoalesced) == true }.count == 49)
        #expect(f.pipeline.statistics.coalescedJoins == 49)
    }

    @Test func processorPrefixesAreShared() async throws {
        // Given [resize] and [resize, blur] for one URL
        let f = PipelineFixture()
        let url = testURL("prefix.img")
        f.serve(url, color: RGBA(r: 0, g: 0, b: 0, a: 255))
        let resize = MockProcessor("resize", redIncrement: 1)
        let blur = MockProcessor("blur", redIncrement: 10)

        // When both run at once
        let results = try await runHeld(
            f, url, [ImageRequest(url: url, processors: [resize]), ImageRequest(url: url, processors: [resize, blur])])

        // Then the resize ran once, the blur once, on one load and one decode
        #expect(resize.processCount == 1)
        #expect(blur.processCount == 1)
        #expect(f.loader.loadCount == 1)
        #expect(f.decoder.decodeCount == 1)
        let reds = Set(results.compactMap { try? $0.get().image.image[pixel: 0, 0].r })
        #expect(reds == [1, 11])
    }

    @Test func originalAndProcessedShareTheDecode() async throws {
        let f = PipelineFixture()
        let url = testURL("orig.img")
        f.serve(url)
        let p = MockProcessor("p")

        _ = try await runHeld(f, url, [ImageRequest(url: url), ImageRequest(url: url, processors: [p])])

        #expect(f.decoder.decodeCount == 1)
        #expect(p.processCount == 1)
        #expect(
            Set(f.imageCache.keys)
                == [
                    ImageCacheKey(url.absoluteString),
                    ImageCacheKey(source: url.absoluteString, variant: .init(processors: ["p"])),
                ])
    }

    @Test func differentTargetSizesShareTheLoadButNotTheDecode() async throws {
        let f = PipelineFixture()
        let url = testURL("sizes.img")
        f.serve(url, width: 64, height: 64)

        let results = try await runHeld(
            f, url,
            [
                ImageRequest(url: url, targetSize: PixelSize(width: 8, height: 8)),
                ImageRequest(url: url, targetSize: PixelSize(width: 16, height: 16)),
            ])

        #expect(f.loader.loadCount == 1)
        #expect(f.decoder.decodeCount == 2)
        #expect(Set(results.compactMap { try? $0.get().image.image.width }) == [8, 16])
    }

    @Test func requestsWithDifferentHeadersDoNotShareALoad() async throws {
        let f = PipelineFixture()
        let url = testURL("headers.img")
        f.serve(url)
        var a = ImageRequest(url: url)
        a.headers = ["Authorization": "Bearer a"]
        var b = ImageRequest(url: url)
        b.headers = ["Authorization": "Bearer b"]

        _ = try await runHeld(f, url, [a, b], heldLoads: 2)

        #expect(f.loader.loadCount == 2)
    }

    @Test func disablingCoalescingGivesEachRequestItsOwnWork() async throws {
        let f = PipelineFixture { $0.isCoalescingEnabled = false }
        let url = testURL("nocoalesce.img")
        f.serve(url)

        _ = try await runHeld(f, url, [ImageRequest(url: url), ImageRequest(url: url)], heldLoads: 2)

        #expect(f.loader.loadCount == 2)
        #expect(f.decoder.decodeCount == 2)
    }

    @Test func decodesAreSharedWhileTheDecoderIsBusy() async throws {
        // Given a decode held in the decoder
        let f = PipelineFixture()
        let url = testURL("busy.img")
        f.serve(url)
        f.decoder.hold()
        let results = Recorder<Bool>()
        f.pipeline.loadImage(with: ImageRequest(url: url)) { results.append((try? $0.get()) != nil) }
        #expect(await ImagoTesting.eventually { f.decoder.heldCount == 1 })

        // When more identical requests arrive while it decodes
        for _ in 0..<10 {
            f.pipeline.loadImage(with: ImageRequest(url: url)) { results.append((try? $0.get()) != nil) }
        }
        f.decoder.release()

        // Then they join it
        #expect(await ImagoTesting.eventually { results.count == 11 })
        #expect(results.all.allSatisfy { $0 })
        #expect(f.decoder.decodeCount == 1)
        #expect(f.loader.loadCount == 1)
    }
}
