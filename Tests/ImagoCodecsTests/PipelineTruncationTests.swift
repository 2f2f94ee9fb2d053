import Foundation
import Imago
import ImagoTesting
import Testing

/// Issue 23 item 6: a download that ran out of data never passes for a whole image, nor reaches a cache.
@Suite("Pipeline with truncated downloads")
struct PipelineTruncationTests {
    @Test("Issue 23 item 6: a GIF cut in half fails and is cached nowhere; with partial data allowed, not cached")
    func truncatedGIFIsNeverCachedAsWhole() async throws {
        // Given a two-frame GIF cut after its first frame, served as if complete
        let frame = TestGIF.Frame(width: 8, height: 8, indices: [UInt8](repeating: 2, count: 64))
        let full = TestGIF(width: 8, height: 8, frames: [frame, frame]).encoded()
        let cut = Data(full.prefix(full.count - 20))
        let loader = MockDataLoader()
        let url = URL(string: "https://example.com/cut.gif")!
        loader.setResponse(cut, for: url)
        let memory = MockImageCache()
        let disk = MockDataCache()
        var configuration = try ImagePipeline.Configuration.withDefaults(diskCacheDirectory: nil)
        configuration.dataLoader = loader
        configuration.imageCache = memory
        configuration.dataCache = disk
        let pipeline = ImagePipeline(configuration: configuration)

        // When it is requested: it fails as truncated, and neither cache keeps anything
        do {
            _ = try await pipeline.image(for: url)
            Issue.record("a truncated GIF decoded as whole")
        } catch ImagePipeline.Error.decodingFailed(_, .truncated(format: .gif)) {
        } catch {
            Issue.record("unexpected \(error)")
        }
        await pipeline.waitForPendingCacheWrites()
        #expect(memory.keys.isEmpty)
        #expect(disk.keys.isEmpty)

        // When the request allows partial data: the complete frame arrives as a preview, still cached nowhere
        var request = ImageRequest(url: url, options: [.skipsFailureCacheReads, .skipsFailureCacheWrites])
        var options = DecodingOptions()
        options.allowsPartialData = true
        request.decodingOptions = options
        let partial = try await pipeline.image(for: request)
        await pipeline.waitForPendingCacheWrites()
        #expect(partial.isPreview)
        #expect(partial.frames.count == 1)
        #expect(memory.keys.isEmpty)
        #expect(disk.keys.isEmpty)
    }
}
