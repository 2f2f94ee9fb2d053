import Foundation
import ImagoCore
import ImagoTesting
import Testing

@Suite("Pipeline: undecodable downloads never stay on disk", .timeLimit(.minutes(1)))
struct PipelineUndecodableStoreTests {
    /// Test-format bytes cut short: the mock decoder claims them, then fails with `truncated`.
    static let truncated = Data("IMGO".utf8) + Data([0, 8])
    /// Where the tests serve ``truncated``.
    static let cut = URL(string: "https://example.com/cut.img")!

    /// A pipeline whose data cache is a `HoldingDataCache`, running `diskSlots` disk jobs at once.
    static func holding(diskSlots: Int) -> (cache: HoldingDataCache, f: PipelineFixture) {
        let cache = HoldingDataCache()
        let f = PipelineFixture(disk: false) {
            $0.dataCache = cache
            $0.maximumConcurrentDiskOperations = diskSlots
        }
        return (cache, f)
    }

    @Test func aDecodeFailureDuringTheStoreStillRemovesTheBytes() async throws {
        // Given a store of the downloaded bytes held in the middle (two disk jobs may run at once)
        let (cache, f) = Self.holding(diskSlots: 2)
        let url = Self.cut
        f.loader.setResponse(Self.truncated, for: url)
        cache.gate.hold()
        // (the decode is held too until the store is inside the cache: else the decode may fail first and the
        // store be skipped, which is the other test's case)
        f.decoder.hold()
        let load = Task { try await f.pipeline.image(for: url) }
        #expect(await ImagoTesting.eventually { cache.gate.waitingCount == 1 })
        // When the decode fails while the store is still running
        f.decoder.release()
        await #expect(throws: ImagePipeline.Error.self) { try await load.value }
        cache.gate.release()
        await f.pipeline.waitForPendingCacheWrites()
        // Then the bytes are not on disk (a removal queued beside the store would have run first)
        #expect(!cache.containsData(for: ImageRequest(url: url).sourceKey))
        #expect(cache.inner.writeCount == 1)
    }

    @Test func aDecodeFailureBeforeTheStoreStartsSkipsTheStore() async throws {
        // Given a disk queue of one slot, busy with another held store
        let (cache, f) = Self.holding(diskSlots: 1)
        let good = URL(string: "https://example.com/good.img")!
        let bad = Self.cut
        f.serve(good)
        f.loader.setResponse(Self.truncated, for: bad)
        cache.gate.hold()
        _ = try await f.pipeline.image(for: good)
        #expect(await ImagoTesting.eventually { cache.gate.waitingCount == 1 })
        // When the bad download (not looking at the disk first: that read would queue behind the held store)
        // fails to decode while its store is still queued
        let badRequest = ImageRequest(url: bad, options: [.skipsDiskCacheReads])
        await #expect(throws: ImagePipeline.Error.self) { try await f.pipeline.image(for: badRequest) }
        cache.gate.release()
        await f.pipeline.waitForPendingCacheWrites()
        // Then its store never happened, and the good one did
        #expect(!cache.containsData(for: ImageRequest(url: bad).sourceKey))
        #expect(cache.containsData(for: ImageRequest(url: good).sourceKey))
        #expect(cache.inner.writeCount == 1)
    }

    @Test func bytesWhoseRemovalIsPendingAreAMissAndTheFailureIsRemembered() async throws {
        // Given undecodable bytes stored before their decode failed, and their removal held (two disk jobs at once)
        let (cache, f) = Self.holding(diskSlots: 2)
        let url = Self.cut
        let key = ImageRequest(url: url).sourceKey
        f.loader.setResponse(Self.truncated, for: url, headers: ["Cache-Control": "max-age=0"])
        f.decoder.hold()
        cache.removalGate.hold()
        let load = Task { try await f.pipeline.image(for: url) }
        #expect(await ImagoTesting.eventually { cache.inner.writeCount == 1 && f.decoder.heldCount == 1 })
        f.decoder.release()
        await #expect(throws: ImagePipeline.Error.self) { try await load.value }
        #expect(await ImagoTesting.eventually { cache.removalGate.waitingCount == 1 })
        #expect(cache.containsData(for: key))
        // When the source is asked for again while the bytes are still on disk
        var answer: ImagePipeline.Error?
        do { _ = try await f.pipeline.image(for: url) } catch { answer = error }
        // Then the disk reads a miss and the failure cache answers: no second decode, and no revalidation of the
        // stale bytes with the origin (the flaky fetch count of `ServeYCbCrTests` before the fix)
        let isRemembered = if case .failedRecently? = answer { true } else { false }
        #expect(isRemembered, "answered \(String(describing: answer))")
        #expect(f.decoder.decodeCount == 1)
        #expect(f.loader.loadCount(for: url) == 1)
        cache.removalGate.release()
        await f.pipeline.waitForPendingCacheWrites()
        #expect(!cache.containsData(for: key))
    }

    @Test func waitingForPendingDiskWorkReturnsAtOnceWhenIdle() async {
        let f = PipelineFixture()
        await f.pipeline.waitForPendingCacheWrites()
    }
}
