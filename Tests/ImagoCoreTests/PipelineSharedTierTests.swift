import Foundation
import ImagoCore
import ImagoTesting
import Testing

@Suite("Pipeline shared tier: memory → disk → shared → network, one fetch per fleet, failures are misses")
struct PipelineSharedTierTests {
    @Test(.timeLimit(.minutes(1)))
    func originFetchFillsTheSharedTierAndASecondPipelineReadsIt() async throws {
        // Given two pipelines (own memory and disk caches, own loaders) sharing one tier
        let shared = MockSharedCache()
        let a = PipelineFixture { $0.sharedCache = shared }
        let b = PipelineFixture { $0.sharedCache = shared }
        let url = testURL("shared.img")
        a.serve(url)
        b.serve(url)

        // When A loads the image and its background writes end, then B loads it
        let first = try await a.pipeline.response(for: ImageRequest(url: url))
        await a.pipeline.waitForPendingCacheWrites()
        let second = try await b.pipeline.response(for: ImageRequest(url: url))

        // Then A fetched from the network and wrote the tier; B read the tier, never its loader, and filled its disk
        #expect(first.source == .network)
        #expect(shared.writeCount == 1)
        #expect(second.source == .sharedCache)
        #expect(b.loader.loadCount == 0)
        #expect(await b.waitForDisk(url.absoluteString))
        #expect(b.pipeline.statistics.sharedCacheHits == 1)
        #expect(a.pipeline.statistics.sharedCacheMisses == 1)
    }

    @Test(.timeLimit(.minutes(1)))
    func localDiskIsAskedBeforeTheSharedTier() async throws {
        let shared = MockSharedCache()
        let f = PipelineFixture(memory: false) { $0.sharedCache = shared }
        let url = testURL("local.img")
        f.serve(url)
        _ = try await f.pipeline.image(for: ImageRequest(url: url))
        await f.pipeline.waitForPendingCacheWrites()
        let readsAfterFirst = shared.readCount

        let again = try await f.pipeline.response(for: ImageRequest(url: url))

        #expect(again.source == .disk)
        #expect(shared.readCount == readsAfterFirst)
    }

    @Test(.timeLimit(.minutes(1)))
    func concurrentLoadsInTwoPipelinesFetchOnce() async throws {
        // Given two pipelines sharing a tier, the source held so that every request is in flight at once
        let shared = MockSharedCache()
        let a = PipelineFixture { $0.sharedCache = shared }
        let b = PipelineFixture { $0.sharedCache = shared }
        let url = testURL("lease.img")
        a.serve(url)
        b.serve(url)
        a.loader.hold(url)
        b.loader.hold(url)

        // When 25 requests go to each
        let results = Recorder<Result<ImageResponse, ImagePipeline.Error>>()
        for i in 0..<50 {
            (i % 2 == 0 ? a : b).pipeline.loadImage(with: ImageRequest(url: url)) { results.append($0) }
        }
        #expect(
            await ImagoTesting.eventually { a.loader.heldCount + b.loader.heldCount >= 1 && shared.claimCount >= 2 })
        a.loader.release(url)
        b.loader.release(url)
        #expect(await ImagoTesting.eventually { results.count == 50 })

        // Then one pipeline fetched, the other took the value it stored
        #expect(a.loader.loadCount + b.loader.loadCount == 1)
        #expect(results.all.allSatisfy { (try? $0.get()) != nil })
        let sources = Set(results.all.compactMap { try? $0.get().source })
        #expect(sources == [.network, .sharedCache])
    }

    @Test(.timeLimit(.minutes(1)))
    func aFailingTierIsAMissAndNeverAUserError() async throws {
        let shared = MockSharedCache()
        shared.setFailure(.timedOut(after: .milliseconds(50)))
        let f = PipelineFixture { $0.sharedCache = shared }
        let url = testURL("down.img")
        f.serve(url)
        let events = f.pipeline.events()

        let response = try await f.pipeline.response(for: ImageRequest(url: url))
        await f.pipeline.waitForPendingCacheWrites()

        #expect(response.source == .network)
        #expect(f.pipeline.statistics.sharedCacheErrors == 2)  // the read and the background write
        var sawFailure = false
        for await event in events {
            if case .sharedCacheFailed(_, .timedOut) = event {
                sawFailure = true
                break
            }
        }
        #expect(sawFailure)
    }

    @Test(.timeLimit(.minutes(1)))
    func aSlowSharedWriteNeverDelaysDelivery() async throws {
        let shared = MockSharedCache()
        shared.holdWrites()
        let f = PipelineFixture { $0.sharedCache = shared }
        let url = testURL("slow.img")
        f.serve(url)

        let response = try await f.pipeline.response(for: ImageRequest(url: url))

        // Delivered while the write still waits; the write completes once released
        #expect(response.source == .network)
        #expect(await ImagoTesting.eventually { shared.heldWriteCount == 1 })
        shared.releaseWrites()
        await f.pipeline.waitForPendingCacheWrites()
        #expect(shared.writeCount == 1)
    }

    @Test(.timeLimit(.minutes(1)))
    func localSourcesAndReloadsSkipTheTier() async throws {
        let shared = MockSharedCache()
        let f = PipelineFixture { $0.sharedCache = shared }
        let url = testURL("reload.img")
        f.serve(url)

        _ = try await f.pipeline.image(for: ImageRequest(url: url, options: [.reloadsIgnoringCaches]))
        _ = try? await f.pipeline.image(for: ImageRequest(url: URL(string: "https://u:p@example.com/x.img")!))

        #expect(shared.readCount == 0)
    }

    @Test(.timeLimit(.minutes(1)), arguments: ["Authorization", "cookie", "Proxy-Authorization"])
    func requestsWithCredentialHeadersNeitherReadNorFillTheTier(header: String) async throws {
        // Given a tier that already holds another user's bytes for the URL
        let shared = MockSharedCache()
        let f = PipelineFixture { $0.sharedCache = shared }
        let url = testURL("private-\(header).img")
        let own = f.serve(url, color: .init(r: 200, g: 0, b: 0, a: 255))
        let other = MockImageDecoder.make(width: 8, height: 6, color: .init(r: 0, g: 0, b: 200, a: 255))
        try await shared.store(
            DataCacheEntry(data: other, metadata: DataCacheMetadata()), for: url.absoluteString, timeToLive: nil)

        // When a request carrying the user's credentials loads it
        var request = ImageRequest(url: url)
        request.headers = [header: "secret-of-one-user"]
        let response = try await f.pipeline.response(for: request)
        await f.pipeline.waitForPendingCacheWrites()

        // Then the bytes came from the loader with the credentials, the tier was neither read nor written, and the
        // local disk cache (the user's own) kept them
        #expect(response.source == .network)
        #expect(f.loader.loadCount == 1)
        #expect(shared.readCount == 0)
        #expect(shared.writeCount == 1)  // the fixture's own store above
        #expect(try await shared.entry(for: url.absoluteString)?.data == other)
        #expect(await f.waitForDisk(url.absoluteString))
        #expect(f.dataCache.entry(for: url.absoluteString)?.data == own)
    }

    @Test(.timeLimit(.minutes(1)))
    func privateResponsesStayOutOfTheTierButInTheLocalDisk() async throws {
        let shared = MockSharedCache()
        let f = PipelineFixture { $0.sharedCache = shared }
        let url = testURL("private-response.img")
        f.serve(url, headers: ["cache-control": "private, max-age=600"])

        let response = try await f.pipeline.response(for: ImageRequest(url: url))
        await f.pipeline.waitForPendingCacheWrites()

        #expect(response.source == .network)
        #expect(shared.writeCount == 0)
        #expect(shared.keys.isEmpty)
        #expect(await f.waitForDisk(url.absoluteString))
    }

    @Test(.timeLimit(.minutes(1)))
    func sharedMaxAgeSetsTheTierEntrysFreshnessAndMaxAgeTheLocalOnes() async throws {
        let shared = MockSharedCache()
        let f = PipelineFixture { $0.sharedCache = shared }
        let url = testURL("s-maxage.img")
        f.serve(url, headers: ["cache-control": "public, max-age=60, s-maxage=\"3600\""])
        let before = Date()

        _ = try await f.pipeline.response(for: ImageRequest(url: url))
        await f.pipeline.waitForPendingCacheWrites()

        let sharedExpiry = try #require(try await shared.entry(for: url.absoluteString)?.metadata.expiresAt)
        #expect(sharedExpiry.timeIntervalSince(before) > 3500 && sharedExpiry.timeIntervalSince(before) < 3700)
        #expect(await f.waitForDisk(url.absoluteString))
        let localExpiry = try #require(f.dataCache.entry(for: url.absoluteString)?.metadata.expiresAt)
        #expect(localExpiry.timeIntervalSince(before) > 50 && localExpiry.timeIntervalSince(before) < 70)
    }
}
