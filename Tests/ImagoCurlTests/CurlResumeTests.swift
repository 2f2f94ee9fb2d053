import Foundation
import ImagoCore
import ImagoCurl
import ImagoTesting
import Testing

extension LoadingNetworkTests {
    /// Resumable downloads: an interrupted body with a strong validator and `Accept-Ranges: bytes` is continued
    /// with `Range` + `If-Range`; a `206` is appended, a `200` starts over.
    @Suite(.timeLimit(.minutes(1))) struct CurlResumeTests {
        let body = testBytes(300_000)

        /// Serves `body` with `etag`, answering a `Range: bytes=N-` whose `If-Range` matches with a `206`.
        static func rangeRoute(_ body: Data, etag: String, acceptsRanges: Bool = true) -> LoopbackServer.Route {
            .handler { request in
                var headers: LoopbackServer.Headers = ["Content-Type": "image/png", "ETag": etag]
                if acceptsRanges { headers["Accept-Ranges"] = "bytes" }
                if acceptsRanges, let range = request.headers["Range"], request.headers["If-Range"] == etag,
                    range.hasPrefix("bytes="), range.hasSuffix("-"), let start = Int(range.dropFirst(6).dropLast()),
                    start < body.count
                {
                    headers["Content-Range"] = "bytes \(start)-\(body.count - 1)/\(body.count)"
                    return .init(status: 206, headers: headers, body: body.subdata(in: start..<body.count))
                }
                return .init(status: 200, headers: headers, body: body)
            }
        }

        /// Loads `/r` once with the route cut at half; returns the loader (which kept the bytes).
        func interruptedLoad(_ server: LoopbackServer, route: LoopbackServer.Route) async throws -> CurlDataLoader {
            server.setRoute("/r", route.closing(afterBytes: 150_000))
            let loader = makeTestLoader(testLoaderConfiguration())
            let first = EventRecorder()
            _ = loader.load(DataRequest(url: server.url(for: "/r")), handler: first.handler)
            await first.waitForResult()
            guard case .truncated(_, 300_000, 150_000) = first.error else {
                Issue.record("expected the first load to be cut at half, got \(String(describing: first.result))")
                return loader
            }
            return loader
        }

        @Test func bodyCutAtHalfIsCompletedWithRangeAndIfRange() async throws {
            let server = try LoopbackServer()
            defer { server.stop() }
            let loader = try await interruptedLoad(server, route: Self.rangeRoute(body, etag: "\"v1\""))
            // When the server is whole again and the image is asked for again
            server.setRoute("/r", Self.rangeRoute(body, etag: "\"v1\""))
            let second = EventRecorder()
            _ = loader.load(DataRequest(url: server.url(for: "/r")), handler: second.handler)
            await second.waitForResult()
            // Then only the second half travelled, and the caller got the whole body as a 200
            let headers = try #require(server.lastRequestHeaders(for: "/r"))
            #expect(headers["Range"] == "bytes=150000-")
            #expect(headers["If-Range"] == "\"v1\"")
            let response = try #require(second.response)
            #expect(response.data == body)
            #expect(response.statusCode == 200)
            // and progress covered the whole file
            var progress: [(Int64, Int64?)] = []
            for case .progress(let received, let expected) in second.events { progress.append((received, expected)) }
            #expect(!progress.isEmpty && progress.allSatisfy { $0.0 > 150_000 && $0.1 == 300_000 })
            #expect(progress.last?.0 == 300_000)
        }

        @Test func changedETagRestartsFromZero() async throws {
            let server = try LoopbackServer()
            defer { server.stop() }
            let loader = try await interruptedLoad(server, route: Self.rangeRoute(body, etag: "\"v1\""))
            // When the resource changed meanwhile: If-Range no longer matches, the server sends all of it
            let changed = testBytes(280_000, seed: 7)
            server.setRoute("/r", Self.rangeRoute(changed, etag: "\"v2\""))
            let second = EventRecorder()
            _ = loader.load(DataRequest(url: server.url(for: "/r")), handler: second.handler)
            await second.waitForResult()
            // Then the new body is delivered whole, nothing of the old one mixed in
            #expect(server.lastRequestHeaders(for: "/r")?["If-Range"] == "\"v1\"")
            #expect(second.response?.data == changed)
            var expected: Set<Int64?> = []
            for case .progress(_, let total) in second.events { expected.insert(total) }
            #expect(expected == [280_000])
        }

        @Test func responseWithoutAcceptRangesIsNotResumed() async throws {
            let server = try LoopbackServer()
            defer { server.stop() }
            let loader = try await interruptedLoad(
                server, route: Self.rangeRoute(body, etag: "\"v1\"", acceptsRanges: false))
            server.setRoute("/r", Self.rangeRoute(body, etag: "\"v1\"", acceptsRanges: false))
            #expect(try await loader.data(for: DataRequest(url: server.url(for: "/r"))).data == body)
            #expect(server.lastRequestHeaders(for: "/r")?["Range"] == nil)
        }

        /// `Content-Range` values a server may send after a `Range: bytes=150000-` for a 300,000-byte body, and
        /// whether they continue it. Numbers at `Int64`'s ends are the server's to send and must not trap.
        @Test(arguments: [
            ("bytes 150000-299999/300000", true),
            ("BYTES 150000 - 299999 / 300000", true),
            ("bytes 150000-299999/*", false),
            ("bytes 150000-299998/300000", false),
            ("bytes 150000-299999/-9223372036854775808", false),
            ("bytes 0-9223372036854775807/-9223372036854775808", false),
            ("bytes -9223372036854775808-299999/300000", false),
            ("bytes 150000-9223372036854775807/9223372036854775807", false),
            ("bytes 9223372036854775806-9223372036854775806/9223372036854775807", false),
            ("bytes 300000-299999/300000", false),
            ("bytes 150000-299999/300000/1", false),
            ("items 150000-299999/300000", false),
        ])
        func contentRangeIsReadWithoutOverflow(value: String, continues: Bool) {
            let range = LoadCoordinator.contentRange(value)
            #expect((range?.start == 150_000 && range?.total == 300_000) == continues, "\(value)")
        }

        @Test func a206WithATotalAtInt64sEndFailsTheLoad() async throws {
            // Given a body cut at half, and a server that then answers the rest with a range whose total is
            // Int64.min (where `total - 1` would overflow)
            let server = try LoopbackServer()
            defer { server.stop() }
            let loader = try await interruptedLoad(server, route: Self.rangeRoute(body, etag: "\"v1\""))
            let rest = body.subdata(in: 150_000..<body.count)
            server.setRoute(
                "/r",
                .handler { _ in
                    .init(
                        status: 206,
                        headers: [
                            "ETag": "\"v1\"", "Content-Type": "image/png",
                            "Content-Range": "bytes 150000-299999/-9223372036854775808",
                        ], body: rest)
                })
            // When it is loaded again
            let second = EventRecorder()
            _ = loader.load(DataRequest(url: server.url(for: "/r")), handler: second.handler)
            await second.waitForResult()
            // Then the load fails saying the range does not continue the kept bytes, and the process lives on
            #expect(server.lastRequestHeaders(for: "/r")?["Range"] == "bytes=150000-")
            guard case .connectionFailed(_, let reason) = second.error else {
                Issue.record("expected connectionFailed, got \(String(describing: second.result))")
                return
            }
            #expect(reason.contains("range does not continue"))
        }

        @Test func retryAfterAResetContinuesWhereItStopped() async throws {
            // Given a route that resets every response after 100 KB (so a full restart can never succeed)
            let server = try LoopbackServer()
            defer { server.stop() }
            server.setRoute("/r", Self.rangeRoute(body, etag: "\"v1\"").resetting(afterBytes: 100_000))
            var configuration = testLoaderConfiguration()
            configuration.retryPolicy = RetryPolicy(maximumRetries: 3, initialDelay: .milliseconds(5))
            let loader = makeTestLoader(configuration)
            // When it is loaded with retries
            let response = try await loader.data(for: DataRequest(url: server.url(for: "/r")))
            // Then each retry asked for the rest, and the pieces make the whole body
            #expect(response.data == body)
            #expect(server.requestCount(for: "/r") == 3)
            #expect(server.lastRequestHeaders(for: "/r")?["Range"] == "bytes=200000-")
        }
    }
}
