import Foundation
import ImagoTesting
import Testing

@testable import ImagoCore

@Suite("Pipeline: waiting for cache writes queued after delivery", .timeLimit(.minutes(1)))
struct PipelinePendingWritesTests {
    @Test func waitReturnsOnlyAfterEveryQueuedWriteReachedTheCache() async throws {
        // Given a pipeline whose disk writes are held, and three delivered images
        let disk = HoldingDataCache()
        disk.gate.hold()
        // (disk reads share the disk queue with writes: leave them slots while writes wait at the gate)
        let f = PipelineFixture {
            $0.dataCache = disk
            $0.maximumConcurrentDiskOperations = 8
        }
        let urls = (0..<3).map { testURL("pending-\($0).img") }
        for url in urls { f.serve(url) }
        for url in urls { _ = try await f.pipeline.image(for: url) }
        #expect(await ImagoTesting.eventually { disk.gate.waitingCount >= 1 })
        #expect(disk.inner.writeCount < 3)

        // When a caller waits for the pending writes
        let waiter = PendingCall { await f.pipeline.waitForPendingCacheWrites() }
        #expect(await ImagoTesting.eventually { f.pipeline.pendingWriteWaiterCount == 1 })

        // Then it is still waiting (parked on the disk queue) while writes are held
        #expect(!waiter.hasReturned)
        // and returns once they are released, with every download in the cache
        disk.gate.release()
        await waiter.value()
        #expect(disk.inner.writeCount == 3)
        #expect(Set(disk.inner.keys) == Set(urls.map(\.absoluteString)))
    }

    @Test func aWriteRecordedButNotYetQueuedIsWaitedFor() async throws {
        // Given a pipeline in the moment between recording an original's write (a load that starts now reads its
        // bytes) and queuing its job: both queues idle
        let disk = HoldingDataCache()
        let f = PipelineFixture { $0.dataCache = disk }
        let key = testURL("about-to-be-queued.img").absoluteString
        let bytes = Data("queued bytes".utf8)
        f.pipeline.cacheWrites.withLock {
            $0.originals[key] = .queued
            $0.queuedOriginals[key] = DataCacheEntry(data: bytes, metadata: DataCacheMetadata())
        }
        #expect(f.pipeline.diskQueue.isIdle)

        // When a caller waits for the pending writes
        let waiter = PendingCall { await f.pipeline.waitForPendingCacheWrites() }
        try await Task.sleep(for: .milliseconds(100))

        // Then it has not returned with the write not yet on its way to the cache
        #expect(!waiter.hasReturned, "returned before a write other loads could already see")
        // and returns once the job is queued and has run, with the bytes in the cache
        f.pipeline.diskQueue.enqueue(priority: .normal) {
            disk.store(bytes, for: key, metadata: DataCacheMetadata())
            f.pipeline.cacheWrites.withLock {
                $0.originals[key] = nil
                $0.queuedOriginals[key] = nil
            }
        }
        await waiter.value()
        #expect(disk.inner.entry(for: key)?.data == bytes)
    }

    @Test func aLoadWhileTheOriginalIsStillQueuedForDiskReadsTheQueuedBytes() async throws {
        // Given a pipeline that stores originals only, whose disk writes are held, and one image delivered (its
        // original not yet on disk)
        let disk = HoldingDataCache()
        disk.gate.hold()
        let f = PipelineFixture {
            $0.dataCache = disk
            $0.dataCachePolicy = .storeOriginalData
            $0.maximumConcurrentDiskOperations = 8
        }
        let url = testURL("queued-original.img")
        let original = f.serve(url)
        _ = try await f.pipeline.image(for: ImageRequest(url: url, processors: [MockProcessor("a")]))
        #expect(await ImagoTesting.eventually { disk.gate.waitingCount == 1 })

        // When another variant of the same source is asked for (its own work: the first load has ended), and the
        // source's bytes alone
        let other = try await f.pipeline.response(for: ImageRequest(url: url, processors: [MockProcessor("b")]))
        let data = try await f.pipeline.data(for: ImageRequest(url: url))

        // Then both are answered from the bytes waiting for the disk, not by a second download
        #expect(f.loader.loadCount == 1)
        #expect(other.source == .disk)
        #expect(data.data == original)
        #expect(data.source == .disk)
        // and the write still happens once, when released
        disk.gate.release()
        await f.pipeline.waitForPendingCacheWrites()
        #expect(disk.inner.writeCount == 1)
        #expect(disk.inner.entry(for: url.absoluteString)?.data == original)
    }

    @Test func queuedBytesThatAreAlreadyStaleAreRevalidatedAsOnDisk() async throws {
        // Given an original served with `max-age=0` whose disk write is held (stale the moment it arrived)
        let disk = HoldingDataCache()
        disk.gate.hold()
        let f = PipelineFixture {
            $0.dataCache = disk
            $0.maximumConcurrentDiskOperations = 8
        }
        let url = testURL("queued-stale.img")
        f.serve(url, headers: ["ETag": "\"v1\"", "Cache-Control": "max-age=0"])
        _ = try await f.pipeline.image(for: url)
        #expect(await ImagoTesting.eventually { disk.gate.waitingCount == 1 })

        // When it is asked for again past the memory cache, while its bytes still wait for the disk
        let response = try await f.pipeline.response(for: ImageRequest(url: url, options: [.skipsMemoryCacheReads]))

        // Then the queued bytes answer, as stale as the disk entry would be, and are revalidated with their ETag
        // (before, the queued bytes were taken as fresh and no revalidation was made)
        #expect(response.source == .disk && response.isStale)
        #expect(await ImagoTesting.eventually { f.loader.notModifiedCount == 1 })
        #expect(f.loader.loadCount == 2 && f.loader.requests.last?.validators?.etag == "\"v1\"")
        disk.gate.release()
        await f.pipeline.waitForPendingCacheWrites()
    }

    @Test func waitReturnsAtOnceWhenNothingIsQueued() async {
        // Given a pipeline that has done nothing
        let f = PipelineFixture()

        // When / Then waiting returns (the test would hang otherwise) and nothing was written
        await f.pipeline.waitForPendingCacheWrites()
        #expect(f.dataCache.writeCount == 0)
    }
}
