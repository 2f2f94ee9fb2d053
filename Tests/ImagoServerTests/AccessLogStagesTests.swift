import Foundation
import Imago
import ImagoServer
import ImagoTesting
import Testing

@Suite("Access log: where a render's time went")
struct AccessLogStagesTests {
    /// A proxy with one render slot over a loader that can hold its sources, logging into `records`.
    final class Fixture: Sendable {
        let loader = MockDataLoader()
        let proxy: ImageProxy
        let records = Locked<[AccessLogRecord]>([])
        let first = URL(string: "http://origin.test/a.jpg")!
        let second = URL(string: "http://origin.test/b.jpg")!

        init() throws {
            let jpeg = try ServerTestImages.jpeg()
            loader.setResponse(jpeg, for: first)
            loader.setResponse(jpeg, for: second)
            var configuration = ImageProxy.Configuration(dataLoader: loader)
            configuration.allowsUnsigned = true
            configuration.sourcePolicy = SourcePolicy(allowsPrivateAddresses: true)
            configuration.workers = 1
            let records = records
            configuration.accessLog = { record in records.withLock { $0.append(record) } }
            proxy = ImageProxy(configuration: configuration)
        }

        func get(_ source: URL) async -> ServerResponse {
            await proxy.respond(
                to: ServerRequest(method: "GET", path: "/_/rs:fit:64:64/f:webp/plain/" + source.absoluteString))
        }

        func record(for source: URL) -> AccessLogRecord? {
            records.withLock { $0 }.first { $0.source == source.absoluteString }
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func aRenderLogsItsQueueFetchDecodeAndEncode() async throws {
        // Given the first source held at the origin, so its render keeps the only slot
        let fixture = try Fixture()
        fixture.loader.hold(fixture.first)
        let held = Task { await fixture.get(fixture.first) }
        #expect(await ImagoTesting.eventually { fixture.loader.heldCount == 1 })
        // When a second render queues behind it for 100 ms, then both go on
        let queued = Task { await fixture.get(fixture.second) }
        #expect(await ImagoTesting.eventually { fixture.proxy.metrics.prometheusText().contains("queue_length 1") })
        try await Task.sleep(for: .milliseconds(100))
        fixture.loader.release(fixture.first)
        #expect(await held.value.status == 200)
        #expect(await queued.value.status == 200)
        // Then the held render's fetch and the queued render's wait for the slot each took those 100 ms or more
        let first = try #require(fixture.record(for: fixture.first)?.stages)
        let second = try #require(fixture.record(for: fixture.second)?.stages)
        #expect(try #require(first.fetch) >= 100)
        #expect(second.queue >= 100)
        #expect(first.queue < 100)
        // and each render decoded once and encoded, its stages summing to no more than the request's time
        for (source, stages) in [(fixture.first, first), (fixture.second, second)] {
            #expect(stages.decode != nil && stages.encode > 0)
            let record = try #require(fixture.record(for: source))
            let sum = [
                stages.queue, stages.fetch ?? 0, stages.disk ?? 0, stages.decode ?? 0, stages.process ?? 0,
                stages.pipelineWait, stages.encodeWait, stages.encode, stages.store,
            ].reduce(0, +)
            #expect(sum <= record.ms + 1, "stages \(sum) ms of \(record.ms) ms")
        }
        // and the JSON line carries them
        let line = try #require(fixture.record(for: fixture.second)).jsonLine
        #expect(line.contains("\"stages\":{") && line.contains("\"encodeWait\":"))
    }

    @Test(.timeLimit(.minutes(1)))
    func requestsThatRenderedNothingLogNoStages() async throws {
        // Given a rendered output
        let fixture = try Fixture()
        #expect(await fixture.get(fixture.first).status == 200)
        // When it is asked for again (the output's memory tier answers)
        #expect(await fixture.get(fixture.first).status == 200)
        // Then only the first request's record has stages
        let records = fixture.records.withLock { $0 }
        #expect(records.count == 2)
        #expect(records.first?.stages != nil)
        #expect(records.last?.stages == nil && records.last?.cache == "output_memory")
        #expect(records.last.map { !$0.jsonLine.contains("stages") } == true)
    }
}
