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

extension PipelineCodecsTests {
    /// Streams `data` with previews asked for under `policy`; returns the previews' count and the final size.
    private func streamWithPreviews(
        _ data: Data, policy: ImagePipeline.PreviewPolicy?
    ) async throws -> (previews: Int, final: PixelSize?) {
        var configuration = try ImagePipeline.Configuration.withDefaults(diskCacheDirectory: nil)
        let firstPreview = DispatchSemaphore(value: 0)
        // Without a preview the gate times out after 10 s: wait only 1 s when none is expected.
        configuration.dataLoader = StreamingLoader(data, finishGate: policy == nil ? nil : firstPreview)
        configuration.previewInterval = 0.1
        if let policy { configuration.previewPolicy = policy }
        let pipeline = ImagePipeline(configuration: configuration)
        let task = pipeline.loadImage(
            with: ImageRequest(url: URL(string: "https://example.com/b.jpg")!, options: [.deliversPreviews]))
        var previews = 0
        var final: PixelSize?
        for await event in task.events {
            switch event {
            case .preview:
                previews += 1
                if previews == 1 { firstPreview.signal() }
            case .finished(let result): final = try result.get().image.image.size
            default: break
            }
        }
        return (previews, final)
    }

    @Test("Issue 23 item 5: a baseline JPEG gives no grey-bottomed previews unless asked (.incremental)")
    func baselineJPEGGivesNoPreviewsByDefault() async throws {
        // Given a baseline (sequential) JPEG
        var pixels = try PixelBuffer(width: 512, height: 512, format: .rgba8)
        for y in 0..<512 {
            for x in 0..<512 { pixels[pixel: x, y] = RGBA(r: UInt8(x / 2), g: UInt8(y / 2), b: 90, a: 255) }
        }
        let baseline = try ImageEncoderRegistry.makeDefault().encode(pixels, as: .jpeg, options: EncodingOptions())

        // When it streams in with previews asked for: none by default
        let byDefault = try await streamWithPreviews(baseline, policy: nil)
        #expect(byDefault.previews == 0)
        #expect(byDefault.final == PixelSize(width: 512, height: 512))
        // and the top-down partial image with the .incremental policy
        let incremental = try await streamWithPreviews(baseline, policy: .incremental)
        #expect(incremental.previews >= 1)
        // while a progressive JPEG still gives previews by default
        let progressive = try await streamWithPreviews(
            try corpusData("jpeg/reference/progressive3.jpg"), policy: .progressiveOnly)
        #expect(progressive.previews >= 1)
    }
}
