import Foundation
import ImagoCore
import ImagoTesting
import Testing

/// A display that records every call, from the callback queue.
final class RecordingDisplay: ImageDisplaying, @unchecked Sendable {
    // @unchecked Sendable: `shown` is only touched on the test's callback queue (the binding contract).
    let imageBinder = ImageBinder()
    var shown: [(slot: ImageBinder.Slot, red: UInt8?)] = []
    func display(_ image: ImageContainer?, in slot: ImageBinder.Slot) {
        shown.append((slot, image.map { $0.image[pixel: 0, 0].r }))
    }
}

@Suite("Pipeline binding: ImageDisplaying and ImageBinder", .timeLimit(.minutes(1)))
struct PipelineBindingTests {
    let queue = DispatchQueue(label: "test.ui")
    let placeholder = ImageContainer(
        image: try! PixelBuffer.filled(size: .init(width: 1, height: 1), color: RGBA(r: 99, g: 0, b: 0, a: 255)))

    func fixture(disk: Bool = true) -> PipelineFixture {
        PipelineFixture(disk: disk) { [queue] in $0.callbackQueue = queue }
    }

    @Test func rapidRebindingOnlyEverShowsTheLastImage() async throws {
        // Given 20 URLs, each a different red value, all held in the loader (no disk cache: loads start at once)
        let f = fixture(disk: false)
        let urls = (0..<20).map { testURL("cell-\($0).img") }
        for (i, url) in urls.enumerated() {
            f.serve(url, color: RGBA(r: UInt8(i), g: 0, b: 0, a: 255))
            f.loader.hold(url)
        }
        let display = RecordingDisplay()

        // When one display is rebound to every URL in turn
        queue.sync {
            for url in urls { display.setImage(with: url, placeholder: placeholder, pipeline: f.pipeline) }
        }
        #expect(await ImagoTesting.eventually { f.loader.loadCount == 20 })
        for url in urls.reversed() { f.loader.release(url) }  // earlier loads "finish" last
        #expect(await ImagoTesting.eventually { queue.sync { display.shown.last?.red == 19 } })
        #expect(await ImagoTesting.eventually { f.pipeline.graphIsIdle })
        queue.sync { () }

        // Then only placeholders and the last image were ever shown
        let shown = queue.sync { display.shown.map(\.red) }
        #expect(shown == Array(repeating: 99, count: 20) + [19])
        #expect(f.loader.cancelCount == 19)
    }

    @Test func memoryHitShowsAtOnceWithoutPlaceholder() async throws {
        let f = fixture()
        let url = testURL("hit.img")
        f.serve(url, color: RGBA(r: 7, g: 0, b: 0, a: 255))
        _ = try await f.pipeline.image(for: url)
        let display = RecordingDisplay()

        let task = queue.sync { display.setImage(with: url, placeholder: placeholder, pipeline: f.pipeline) }

        #expect(task == nil)
        #expect(queue.sync { display.shown.map(\.red) } == [7])
    }

    @Test func failureShowsTheFailureImage() async throws {
        let f = fixture()
        let url = testURL("fail.img")
        let failure = ImageContainer(
            image: try PixelBuffer.filled(size: .init(width: 1, height: 1), color: RGBA(r: 66, g: 0, b: 0, a: 255)))
        let display = RecordingDisplay()
        let done = Recorder<Bool>()

        queue.sync {
            _ = display.setImage(
                with: url, placeholder: placeholder, failureImage: failure, pipeline: f.pipeline
            ) { done.append((try? $0.get()) != nil) }
        }

        #expect(await ImagoTesting.eventually { done.count == 1 })
        #expect(queue.sync { display.shown.map(\.red) } == [99, 66])
        #expect(done.all == [false])
    }

    @Test func slotsAreIndependent() async throws {
        let f = fixture()
        let a = testURL("slot-a.img")
        let b = testURL("slot-b.img")
        f.serve(a, color: RGBA(r: 1, g: 0, b: 0, a: 255))
        f.serve(b, color: RGBA(r: 2, g: 0, b: 0, a: 255))
        let display = RecordingDisplay()

        queue.sync {
            display.setImage(with: a, pipeline: f.pipeline)
            display.setImage(with: b, slot: .background, pipeline: f.pipeline)
        }

        #expect(await ImagoTesting.eventually { queue.sync { display.shown.filter { $0.red != nil }.count == 2 } })
        let shown = queue.sync { display.shown.filter { $0.red != nil } }
        #expect(Set(shown.map { "\($0.slot):\($0.red!)" }) == ["image:1", "background:2"])
        #expect(f.loader.cancelCount == 0)
    }

    @Test func settingNilCancelsAndShowsThePlaceholder() async throws {
        let f = fixture()
        let url = testURL("nil.img")
        f.serve(url)
        f.loader.hold(url)
        let display = RecordingDisplay()
        queue.sync { _ = display.setImage(with: url, pipeline: f.pipeline) }
        #expect(await ImagoTesting.eventually { f.loader.heldCount == 1 })

        queue.sync { _ = display.setImage(with: nil as URL?, placeholder: placeholder, pipeline: f.pipeline) }
        f.loader.release(url)

        #expect(f.loader.cancelCount == 1)
        #expect(queue.sync { display.shown.map(\.red) } == [nil, 99])
    }
}

@Suite("Pipeline prefetcher", .timeLimit(.minutes(1)))
struct PipelinePrefetcherTests {
    @Test func prefetchesIntoMemoryWithLimitedConcurrency() async throws {
        let f = PipelineFixture()
        let urls = (0..<6).map { testURL("pre-\($0).img") }
        for url in urls {
            f.serve(url)
            f.loader.hold(url)
        }
        let prefetcher = ImagePrefetcher(pipeline: f.pipeline, maximumConcurrentRequests: 2)

        prefetcher.startPrefetching(with: urls)

        #expect(await ImagoTesting.eventually { f.loader.heldCount == 2 })
        #expect(prefetcher.statistics.running == 2 && prefetcher.statistics.pending == 4)
        #expect(f.loader.requests.allSatisfy { $0.priority == .low })
        for url in urls { f.loader.release(url) }
        #expect(await ImagoTesting.eventually { prefetcher.statistics.completed == 6 })
        #expect(urls.allSatisfy { f.pipeline.cachedImage(for: ImageRequest(url: $0)) != nil })
        #expect(f.loader.loadCount == 6)
    }

    @Test func diskPrefetchStoresBytesWithoutDecoding() async throws {
        let f = PipelineFixture()
        let urls = (0..<3).map { testURL("disk-pre-\($0).img") }
        for url in urls { f.serve(url) }
        let prefetcher = ImagePrefetcher(pipeline: f.pipeline, destination: .diskCache)

        prefetcher.startPrefetching(with: urls)

        #expect(await ImagoTesting.eventually { prefetcher.statistics.completed == 3 })
        for url in urls { #expect(await f.waitForDisk(url.absoluteString)) }
        #expect(f.decoder.decodeCount == 0)
        #expect(f.imageCache.keys.isEmpty)
    }

    @Test func stoppingCancelsRunningAndDropsPending() async throws {
        let f = PipelineFixture()
        let urls = (0..<4).map { testURL("stop-\($0).img") }
        for url in urls {
            f.serve(url)
            f.loader.hold(url)
        }
        let prefetcher = ImagePrefetcher(pipeline: f.pipeline, maximumConcurrentRequests: 1)
        prefetcher.startPrefetching(with: urls)
        #expect(await ImagoTesting.eventually { f.loader.heldCount == 1 })

        prefetcher.stopPrefetching()

        #expect(await ImagoTesting.eventually { f.loader.cancelCount == 1 })
        #expect(prefetcher.isIdle)
        #expect(prefetcher.statistics.cancelled == 4)
        #expect(f.loader.loadCount == 1)
    }

    @Test func alreadyCachedRequestsCompleteWithoutWork() async throws {
        let f = PipelineFixture()
        let url = testURL("cached-pre.img")
        f.serve(url)
        _ = try await f.pipeline.image(for: url)
        let prefetcher = ImagePrefetcher(pipeline: f.pipeline)

        prefetcher.startPrefetching(with: [url])

        // Issue 23 item 11: counted as skipped, no longer as completed
        #expect(prefetcher.statistics.skipped == 1 && prefetcher.statistics.completed == 0)
        #expect(f.loader.loadCount == 1)
    }
}
