import Dispatch
import Foundation
import Imago
import Testing

/// Streams fixed bytes in ten steps (progress and partial data), then finishes; for previews with a real decoder.
private final class StreamingLoader: DataLoading {
    let data: Data
    init(_ data: Data) { self.data = data }

    final class Handle: DataLoadTask {
        func cancel() {}
        func setPriority(_ priority: RequestPriority) {}
    }

    func load(_ request: DataRequest, handler: @escaping @Sendable (DataLoadEvent) -> Void) -> any DataLoadTask {
        let data = data
        DispatchQueue.global().async {
            for step in 1...10 {
                let count = data.count * step / 10
                handler(.progress(received: Int64(count), expected: Int64(data.count)))
                if request.reportsPartialData, step < 10 { handler(.partialData(data.prefix(count))) }
            }
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
        configuration.dataLoader = StreamingLoader(data)
        configuration.previewInterval = 0.1
        let pipeline = ImagePipeline(configuration: configuration)
        let task = pipeline.loadImage(
            with: ImageRequest(url: URL(string: "https://example.com/p.jpg")!, options: [.deliversPreviews]))

        var previews: [PixelSize] = []
        var final: PixelSize?
        for await event in task.events {
            switch event {
            case .preview(let image): previews.append(image.image.size)
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
