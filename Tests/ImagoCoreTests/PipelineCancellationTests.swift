import Foundation
import ImagoCore
import ImagoTesting
import Testing

@Suite("Pipeline cancellation and priority", .timeLimit(.minutes(1)))
struct PipelineCancellationTests {
    @Test func noCallbackAfterCancelAndTheLoaderSeesTheCancel() async throws {
        // Given a load held in the loader
        let queue = DispatchQueue(label: "test.cancel")
        let f = PipelineFixture { $0.callbackQueue = queue }
        let url = testURL("cancel.img")
        f.serve(url)
        f.loader.hold(url)
        let calls = Recorder<String>()
        let task = f.pipeline.loadImage(with: ImageRequest(url: url), progress: { _ in calls.append("progress") }) {
            _ in calls.append("completion")
        }
        #expect(await ImagoTesting.eventually { f.loader.heldCount == 1 })

        // When it is cancelled on the callback queue, then the load is released
        queue.sync { task.cancel() }
        f.loader.release(url)

        // Then the loader saw the cancel and no callback ever ran
        #expect(f.loader.cancelCount == 1)
        #expect(await ImagoTesting.eventually { f.pipeline.graphIsIdle })
        queue.sync {}
        #expect(calls.all.isEmpty)
        #expect(task.isCancelled)
        #expect(f.decoder.decodeCount == 0)
    }

    @Test func sharedWorkSurvivesPartialCancellation() async throws {
        let f = PipelineFixture()
        let url = testURL("partial.img")
        f.serve(url)
        f.loader.hold(url)
        let first = Recorder<Bool>()
        let second = Recorder<Bool>()
        let t1 = f.pipeline.loadImage(with: ImageRequest(url: url)) { first.append((try? $0.get()) != nil) }
        f.pipeline.loadImage(with: ImageRequest(url: url)) { second.append((try? $0.get()) != nil) }
        #expect(await ImagoTesting.eventually { f.loader.heldCount == 1 })

        f.pipeline.configuration.callbackQueue.sync { t1.cancel() }
        f.loader.release(url)

        #expect(await ImagoTesting.eventually { second.count == 1 })
        #expect(second.all == [true])
        #expect(f.loader.cancelCount == 0)
        #expect(f.loader.loadCount == 1)
        f.pipeline.configuration.callbackQueue.sync {}
        #expect(first.count == 0)
    }

    @Test func cancellingEveryTaskCancelsTheSharedLoad() async throws {
        let f = PipelineFixture()
        let url = testURL("all.img")
        f.serve(url)
        f.loader.hold(url)
        let tasks = (0..<5).map { _ in f.pipeline.loadImage(with: ImageRequest(url: url)) { _ in } }
        #expect(await ImagoTesting.eventually { f.loader.heldCount == 1 })

        for task in tasks.dropLast() { task.cancel() }
        #expect(f.loader.cancelCount == 0)
        tasks.last?.cancel()

        // (the cancel reaches the loader on another thread: one TSan run looked before it had arrived)
        #expect(await ImagoTesting.eventually { f.loader.cancelCount == 1 })
        #expect(f.loader.cancelCount == 1)
        #expect(await ImagoTesting.eventually { f.pipeline.graphIsIdle })
    }

    @Test func cancellingTheSwiftTaskCancelsTheAsyncRequest() async throws {
        let f = PipelineFixture()
        let url = testURL("async-cancel.img")
        f.serve(url)
        f.loader.hold(url)

        let task = Task { try await f.pipeline.image(for: url) }
        #expect(await ImagoTesting.eventually { f.loader.heldCount == 1 })
        task.cancel()

        await #expect(throws: ImagePipeline.Error.cancelled) { try await task.value }
        #expect(f.loader.cancelCount == 1)
    }

    @Test func cancelDuringDecodeDeliversNothingAndCachesNothing() async throws {
        // Given one decode slot, busy with a held decode
        let queue = DispatchQueue(label: "test.decode-cancel")
        let f = PipelineFixture {
            $0.callbackQueue = queue
            $0.maximumConcurrentDecodes = 1
        }
        let url = testURL("decode-cancel.img")
        let other = testURL("after.img")
        f.serve(url)
        f.serve(other)
        f.decoder.hold()
        let calls = Recorder<Bool>()
        let task = f.pipeline.loadImage(with: ImageRequest(url: url)) { _ in calls.append(true) }
        #expect(await ImagoTesting.eventually { f.decoder.heldCount == 1 })

        // When it is cancelled and the decode then completes
        queue.sync { task.cancel() }
        f.decoder.release()
        // (the next decode can only run after the cancelled one returned: one slot)
        _ = try await f.pipeline.image(for: other)

        // Then its result was neither delivered nor cached
        queue.sync {}
        #expect(calls.count == 0)
        #expect(f.imageCache.keys == [ImageCacheKey(other.absoluteString)])
    }

    @Test func sharedLoadRunsAtTheHighestSubscriberPriority() async throws {
        let f = PipelineFixture()
        let url = testURL("priority.img")
        f.serve(url)
        f.loader.hold(url)
        let low = f.pipeline.loadImage(with: ImageRequest(url: url, priority: .low)) { _ in }
        #expect(await ImagoTesting.eventually { f.loader.heldCount == 1 })
        #expect(f.loader.requests.first?.priority == .low)

        // A high-priority subscriber raises the shared load; when it leaves, the load drops back.
        let high = f.pipeline.loadImage(with: ImageRequest(url: url, priority: .high)) { _ in }
        #expect(f.loader.priorityChanges.first == [.high])
        high.cancel()
        #expect(f.loader.priorityChanges.first == [.high, .low])

        // Changing a task's priority changes the shared work's.
        low.priority = .veryHigh
        #expect(f.loader.priorityChanges.first == [.high, .low, .veryHigh])
        #expect(low.priority == .veryHigh)
        low.cancel()
        #expect(f.loader.cancelCount == 1)
    }
}
