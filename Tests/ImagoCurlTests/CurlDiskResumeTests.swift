import Foundation
import ImagoCore
import ImagoCurl
import ImagoTesting
import Testing

extension LoadingNetworkTests {
    /// Resume through a pipeline's disk cache: an interrupted body is kept as a file in the cache's staging area
    /// (`tmp/`), not in the loader, so a new loader using the same cache continues it.
    @Suite(.timeLimit(.minutes(1))) struct CurlDiskResumeTests {
        let body = testBytes(300_000)

        /// Runs `body` with a fresh disk cache and loopback server, removed afterwards.
        func withCacheAndServer(_ body: (DiskCache, LoopbackServer) async throws -> Void) async throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "imago-resume-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            let server = try LoopbackServer()
            defer { server.stop() }
            try await body(try DiskCache(directory: directory), server)
        }

        /// A loader adopted by a pipeline over `cache` (the pipeline hands it the cache's resume store).
        func adoptedLoader(_ cache: DiskCache) -> CurlDataLoader {
            let loader = makeTestLoader(testLoaderConfiguration())
            _ = ImagePipeline(configuration: ImagePipeline.Configuration(dataLoader: loader, dataCache: cache))
            return loader
        }

        /// The staging area's resume files.
        func resumeFiles(_ cache: DiskCache) -> [String] {
            let tmp = cache.directory.appendingPathComponent("tmp").path
            return ((try? FileManager.default.contentsOfDirectory(atPath: tmp)) ?? []).filter {
                $0.hasSuffix(".part")
            }
        }

        /// Cuts `/r` at half through a first loader of `cache`; returns after its failure.
        func interrupt(_ server: LoopbackServer, _ cache: DiskCache) async {
            server.setRoute("/r", CurlResumeTests.rangeRoute(body, etag: "\"v1\"").closing(afterBytes: 150_000))
            let first = EventRecorder()
            let loader = adoptedLoader(cache)
            let task = loader.load(DataRequest(url: server.url(for: "/r")), handler: first.handler)
            await first.waitForResult()
            withExtendedLifetime(task) {}
            guard case .truncated(_, 300_000, 150_000) = first.error else {
                Issue.record("expected the first load to be cut at half, got \(String(describing: first.result))")
                return
            }
        }

        @Test func bytesCutAtHalfAreStagedOnDiskAndANewLoaderCompletesThemWithRange() async throws {
            try await withCacheAndServer { cache, server in
                // Given a transfer cut at half by a loader of a pipeline with a disk cache
                await interrupt(server, cache)
                // Then its bytes are a file in the cache's staging area
                #expect(resumeFiles(cache).count == 1)
                #expect(cache.resumeStore.byteCount == 150_000)
                // When a new loader of the same cache asks again
                server.setRoute("/r", CurlResumeTests.rangeRoute(body, etag: "\"v1\""))
                let response = try await adoptedLoader(cache).data(for: DataRequest(url: server.url(for: "/r")))
                // Then only the rest travelled, the whole body arrived, and the staged file is gone
                let headers = try #require(server.lastRequestHeaders(for: "/r"))
                #expect(headers["Range"] == "bytes=150000-")
                #expect(headers["If-Range"] == "\"v1\"")
                #expect(response.data == body)
                #expect(response.statusCode == 200)
                #expect(resumeFiles(cache).isEmpty)
            }
        }

        @Test func changedETagRestartsFromZero() async throws {
            try await withCacheAndServer { cache, server in
                await interrupt(server, cache)
                // When the resource changed meanwhile
                let changed = testBytes(280_000, seed: 7)
                server.setRoute("/r", CurlResumeTests.rangeRoute(changed, etag: "\"v2\""))
                let response = try await adoptedLoader(cache).data(for: DataRequest(url: server.url(for: "/r")))
                // Then If-Range did not match and the new body came whole
                #expect(server.lastRequestHeaders(for: "/r")?["If-Range"] == "\"v1\"")
                #expect(response.data == changed)
                #expect(resumeFiles(cache).isEmpty)
            }
        }

        @Test func stagedBytesAreBoundedByTheLoadersLimit() async throws {
            try await withCacheAndServer { cache, server in
                var configuration = CurlDataLoader.Configuration(loading: testLoaderConfiguration())
                configuration.resumableBytesLimit = 100_000
                let loader = CurlDataLoader(configuration: configuration)
                _ = ImagePipeline(configuration: ImagePipeline.Configuration(dataLoader: loader, dataCache: cache))
                server.setRoute("/r", CurlResumeTests.rangeRoute(body, etag: "\"v1\"").closing(afterBytes: 150_000))
                _ = try? await loader.data(for: DataRequest(url: server.url(for: "/r")))
                // 150,000 bytes do not fit in 100,000: nothing is staged
                #expect(resumeFiles(cache).isEmpty)
                #expect(cache.resumeStore.byteCount == 0)
            }
        }
    }
}
