import Foundation
import ImagoCore
import ImagoTesting
import Testing

/// Issue 23 items 2, 3, 7 and 8: what the pipeline stores, remembers and shares by default.
@Suite("Pipeline defaults: disk policy, local sources, failures, load keys", .timeLimit(.minutes(1)))
struct PipelineDefaultsTests {
    @Test("Issue 23 item 2: the automatic disk policy is the default (processed image stored, encoded)")
    func automaticDiskPolicyIsTheDefault() async throws {
        // Given a pipeline with the default configuration
        let f = PipelineFixture()
        let url = testURL("photo.img")
        f.serve(url, width: 400, height: 300)
        let resized = ImageRequest(url: url, processors: [.resize(width: 40, height: 40)])
        #expect(f.pipeline.configuration.dataCachePolicy == .automatic)

        // When a processed request runs
        _ = try await f.pipeline.image(for: resized)
        await f.pipeline.waitForPendingCacheWrites()

        // Then the disk holds the processed image, not the original
        #expect(f.dataCache.keys == [resized.processedDataCacheKey])
        // and a rerun (memory emptied) decodes the small processed entry, with no load
        f.imageCache.removeAll()
        let again = try await f.pipeline.response(for: resized)
        #expect(again.source == .disk)
        #expect(again.image.image.size == PixelSize(width: 40, height: 30))
        #expect(f.loader.loadCount == 1)

        // An unprocessed request stores the original bytes
        let other = testURL("plain.img")
        let data = f.serve(other)
        _ = try await f.pipeline.image(for: other)
        await f.pipeline.waitForPendingCacheWrites()
        #expect(f.dataCache.entry(for: other.absoluteString)?.data == data)
    }

    @Test("Issue 23 item 3: file: and data: sources are never copied into the disk cache")
    func localSourcesAreNotStoredOnDisk() async throws {
        let f = PipelineFixture()
        let file = URL(fileURLWithPath: "/srv/images/local.img")
        let bytes = f.serve(file)
        let dataURL = try #require(URL(string: "data:application/octet-stream;base64," + bytes.base64EncodedString()))
        f.loader.setResponse(bytes, for: dataURL)

        _ = try await f.pipeline.image(for: file)
        _ = try await f.pipeline.image(for: ImageRequest(url: dataURL, processors: [.resize(width: 4, height: 4)]))
        _ = try await f.pipeline.image(for: ImageRequest(source: .data(id: "mine", bytes), processors: [.circle()]))
        await f.pipeline.waitForPendingCacheWrites()

        #expect(f.dataCache.keys.isEmpty)
        #expect(f.dataCache.readCount == 0)
        #expect(f.pipeline.cachedImage(for: ImageRequest(url: file)) != nil)
    }

    @Test("Issue 23 item 7: a 5xx is not remembered; the next request loads again")
    func transientFailuresAreNotRemembered() async throws {
        let f = PipelineFixture()
        let url = testURL("flaky.img")
        f.loader.setFailure(.statusCode(503, url: url), for: url)
        await #expect(throws: ImagePipeline.Error.self) { try await f.pipeline.image(for: url) }

        f.serve(url)
        _ = try await f.pipeline.image(for: url)

        #expect(f.loader.loadCount == 2)
        #expect(f.pipeline.configuration.failureCache?.count == 0)
    }

    @Test("Issue 23 item 8: signed URLs that share a cache key never share a load")
    func signedURLsDoNotShareALoad() async throws {
        // Given two URLs differing only in a dropped token, the first refused
        let f = PipelineFixture()
        let first = try #require(URL(string: "https://example.com/s.img?token=old"))
        let second = try #require(URL(string: "https://example.com/s.img?token=new"))
        f.loader.setFailure(.statusCode(403, url: first), for: first)
        f.serve(second)
        f.loader.hold(first)
        f.loader.hold(second)
        func request(_ url: URL) -> ImageRequest {
            var r = ImageRequest(url: url)
            r.cacheKeyPolicy = .droppingQueryItems(["token"])
            return r
        }
        #expect(request(first).imageCacheKey == request(second).imageCacheKey)

        // When both are requested at once
        let a = Task { try await f.pipeline.image(for: request(first)) }
        let b = Task { try await f.pipeline.image(for: request(second)) }
        #expect(await ImagoTesting.eventually { f.loader.heldCount == 2 })
        f.loader.release(first)
        f.loader.release(second)

        // Then each made its own load with its own token; only the refused one failed
        await #expect(throws: ImagePipeline.Error.self) { try await a.value }
        #expect(try await b.value.image.size == PixelSize(width: 8, height: 6))
        #expect(Set(f.loader.requests.map(\.url)) == [first, second])
    }
}
