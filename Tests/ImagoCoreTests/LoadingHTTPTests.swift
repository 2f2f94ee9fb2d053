import Foundation
import ImagoCore
import ImagoTesting
import Testing

extension LoadingNetworkTests {
    @Suite(.timeLimit(.minutes(1))) struct LoadingConditionalRequestTests {
        @Test func matchingETagIsReportedAsNotModified() async throws {
            let server = try LoopbackServer()
            defer { server.stop() }
            let body = testBytes(5000)
            server.setRoute("/a", .bytes(body, contentType: "image/png").withETag("\"v1\""))
            let loader = makeTestLoader(testLoaderConfiguration())
            // Given a first, unconditional load that returns the body and its validators
            let first = try await loader.data(for: DataRequest(url: server.url(for: "/a")))
            #expect(first.data == body && !first.isNotModified)
            #expect(first.validators.etag == "\"v1\"")
            // When the request is repeated with them
            let second = try await loader.data(
                for: DataRequest(url: server.url(for: "/a"), validators: first.validators))
            // Then the server saw If-None-Match and the answer is "not modified", with no body
            #expect(server.lastRequestHeaders(for: "/a")?["If-None-Match"] == "\"v1\"")
            #expect(second.isNotModified)
            #expect(second.statusCode == 304 && second.data.isEmpty)
            // and a changed resource comes back as a new body
            server.setRoute("/a", .bytes(testBytes(10, seed: 9), contentType: "image/png").withETag("\"v2\""))
            let third = try await loader.data(
                for: DataRequest(url: server.url(for: "/a"), validators: first.validators))
            #expect(!third.isNotModified && third.data == testBytes(10, seed: 9))
        }

        @Test func lastModifiedIsSentAsIfModifiedSince() async throws {
            let server = try LoopbackServer()
            defer { server.stop() }
            let date = Date(timeIntervalSince1970: 1_700_000_000)
            server.setRoute("/a", .bytes(testBytes(100), contentType: "image/png").withLastModified(date))
            let loader = makeTestLoader(testLoaderConfiguration())
            let first = try await loader.data(for: DataRequest(url: server.url(for: "/a")))
            let lastModified = try #require(first.validators.lastModified)
            let second = try await loader.data(
                for: DataRequest(url: server.url(for: "/a"), validators: HTTPValidators(lastModified: lastModified)))
            #expect(server.lastRequestHeaders(for: "/a")?["If-Modified-Since"] == lastModified)
            #expect(second.isNotModified)
        }

        @Test func notModifiedWithoutValidatorsIsAnError() async throws {
            let server = try LoopbackServer()
            defer { server.stop() }
            server.setRoute("/a", .status(304))
            let loader = makeTestLoader(testLoaderConfiguration())
            await #expect(throws: DataLoadingError.statusCode(304, url: server.url(for: "/a"))) {
                try await loader.data(for: DataRequest(url: server.url(for: "/a")))
            }
        }
    }

    @Suite(.timeLimit(.minutes(1))) struct LoadingRequestModifierTests {
        @Test func modifiersAddHeadersTheServerSees() async throws {
            let server = try LoopbackServer()
            defer { server.stop() }
            server.setRoute("/a", .bytes(testBytes(10), contentType: "image/png"))
            let tokens = Locked(0)
            var configuration = testLoaderConfiguration()
            configuration.additionalHeaders = ["User-Agent": "Imago-Test", "Accept": "image/*"]
            configuration.requestModifiers = [
                { request in
                    var request = request
                    let n = tokens.withLock {
                        $0 += 1; return $0
                    }
                    try await Task.sleep(for: .milliseconds(1))  // a modifier may suspend (e.g. refresh a token)
                    request.headers["Authorization"] = "Bearer token-\(n)"
                    return request
                },
                { request in
                    var request = request
                    request.headers["X-Second"] = request.headers["Authorization"]
                    return request
                },
            ]
            let loader = makeTestLoader(configuration)
            _ = try await loader.data(for: DataRequest(url: server.url(for: "/a"), headers: ["Accept": "image/png"]))
            _ = try await loader.data(for: DataRequest(url: server.url(for: "/a"), headers: ["Accept": "image/png"]))
            let headers = try #require(server.lastRequestHeaders(for: "/a"))
            #expect(headers["Authorization"] == "Bearer token-2")  // fresh for each transfer
            #expect(headers["X-Second"] == "Bearer token-2")  // modifiers run in order
            #expect(headers["User-Agent"] == "Imago-Test")
            #expect(headers["Accept"] == "image/png")  // the request's own header wins
        }

        @Test func requestsCarryTheUserAgentUnlessTheySetTheirOwn() async throws {
            let server = try LoopbackServer()
            defer { server.stop() }
            server.setRoute("/a", .bytes(testBytes(10), contentType: "image/png"))
            func userAgent(
                _ configure: (inout HTTPDataLoader.Configuration) -> Void, headers: [String: String] = [:]
            ) async throws -> String? {
                var configuration = testLoaderConfiguration()
                configure(&configuration)
                _ = try await makeTestLoader(configuration).data(
                    for: DataRequest(url: server.url(for: "/a"), headers: headers))
                return server.lastRequestHeaders(for: "/a")?["User-Agent"]
            }
            #expect(try await userAgent({ _ in }) == "Imago/\(ImagoVersion.current)")
            #expect(try await userAgent({ $0.userAgent = "Gallery/2.0" }) == "Gallery/2.0")
            #expect(try await userAgent({ $0.additionalHeaders["user-agent"] = "Mine/1" }) == "Mine/1")
            #expect(try await userAgent({ _ in }, headers: ["User-Agent": "Request/3"]) == "Request/3")
            // nil: none of Imago's (libcurl sends none at all; FoundationNetworking may add its own)
            #expect(try await userAgent({ $0.userAgent = nil }) != HTTPDataLoader.defaultUserAgent)
        }

        @Test func throwingModifierFailsTheLoad() async throws {
            struct NoToken: Error {}
            let server = try LoopbackServer()
            defer { server.stop() }
            server.setRoute("/a", .bytes(testBytes(10), contentType: "image/png"))
            var configuration = testLoaderConfiguration()
            configuration.requestModifiers = [{ _ in throw NoToken() }]
            let loader = makeTestLoader(configuration)
            let recorder = EventRecorder()
            _ = loader.load(DataRequest(url: server.url(for: "/a")), handler: recorder.handler)
            await recorder.waitForResult()
            #expect(recorder.error?.kind == .requestModifierFailed)
            #expect(server.requestCount(for: "/a") == 0)
        }
    }

    @Suite(.timeLimit(.minutes(1))) struct LoadingObservationTests {
        @Test func observersSeeStartAndFinishWithCredentialsRedacted() async throws {
            let server = try LoopbackServer()
            defer { server.stop() }
            server.setRoute("/a", .bytes(testBytes(1234), contentType: "image/png"))
            server.setRoute("/missing", .status(404))
            let loader = makeTestLoader(testLoaderConfiguration())
            let events = Locked<[DataLoaderEvent]>([])
            let token = loader.addObserver { e in events.withLock { $0.append(e) } }
            let activity = NetworkActivityObserver()
            activity.observe(loader)
            var components = URLComponents(url: server.url(for: "/a"), resolvingAgainstBaseURL: false)!
            components.user = "alice"
            components.password = "hunter2"
            _ = try await loader.data(for: DataRequest(url: components.url!))
            _ = try? await loader.data(for: DataRequest(url: server.url(for: "/missing")))
            #expect(await ImagoTesting.eventually(timeout: patience) { events.value.count { $0.isTerminal } == 2 })
            let log = events.value
            #expect(log.count == 4)
            #expect(!log.map(\.description).joined().contains("hunter2"))
            guard case .finished(let url, let bytes, _, let status) = log[1] else {
                Issue.record("expected finished, got \(log)")
                return
            }
            #expect(url == server.url(for: "/a").absoluteString)
            #expect(bytes == 1234 && status == 200)
            #expect(
                log[3]
                    == .failed(
                        url: server.url(for: "/missing").absoluteString,
                        error: .statusCode(404, url: server.url(for: "/missing"))))
            #expect(activity.inFlightCount == 0)
            loader.removeObserver(token)
            _ = try await loader.data(for: DataRequest(url: server.url(for: "/a")))
            #expect(events.value.count == 4)
        }

        @Test func activityObserverCountsTransfersInFlight() async throws {
            let server = try LoopbackServer()
            defer { server.stop() }
            for i in 0..<3 { server.setRoute("/\(i)", .bytes(testBytes(10), contentType: "image/png")) }
            server.suspend("/0")
            server.suspend("/1")
            server.suspend("/2")
            let loader = makeTestLoader(testLoaderConfiguration())
            let activity = NetworkActivityObserver()
            activity.observe(loader)
            let recorders = (0..<3).map { _ in EventRecorder() }
            let tasks = recorders.enumerated().map { i, r in
                loader.load(DataRequest(url: server.url(for: "/\(i)")), handler: r.handler)
            }
            #expect(await ImagoTesting.eventually(timeout: patience) { activity.inFlightCount == 3 })
            tasks[0].cancel()
            #expect(activity.inFlightCount == 2)
            for i in 0..<3 { server.resume("/\(i)") }
            for recorder in recorders { await recorder.waitForResult() }
            #expect(await ImagoTesting.eventually(timeout: patience) { activity.inFlightCount == 0 })
        }

        @Test func progressAndPartialDataArriveBeforeTheResponse() async throws {
            let server = try LoopbackServer()
            defer { server.stop() }
            let body = testBytes(200_000)
            server.setRoute(
                "/a", .bytes(body, contentType: "image/jpeg").dripping(bytes: 20_000, every: .milliseconds(5)))
            let loader = makeTestLoader(testLoaderConfiguration())
            let recorder = EventRecorder()
            _ = loader.load(
                DataRequest(url: server.url(for: "/a"), reportsPartialData: true), handler: recorder.handler)
            await recorder.waitForResult()
            var progress: [Int64] = []
            var partial: [Data] = []
            for event in recorder.events {
                if case .progress(let received, let expected) = event {
                    progress.append(received)
                    #expect(expected == 200_000)
                }
                if case .partialData(let data) = event { partial.append(data) }
            }
            #expect(progress.count >= 2)
            #expect(progress == progress.sorted())
            #expect(progress.last == 200_000)
            #expect(!partial.isEmpty && partial.allSatisfy { body.starts(with: $0) })
            #expect(recorder.response?.data == body)
        }
    }

    @Suite(.timeLimit(.minutes(1))) struct LoadingAsyncTests {
        @Test func cancellingTheCallingTaskCancelsTheLoad() async throws {
            let server = try LoopbackServer()
            defer { server.stop() }
            server.setRoute("/endless", .endless().dripping(bytes: 1000, every: .milliseconds(5)))
            let loader = makeTestLoader(testLoaderConfiguration())
            let task = Task { try await loader.data(for: DataRequest(url: server.url(for: "/endless"))) }
            #expect(await server.waitUntil(timeout: patience) { $0.requestCount(for: "/endless") == 1 })
            task.cancel()
            await #expect(throws: DataLoadingError.cancelled) { try await task.value }
            #expect(await server.waitUntil(timeout: patience) { $0.abortedTransfers(for: "/endless") == 1 })
        }

        @Test func alreadyCancelledTaskNeverStartsATransferThatLingers() async throws {
            let server = try LoopbackServer()
            defer { server.stop() }
            server.setRoute("/a", .bytes(testBytes(10), contentType: "image/png"))
            let loader = makeTestLoader(testLoaderConfiguration())
            let task = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await loader.data(for: DataRequest(url: server.url(for: "/a")))
            }
            await #expect(throws: DataLoadingError.cancelled) { try await task.value }
            #expect(await ImagoTesting.eventually(timeout: patience) { loader.transferCount == 0 })
        }
    }
}
