import Foundation
import Imago
import ImagoCore
import ImagoTesting
import Testing

/// Hostile servers through the full pipeline (HTTPDataLoader, every codec, MemoryCache, a real DiskCache): every
/// fault ends in a typed ``ImagePipeline/Error`` within the configured timeouts, and nothing partial reaches the
/// disk cache (checked after a control image has been written through the same serial disk queue).
@Suite(.serialized, .timeLimit(.minutes(1))) struct HostileServerTests {
    struct Fixture {
        let server: LoopbackServer
        let pipeline: ImagePipeline
        let disk: DiskCache
        let directory: URL
        let control: Data
        /// An 11.6 KB PNG, long enough for mid-body faults.
        let large: Data

        init() throws {
            server = try LoopbackServer()
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("hostile-\(UUID().uuidString)")
            disk = try DiskCache(directory: directory)
            var loader = HTTPDataLoader.Configuration()
            loader.idleTimeout = .seconds(2)
            loader.resourceTimeout = .seconds(5)
            loader.maximumBodySize = 1 << 20
            loader.retryPolicy = .none
            var configuration = ImagePipeline.Configuration(
                dataLoader: HTTPDataLoader(configuration: loader), imageCache: MemoryCache(), dataCache: disk)
            configuration.decoders = .makeDefault()
            configuration.maximumConcurrentDiskOperations = 1
            configuration.failureCache = nil
            pipeline = ImagePipeline(configuration: configuration)
            control = try corpusData("pngsuite/png/basn6a08.png")
            large = try corpusData("formats/TestImage.png")
            server.setRoute("/control.png", .bytes(control, contentType: "image/png"))
        }

        func stop() {
            server.stop()
            // Closed first: the cache's last snapshot would otherwise land in the folder after it was removed.
            disk.close()
            try? FileManager.default.removeItem(at: directory)
        }

        /// Loads `/bad` served by `route`; returns the pipeline error and checks that the disk has no entry for it.
        func failure(_ route: LoopbackServer.Route) async throws -> ImagePipeline.Error {
            server.setRoute("/bad", route)
            let url = server.url(for: "/bad")
            var caught: ImagePipeline.Error?
            do {
                _ = try await pipeline.image(for: url)
            } catch {
                caught = error  // typed throws: always an ImagePipeline.Error
            }
            // A good image after it, through the same single disk queue: once it is in the cache, anything the
            // bad load had scheduled has been handed over; a synchronous store then flushes every staged write.
            let controlURL = server.url(for: "/control.png")
            _ = try await pipeline.image(for: controlURL)
            let disk = self.disk
            #expect(await ImagoTesting.eventually { disk.containsData(for: controlURL.absoluteString) })
            try disk.storeSynchronously(Data("barrier".utf8), for: "barrier")
            #expect(!disk.containsData(for: url.absoluteString), "a partial or failed body was cached")
            #expect(disk.statistics.entryCount == 2, "only the control image and the barrier")
            return try #require(caught)
        }
    }

    static func loading(_ error: ImagePipeline.Error) -> DataLoadingError? {
        if case .dataLoadingFailed(_, let underlying) = error { return underlying }
        return nil
    }

    @Test func endlessBodyStopsAtTheBodySizeLimit() async throws {
        let f = try Fixture()
        defer { f.stop() }
        // Paced (~13 MB/s): URLSession keeps reading an unpaced endless body long after cancel(), which stalls
        // every other session in the test process for seconds.
        let error = try await f.failure(.endless().dripping(bytes: 65_536, every: .milliseconds(5)))
        guard case .bodyTooLarge(_, let limit)? = Self.loading(error) else {
            Issue.record("expected bodyTooLarge, got \(error)")
            return
        }
        #expect(limit == 1 << 20)
    }

    @Test func declaredLengthLongerThanTheBodyIsTruncated() async throws {
        let f = try Fixture()
        defer { f.stop() }
        let error = try await f.failure(.bytes(f.large, contentType: "image/png").declaringContentLength(100_000))
        switch Self.loading(error) {
        case .truncated?, .timedOut?: break
        default: Issue.record("expected truncated, got \(error)")
        }
    }

    @Test func declaredLengthShorterThanTheBodyFailsToDecode() async throws {
        let f = try Fixture()
        defer { f.stop() }
        let error = try await f.failure(
            .bytes(f.large, contentType: "image/png").declaringContentLength(f.large.count / 2))
        guard case .decodingFailed = error else {
            Issue.record("expected decodingFailed, got \(error)")
            return
        }
    }

    @Test func slowDripPastTheResourceTimeoutTimesOut() async throws {
        let f = try Fixture()
        defer { f.stop() }
        let error = try await f.failure(
            .bytes(Data(count: 200_000), contentType: "image/png").dripping(bytes: 100, every: .milliseconds(50)))
        guard case .timedOut? = Self.loading(error) else {
            Issue.record("expected timedOut, got \(error)")
            return
        }
    }

    @Test func stalledBodyTimesOut() async throws {
        let f = try Fixture()
        defer { f.stop() }
        let error = try await f.failure(.bytes(f.large, contentType: "image/png").stalling(afterBytes: 500))
        guard case .timedOut? = Self.loading(error) else {
            Issue.record("expected timedOut, got \(error)")
            return
        }
    }

    @Test func resetMidBodyFailsTyped() async throws {
        let f = try Fixture()
        defer { f.stop() }
        let error = try await f.failure(.bytes(f.large, contentType: "image/png").resetting(afterBytes: 1000))
        switch Self.loading(error) {
        case .truncated?, .connectionFailed?: break
        default: Issue.record("expected truncated or connectionFailed, got \(error)")
        }
    }

    @Test func redirectLoopStopsAtTheRedirectLimit() async throws {
        let f = try Fixture()
        defer { f.stop() }
        let error = try await f.failure(.redirect(to: "/bad"))
        switch Self.loading(error) {
        case .tooManyRedirects?, .connectionFailed?: break
        default: Issue.record("expected tooManyRedirects, got \(error)")
        }
    }

    @Test func notModifiedWithoutACachedEntryFails() async throws {
        let f = try Fixture()
        defer { f.stop() }
        let error = try await f.failure(.status(304))
        guard case .statusCode(304, _)? = Self.loading(error) else {
            Issue.record("expected statusCode 304, got \(error)")
            return
        }
    }

    @Test func gzipBombIsBoundedByTheDecodedBodySize() async throws {
        // Given 16 MB of zeros gzip-encoded into ~100 KB, under a 1 MiB body limit
        let f = try Fixture()
        defer { f.stop() }
        let bomb = ImagoTesting.Gzip.zeros(count: 16 << 20)
        let error = try await f.failure(.bytes(bomb, contentType: "image/png").withContentEncoding("gzip"))
        guard case .bodyTooLarge? = Self.loading(error) else {
            Issue.record("expected bodyTooLarge on the decoded size, got \(error)")
            return
        }
    }

    @Test func validFirstHalfThenGarbageFailsToDecode() async throws {
        let f = try Fixture()
        defer { f.stop() }
        var bytes = [UInt8](try corpusData("formats/TestImage.png"))
        for i in bytes.count / 2..<bytes.count { bytes[i] = UInt8(truncatingIfNeeded: i &* 31) }
        let error = try await f.failure(.bytes(Data(bytes), contentType: "image/png"))
        guard case .decodingFailed = error else {
            Issue.record("expected decodingFailed, got \(error)")
            return
        }
    }
}
