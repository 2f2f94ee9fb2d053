import Foundation
import ImagoCore
import ImagoTesting
import Testing

@Suite("Pipeline observability: events, statistics, logging", .timeLimit(.minutes(1)))
struct PipelineObservabilityTests {
    @Test func statisticsCountEveryLayer() async throws {
        // Original data only: under the default (automatic) policy the processed request would also look for and
        // store its processed image (issue 23 item 2), adding a disk miss and a write.
        let f = PipelineFixture { $0.dataCachePolicy = .storeOriginalData }
        let url = testURL("stats.img")
        let data = f.serve(url)
        let p = MockProcessor("p")

        _ = try await f.pipeline.image(for: url)  // network
        _ = try await f.pipeline.image(for: url)  // memory
        #expect(await f.waitForDisk(url.absoluteString))
        f.imageCache.removeAll()
        _ = try await f.pipeline.image(for: ImageRequest(url: url, processors: [p]))  // disk + process

        let stats = f.pipeline.statistics
        #expect(stats.memoryHits == 1)
        #expect(stats.memoryMisses == 2)
        #expect(stats.diskHits == 1)
        #expect(stats.diskMisses == 1)
        #expect(stats.networkLoads == 1)
        #expect(stats.networkBytes == Int64(data.count))
        #expect(stats.decodeCount == 2)
        #expect(stats.processCount == 1)
        #expect(stats.diskWrites == 1)
    }

    @Test func eventsAndLoggerSeeRedactedURLs() async throws {
        let records = Recorder<LogRecord>()
        let f = PipelineFixture { $0.logger = { records.append($0) } }
        let url = URL(string: "https://user:secret@example.com/private.img")!
        f.serve(url)
        let events = f.pipeline.events()

        _ = try await f.pipeline.image(for: url)

        var seen: [String] = []
        for await event in events {
            seen.append(event.description)
            if case .taskFinished = event { break }
        }
        #expect(seen.contains { $0.hasPrefix("load started") })
        #expect(seen.contains { $0.hasPrefix("decoded") })
        #expect(!seen.joined().contains("secret"))
        #expect(records.all.contains { $0.level == .info && $0.message.contains("example.com/private.img") })
        #expect(!records.all.contains { $0.message.contains("secret") })
    }

    @Test func failuresAreCountedByKind() async throws {
        let f = PipelineFixture()
        let url = testURL("nope.img")
        _ = try? await f.pipeline.image(for: url)
        _ = try? await f.pipeline.image(for: url)
        _ = try? await f.pipeline.image(for: ImageRequest(url: testURL("x.img"), options: [.skipsLoading]))

        #expect(f.pipeline.statistics.failures == [.dataLoadingFailed: 1, .failedRecently: 1, .notCached: 1])
    }
}

@Suite("Pipeline progressive previews", .timeLimit(.minutes(1)))
struct PipelinePreviewTests {
    @Test func previewsArriveBeforeTheFinalImageAndAreNeverCached() async throws {
        // Given a large test image streamed in 10 chunks, and one decode at a time (see streamingPreviews)
        let url = testURL("progressive.img")
        let f = PipelineFixture.streamingPreviews(of: url)
        let task = f.pipeline.loadImage(with: ImageRequest(url: url, options: [.deliversPreviews]))
        let events = task.events
        f.loader.release(url)

        var kinds: [String] = []
        for await event in events {
            switch event {
            case .preview(let image):
                #expect(image.isPreview)
                kinds.append("preview")
            case .finished(let result):
                #expect(try !result.get().image.isPreview)
                kinds.append("finished")
            default: break
            }
        }

        #expect(kinds.last == "finished")
        #expect(kinds.filter { $0 == "preview" }.count >= 1)
        #expect(f.loader.requests.first?.reportsPartialData == true)
        #expect(f.decoder.partialDecodeCount >= 1)
        #expect(f.decoder.decodeCount == 1)
        #expect(f.imageCache.storeCount == 1)
        #expect(f.pipeline.cachedImage(for: ImageRequest(url: url))?.isPreview == false)
    }

    @Test func noPreviewsUnlessAsked() async throws {
        let loader = MockDataLoader(chunkCount: 10)
        let f = PipelineFixture(loader: loader)
        let url = testURL("plain.img")
        f.serve(url, payload: 10_000)

        _ = try await f.pipeline.image(for: url)

        #expect(f.decoder.partialDecodeCount == 0)
        #expect(f.loader.requests.first?.reportsPartialData == false)
    }
}
