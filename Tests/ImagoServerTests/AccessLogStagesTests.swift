import Foundation
import Imago
import ImagoTesting
import Testing

@testable import ImagoServer

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

    /// A source whose colour profile cannot be used is served as sRGB, and the access log says why, on the line
    /// of the request that rendered it (the decoders write nothing to standard error).
    @Test(.timeLimit(.minutes(1)))
    func anIgnoredColourProfileIsInTheRenderingRequestsLine() async throws {
        let item = SharedCorpus.item("icc/pillow-icc-after-SOF.jpg")  // its ICC segments are out of sequence
        if let missing = item.missing { Issue.record(Comment(rawValue: missing)) }
        let fixture = try Fixture()
        let bad = URL(string: "http://origin.test/bad.jpg")!
        fixture.loader.setResponse(try Data(contentsOf: item.url), for: bad)
        #expect(await fixture.get(bad).status == 200)
        #expect(await fixture.get(bad).status == 200)  // from the output cache
        #expect(await fixture.get(fixture.first).status == 200)  // no profile
        let lines = fixture.records.withLock { $0 }
        let rendered = try #require(lines.first { $0.source == bad.absoluteString })
        #expect(rendered.colorWarning == "the JPEG's ICC_PROFILE segments are out of sequence")
        #expect(rendered.jsonLine.contains(#""color_warning":"the JPEG's ICC_PROFILE segments are out of sequence""#))
        #expect(rendered.textLine.hasSuffix(#" color_warning="the JPEG's ICC_PROFILE segments are out of sequence""#))
        var finished = rendered
        finished.finishedAt = Date()
        #expect(
            finished.logEntry?.attributes.contains(
                .init("imago.color_warning", .string("the JPEG's ICC_PROFILE segments are out of sequence"))) == true)
        #expect(lines.filter { $0.source == bad.absoluteString }.map(\.colorWarning) == [rendered.colorWarning, nil])
        #expect(fixture.record(for: fixture.first)?.colorWarning == nil)
        #expect(fixture.record(for: fixture.first)?.jsonLine.contains("color_warning") == false)
    }

    /// Text from a file (a decoder's sentence about a box, a profile's description) reaches the text log's quoted
    /// fields escaped: it cannot end the line or the quotes, so it cannot forge a record.
    @Test func theTextLineEscapesWhatItQuotes() {
        var record = AccessLogRecord(time: "t", method: "GET", route: "image", status: 415, bytes: 0, ms: 1)
        record.error = "box \"x\" (bad)\n2026-12-07T00:00:00Z GET 200 1.0ms 1B - forged\u{7}\\"
        record.colorWarning = "profile\r\tP3"
        let line = record.textLine
        #expect(!line.contains("\n") && !line.contains("\r") && !line.contains("\u{7}"), "\(line)")
        #expect(
            line.hasSuffix(
                #" error="box \"x\" (bad)\n2026-12-07T00:00:00Z GET 200 1.0ms 1B - forged\u0007\\" color_warning="profile\r\tP3""#
            ), "\(line)")
    }
}
