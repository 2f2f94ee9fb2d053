import Foundation
import ImagoCore
import ImagoTesting
import Testing

/// Issue 23 items 9 and 12: shutting a pipeline down, and the small API gaps.
@Suite("Pipeline shutdown and small API")
struct PipelineShutdownTests {
    /// A pipeline over a mock loader and decoder with a real ``DiskCache`` in a fresh temporary directory.
    private func makeDiskPipeline() throws -> (ImagePipeline, MockDataLoader, DiskCache) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("imago-shutdown-\(UUID())")
        let loader = MockDataLoader()
        let disk = try DiskCache(directory: directory)
        var configuration = ImagePipeline.Configuration(dataLoader: loader, dataCache: disk)
        configuration.decoders = ImageDecoderRegistry([MockImageDecoder()])
        return (ImagePipeline(configuration: configuration), loader, disk)
    }

    @Test(
        "Issue 23 item 9: invalidate() cancels loads in flight, refuses new ones, flushes the caches",
        .timeLimit(.minutes(1)))
    func invalidateShutsThePipelineDown() async throws {
        // Given two loads in flight, one through the callback API
        let f = PipelineFixture()
        let url = testURL("slow.img")
        let other = testURL("slow2.img")
        f.serve(url)
        f.serve(other)
        f.loader.hold(url)
        f.loader.hold(other)
        let asyncLoad = Task { try await f.pipeline.image(for: url) }
        let callback = Recorder<Result<ImageResponse, ImagePipeline.Error>>()
        f.pipeline.loadImage(with: ImageRequest(url: other), completion: { callback.append($0) })
        #expect(await ImagoTesting.eventually { f.loader.heldCount == 2 })
        #expect(f.pipeline.tasksInFlightCount == 2)

        // When the pipeline is invalidated
        await f.pipeline.invalidate()

        // Then both loads end with cancelled, the transfers are cancelled, and nothing is in flight
        await #expect(throws: ImagePipeline.Error.cancelled) { try await asyncLoad.value }
        #expect(await ImagoTesting.eventually { callback.count == 1 })
        if case .failure(.cancelled)? = callback.all.first {} else { Issue.record("callback got \(callback.all)") }
        #expect(await ImagoTesting.eventually { f.loader.cancelCount == 2 })
        #expect(f.pipeline.tasksInFlightCount == 0)
        #expect(f.pipeline.isInvalidated)
        // and a new load fails at once with the distinct error, without loading
        await #expect(throws: ImagePipeline.Error.invalidated) { try await f.pipeline.image(for: testURL("new.img")) }
        let late = Recorder<Result<ImageResponse, ImagePipeline.Error>>()
        f.pipeline.loadImage(with: ImageRequest(url: testURL("new2.img")), completion: { late.append($0) })
        #expect(await ImagoTesting.eventually { late.count == 1 })
        if case .failure(.invalidated)? = late.all.first {} else { Issue.record("late load got \(late.all)") }
        #expect(f.loader.loadCount == 2)
    }

    @Test("Issue 23 item 9: invalidate() closes a DiskCache after its pending writes are on disk")
    func invalidateFlushesAndClosesTheDiskCache() async throws {
        let (pipeline, loader, disk) = try makeDiskPipeline()
        defer { try? FileManager.default.removeItem(at: disk.directory) }
        let directory = disk.directory
        let url = testURL("kept.img")
        let data = MockImageDecoder.make(width: 4, height: 4, color: RGBA(r: 1, g: 2, b: 3, a: 255))
        loader.setResponse(data, for: url)
        _ = try await pipeline.image(for: url)

        await pipeline.invalidate()

        let reopened = try DiskCache(directory: directory)
        #expect(reopened.entry(for: url.absoluteString)?.data == data)
        reopened.close()
    }

    @Test("Issue 23 item 12: status code, flushCaches, entry file, tasks in flight, unmissable events, Counts")
    func smallAPIGaps() async throws {
        // The HTTP status of a failure
        let url = URL(string: "https://example.com/x.img")!
        #expect(
            ImagePipeline.Error.dataLoadingFailed(url: url, underlying: .statusCode(404, url: url)).statusCode == 404)
        #expect(ImagePipeline.Error.failedRecently(url: url, until: Date(), reason: .http(410)).statusCode == 410)
        #expect(ImagePipeline.Error.cancelled.statusCode == nil)

        // One call that waits for the pending writes and flushes the disk cache; the entry's file
        let (pipeline, loader, disk) = try makeDiskPipeline()
        defer { try? FileManager.default.removeItem(at: disk.directory) }
        let image = testURL("flushed.img")
        let data = MockImageDecoder.make(width: 4, height: 4, color: RGBA(r: 1, g: 2, b: 3, a: 255))
        loader.setResponse(data, for: image)
        loader.hold(image)

        // Events from the task's creation are never missed, even when subscribing late
        let task = pipeline.loadImage(with: ImageRequest(url: image))
        #expect(await ImagoTesting.eventually { loader.heldCount == 1 })
        #expect(pipeline.tasksInFlightCount == 1)
        loader.release(image)
        #expect(await ImagoTesting.eventually { task.isFinished })
        var seen: [String] = []
        for await event in task.events {
            switch event {
            case .progress: seen.append("progress")
            case .finished(let result): seen.append((try? result.get()) != nil ? "finished" : "failed")
            default: seen.append("other")
            }
        }
        #expect(seen.first == "progress" && seen.last == "finished")
        #expect(pipeline.tasksInFlightCount == 0)

        await pipeline.flushCaches()
        let file = try #require(disk.fileURL(for: image.absoluteString))
        let bytes = try Data(contentsOf: file)
        #expect(bytes.count > data.count && bytes.suffix(data.count) == data)
        #expect(disk.fileURL(for: "never stored") == nil)
        disk.close()

        // Counts callers can construct
        let counts = ImagePrefetcher.Statistics(completed: 2, failed: 1, skipped: 3)
        #expect(counts.completed == 2 && counts.failed == 1 && counts.skipped == 3 && counts.running == 0)
    }
}

extension PipelinePrefetcherTests {
    @Test("Issue 23 item 11: a batch reports its skipped requests and completes once", .timeLimit(.minutes(1)))
    func prefetchBatchReportsSkippedAndCompletesOnce() async throws {
        // Given one image already in memory and two to load
        let f = PipelineFixture()
        let cached = testURL("batch-cached.img")
        let fresh = [testURL("batch-1.img"), testURL("batch-2.img")]
        f.serve(cached)
        for url in fresh { f.serve(url) }
        _ = try await f.pipeline.image(for: cached)
        let prefetcher = ImagePrefetcher(pipeline: f.pipeline)
        let done = Recorder<ImagePrefetcher.Statistics>()

        // When they are prefetched as one batch
        prefetcher.startPrefetching(with: [cached] + fresh) { done.append($0) }

        // Then the completion fires once, with the cached one skipped and the others completed
        #expect(await ImagoTesting.eventually { done.count == 1 })
        #expect(done.all.first == ImagePrefetcher.Statistics(completed: 2, skipped: 1))
        #expect(prefetcher.statistics.skipped == 1 && prefetcher.statistics.completed == 2)
        #expect(f.loader.loadCount == 3)
        try await Task.sleep(for: .milliseconds(50))
        #expect(done.count == 1)
    }
}
