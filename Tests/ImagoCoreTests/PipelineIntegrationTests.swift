import Foundation
import ImagoCore
import ImagoTesting
import Testing

@Suite("Pipeline integration: HTTPDataLoader, MemoryCache and the loopback server", .timeLimit(.minutes(1)))
struct PipelineIntegrationTests {
    func pipeline(dataCache: MockDataCache) -> ImagePipeline {
        var configuration = ImagePipeline.Configuration(dataLoader: HTTPDataLoader(), imageCache: MemoryCache())
        configuration.dataCache = dataCache
        configuration.decoders = ImageDecoderRegistry([MockImageDecoder()])
        return ImagePipeline(configuration: configuration)
    }

    @Test func concurrentIdenticalRequestsMakeOneHTTPRequest() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let data = MockImageDecoder.make(
            width: 16, height: 9, color: RGBA(r: 5, g: 6, b: 7, a: 255), payloadCount: 50_000)
        server.setRoute("/img", .bytes(data))
        let pipeline = pipeline(dataCache: MockDataCache())
        let url = server.url(for: "/img")

        let images = try await withThrowingTaskGroup(of: ImageContainer.self) { group in
            for _ in 0..<20 { group.addTask { try await pipeline.image(for: url) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }

        #expect(images.count == 20)
        #expect(images.allSatisfy { $0.image.size == PixelSize(width: 16, height: 9) })
        #expect(server.requestCount(for: "/img") == 1)
        #expect(pipeline.statistics.decodeCount == 1)
        #expect(try await pipeline.response(for: ImageRequest(url: url)).source == .memory)
    }

    @Test func staleEntryIsRevalidatedWithIfNoneMatchOverHTTP() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let data = MockImageDecoder.make(width: 4, height: 4, color: RGBA(r: 1, g: 2, b: 3, a: 255))
        server.setRoute("/stale", .bytes(data).withETag("\"abc\"").withCacheControl("max-age=0"))
        let dataCache = MockDataCache()
        let pipeline = pipeline(dataCache: dataCache)
        let url = server.url(for: "/stale")
        _ = try await pipeline.image(for: url)
        #expect(await ImagoTesting.eventually { dataCache.containsData(for: url.absoluteString) })
        #expect(dataCache.entry(for: url.absoluteString)?.metadata.validators.etag == "\"abc\"")

        let response = try await pipeline.response(for: ImageRequest(url: url, options: [.skipsMemoryCacheReads]))

        #expect(response.source == .disk && response.isStale)
        #expect(await ImagoTesting.eventually { pipeline.statistics.revalidationsNotModified == 1 })
        #expect(server.lastRequestHeaders(for: "/stale")?["If-None-Match"] == "\"abc\"")
        #expect(dataCache.metadataUpdateCount == 1)
    }
}
