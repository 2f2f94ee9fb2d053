import Dispatch
import Foundation
import Imago
import Testing

/// Streams fixed bytes in ten steps (progress and partial data), then finishes; for previews with a real decoder.
private final class StreamingLoader: DataLoading {
    let data: Data
    /// When set, the loader sends `.finished` only once this is signalled (or after 10 s, so a test never hangs).
    let finishGate: DispatchSemaphore?
    init(_ data: Data, finishGate: DispatchSemaphore? = nil) {
        self.data = data
        self.finishGate = finishGate
    }

    final class Handle: DataLoadTask {
        func cancel() {}
        func setPriority(_ priority: RequestPriority) {}
    }

    func load(_ request: DataRequest, handler: @escaping @Sendable (DataLoadEvent) -> Void) -> any DataLoadTask {
        let data = data
        let finishGate = finishGate
        DispatchQueue.global().async {
            for step in 1...10 {
                let count = data.count * step / 10
                handler(.progress(received: Int64(count), expected: Int64(data.count)))
                if request.reportsPartialData, step < 10 { handler(.partialData(data.prefix(count))) }
            }
            _ = finishGate?.wait(timeout: .now() + 10)
            handler(.finished(DataResponse(data: data, url: request.url)))
        }
        return Handle()
    }
}

@Suite("Pipeline with the real codecs and processors")
struct PipelineCodecsTests {
    @Test func jpegThumbnailIsDecodedDownsampledAndResized() async throws {
        let data = try corpusData("formats/TestImageLarge.jpg")
        let original = try JPEGDecoder().decode(data, options: DecodingOptions())
        let pipeline = ImagePipeline(configuration: try .withDefaults(diskCacheDirectory: nil))
        let request = ImageRequest(
            source: .data(id: "large.jpg", data), processors: [.resize(width: 256, height: 256)],
            targetSize: PixelSize(width: 256, height: 256))

        let image = try await pipeline.image(for: request)

        #expect(max(image.image.width, image.image.height) == 256)
        let expectedAspect = Double(original.image.width) / Double(original.image.height)
        #expect(abs(Double(image.image.width) / Double(image.image.height) - expectedAspect) < 0.02)
        #expect(pipeline.cachedImage(for: request) != nil)
    }

    @Test func progressiveJPEGDeliversDecodedPreviews() async throws {
        let data = try corpusData("jpeg/reference/progressive3.jpg")
        var configuration = try ImagePipeline.Configuration.withDefaults(diskCacheDirectory: nil)
        // The download ends only after the first preview arrived: with every chunk sent at once, a slow machine
        // (or TSan) could otherwise finish the download before any preview decode, and rightly show none.
        let firstPreview = DispatchSemaphore(value: 0)
        configuration.dataLoader = StreamingLoader(data, finishGate: firstPreview)
        configuration.previewInterval = 0.1
        let pipeline = ImagePipeline(configuration: configuration)
        let task = pipeline.loadImage(
            with: ImageRequest(url: URL(string: "https://example.com/p.jpg")!, options: [.deliversPreviews]))

        var previews: [PixelSize] = []
        var final: PixelSize?
        for await event in task.events {
            switch event {
            case .preview(let image):
                previews.append(image.image.size)
                if previews.count == 1 { firstPreview.signal() }
            case .finished(let result): final = try result.get().image.image.size
            default: break
            }
        }

        let size = try #require(final)
        #expect(!previews.isEmpty)
        #expect(previews.allSatisfy { $0 == size })
        #expect(pipeline.statistics.previewsDelivered == previews.count)
    }
}
