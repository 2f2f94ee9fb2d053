import Foundation
import ImagoCore
import ImagoTesting
import Testing

/// Issue 23 item 1: the decode target comes from the request's processors when no `targetSize` is given.
@Suite("Pipeline decode target derived from processors", .timeLimit(.minutes(1)))
struct PipelineDecodeTargetTests {
    @Test("Issue 23 item 1: a resize decodes at the size it needs, not at full size")
    func resizeDerivesDecodeTarget() async throws {
        // Given a large image
        let f = PipelineFixture()
        let url = testURL("big.img")
        f.serve(url, width: 3000, height: 2000)

        // When it is requested with a resize and no targetSize
        let fit = ImageRequest(url: url, processors: [.resize(width: 300, height: 300)])
        let fill = ImageRequest(url: url, processors: [.resize(width: 300, height: 300, mode: .aspectFill)])
        let fitImage = try await f.pipeline.image(for: fit)
        let fillImage = try await f.pipeline.image(for: fill)

        // Then the decoder was asked for the fitted and the covering size, and the results are today's sizes
        #expect(f.decoder.targetSizes == [PixelSize(width: 300, height: 300), PixelSize(width: 300, height: 300)])
        #expect(f.decoder.targetModes == [.fit, .cover])
        #expect(fitImage.image.size == PixelSize(width: 300, height: 200))
        #expect(fillImage.image.size == PixelSize(width: 300, height: 300))
    }

    @Test("Issue 23 item 1: processors that need full resolution opt out; an explicit targetSize wins")
    func fullResolutionProcessorsOptOut() async throws {
        let f = PipelineFixture()
        let url = testURL("crop.img")
        f.serve(url, width: 600, height: 400)

        _ = try await f.pipeline.image(
            for: ImageRequest(url: url, processors: [.crop(x: 0, y: 0, width: 50, height: 50)]))
        _ = try await f.pipeline.image(
            for: ImageRequest(url: url, processors: [.gaussianBlur(radius: 2), .resize(width: 10, height: 10)]))
        _ = try await f.pipeline.image(
            for: ImageRequest(
                url: url, processors: [.resize(width: 100, height: 100)], targetSize: PixelSize(width: 500, height: 500)
            ))

        #expect(f.decoder.targetSizes == [nil, nil, PixelSize(width: 500, height: 500)])
    }

    @Test("Issue 23 item 1: a derived decode never shares its node or memory entry with a full-size decode")
    func derivedDecodeKeepsItsOwnKey() async throws {
        // Given a plain request and a resize request of one large image, in flight together
        let f = PipelineFixture { $0.maximumConcurrentDecodes = 2 }
        let url = testURL("both.img")
        f.serve(url, width: 3000, height: 2000)
        f.decoder.hold()
        let plain = Task { try await f.pipeline.image(for: ImageRequest(url: url)) }
        let resized = Task {
            try await f.pipeline.image(for: ImageRequest(url: url, processors: [.resize(width: 30, height: 30)]))
        }
        #expect(await ImagoTesting.eventually { f.decoder.heldCount == 2 })
        f.decoder.release()

        // Then each got its own decode: the plain one at full size
        #expect(try await plain.value.image.size == PixelSize(width: 3000, height: 2000))
        #expect(try await resized.value.image.size == PixelSize(width: 30, height: 20))
        #expect(f.decoder.decodeCount == 2)
        #expect(f.pipeline.cachedImage(for: ImageRequest(url: url))?.image.size == PixelSize(width: 3000, height: 2000))
        #expect(
            ImageRequest(url: url).imageCacheKey
                != ImageRequest(url: url, processors: [.resize(width: 30, height: 30)]).imageCacheKey)
    }
}
