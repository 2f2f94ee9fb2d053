import Foundation
import ImagoCore
import ImagoTesting
import Testing

/// `imageTask(with:)` (issue 22 §6): a task handle with async `image`/`response`, `previews`, cancellation, typed
/// failures; string literals that are not URLs; the prefetcher's named completion.
@Suite("Image task handle, invalid literals, prefetch completions")
struct PipelineImageTaskTests {
    @Test(.timeLimit(.minutes(1))) func imageTaskDeliversImageAndResponse() async throws {
        // Given a served image
        let f = PipelineFixture()
        let url = testURL("task.img")
        f.serve(url, width: 7, height: 5)
        // When a task is made and awaited twice
        let task = f.pipeline.imageTask(with: ImageRequest(url: url))
        let image = try await task.image
        let response = try await task.response
        // Then both see the one load's result
        #expect(image.image.width == 7 && image.image.height == 5)
        #expect(response.source == .network && response.image.image.width == 7)
        #expect(f.loader.loadCount == 1)
        #expect(task.isFinished)
    }

    @Test(.timeLimit(.minutes(1))) func imageTaskStreamsPreviewsThenFinishes() async throws {
        // Given a load in ten chunks, decoded incrementally one decode at a time
        let url = testURL("previews.img")
        let f = PipelineFixture.streamingPreviews(of: url)
        // When the task's previews are iterated
        let task = f.pipeline.imageTask(with: ImageRequest(url: url, options: [.deliversPreviews]))
        let previews = task.previews
        f.loader.release(url)
        var count = 0
        for await preview in previews {
            #expect(preview.isPreview)
            count += 1
        }
        // Then at least one preview came, the sequence ended with the task, and the final image is no preview
        #expect(count >= 1)
        #expect(try await !task.image.isPreview)
    }

    /// A task whose load is held at the loader (release `url` at the end).
    private static func heldTask(_ name: String) -> (PipelineFixture, URL, ImageTask) {
        let f = PipelineFixture()
        let url = testURL(name)
        f.serve(url)
        f.loader.hold(url)
        return (f, url, f.pipeline.imageTask(with: ImageRequest(url: url)))
    }

    @Test(.timeLimit(.minutes(1))) func cancellingTheTaskFailsTheAwaitWithCancelled() async throws {
        // Given a load held at the loader
        let (f, url, task) = Self.heldTask("held.img")
        // When the task is cancelled
        task.cancel()
        // Then awaiting it throws a typed .cancelled
        do {
            _ = try await task.response
            Issue.record("expected a cancellation")
        } catch {
            #expect(error == .cancelled)
        }
        f.loader.release(url)
    }

    @Test(.timeLimit(.minutes(1))) func cancellingTheAwaitingSwiftTaskCancelsTheImageTask() async throws {
        // Given a load held at the loader, awaited by a Swift task
        let (f, url, task) = Self.heldTask("held-swift.img")
        let waiter = Task { try await task.image }
        // When the Swift task is cancelled
        waiter.cancel()
        // Then the image task is cancelled too and the await fails
        await #expect(throws: ImagePipeline.Error.cancelled) { _ = try await waiter.value }
        #expect(task.isCancelled)
        f.loader.release(url)
    }

    @Test(.timeLimit(.minutes(1))) func literalThatIsNotAURLFailsWithInvalidURL() async throws {
        // Given a request from a string literal that is not a URL
        let f = PipelineFixture()
        let request: ImageRequest = ""
        #expect(request.url == nil)
        // When it is loaded
        do {
            _ = try await f.pipeline.image(for: request)
            Issue.record("expected invalidURL")
        } catch {
            // Then it fails with a typed error, without touching the loader or any cache
            #expect(error == .invalidURL(""))
            #expect(error.kind == .invalidURL)
        }
        #expect(f.loader.loadCount == 0)
        #expect(f.pipeline.statistics.failures == [.invalidURL: 1])
        // And a literal that is a URL still loads it
        let valid: ImageRequest = "https://example.com/literal.img"
        #expect(valid.url == testURL("literal.img"))
    }

    @Test(.timeLimit(.minutes(1))) func prefetcherReportsEachRequestWithItsOutcome() async throws {
        // Given one served image and one missing
        let f = PipelineFixture()
        let good = testURL("prefetch-good.img")
        let missing = testURL("prefetch-missing.img")
        f.serve(good)
        f.loader.setFailure(.statusCode(404, url: missing), for: missing)
        let completions = Recorder<ImagePrefetcher.Completion>()
        let prefetcher = ImagePrefetcher(pipeline: f.pipeline) { completions.append($0) }
        // When both are prefetched
        prefetcher.startPrefetching(with: [good, missing])
        #expect(await ImagoTesting.eventually { completions.count == 2 })
        // Then each completion names its request and how it ended
        let outcomes = Dictionary(uniqueKeysWithValues: completions.all.map { ($0.request.url, $0.outcome) })
        #expect(outcomes == [good: .completed, missing: .failed])
        #expect(completions.all.filter(\.isSuccess).map(\.request.url) == [good])
    }
}
