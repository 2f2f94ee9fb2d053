import Foundation
import ImagoCore
import ImagoTesting
import Testing

extension LoadingNetworkTests {
    @Suite(.timeLimit(.minutes(1))) struct LoadingCoalescingTests {
        @Test func coalescesHundredConcurrentRequestsIntoOneTransfer() async throws {
            // Given a server holding /a at its gate
            let server = try LoopbackServer()
            defer { server.stop() }
            let body = testBytes(200_000)
            server.setRoute("/a", .bytes(body, contentType: "image/png"))
            server.suspend("/a")
            let loader = makeTestLoader(testLoaderConfiguration())
            let coalesced = Locked(0)
            loader.addObserver { if case .coalesced = $0 { coalesced.withLock { $0 += 1 } } }
            // When 100 callers ask for it at once
            let recorders = (0..<100).map { _ in EventRecorder() }
            let tasks = recorders.map { loader.load(DataRequest(url: server.url(for: "/a")), handler: $0.handler) }
            #expect(await server.waitUntil(timeout: patience) { $0.suspendedRequestCount(for: "/a") == 1 })
            server.resume("/a")
            for recorder in recorders { await recorder.waitForResult() }
            // Then the server saw one request and every caller got the whole body, once
            #expect(server.requestCount(for: "/a") == 1)
            #expect(coalesced.value == 99)
            for recorder in recorders {
                #expect(recorder.response?.data == body)
                #expect(recorder.terminalCount == 1)
                #expect(recorder.isWellFormed)
                #expect(recorder.events.contains { if case .progress = $0 { true } else { false } })
            }
            _ = tasks
        }

        @Test func cancellingAllButOneKeepsTheTransferAlive() async throws {
            let server = try LoopbackServer()
            defer { server.stop() }
            let body = testBytes(100_000)
            server.setRoute("/a", .bytes(body, contentType: "image/jpeg"))
            server.suspend("/a")
            let loader = makeTestLoader(testLoaderConfiguration())
            let recorders = (0..<100).map { _ in EventRecorder() }
            let tasks = recorders.map { loader.load(DataRequest(url: server.url(for: "/a")), handler: $0.handler) }
            #expect(await server.waitUntil(timeout: patience) { $0.suspendedRequestCount(for: "/a") == 1 })
            // When 99 cancel
            for task in tasks.dropLast() { task.cancel() }
            // Then each of them has its cancellation at once
            for recorder in recorders.dropLast() {
                #expect(recorder.error == .cancelled)
                #expect(recorder.events.count == 1)
            }
            server.resume("/a")
            // and the last one still gets the data from the same single transfer
            await recorders.last!.waitForResult()
            #expect(recorders.last!.response?.data == body)
            #expect(server.requestCount(for: "/a") == 1)
            #expect(await server.waitUntil(timeout: patience) { $0.completedTransfers(for: "/a") == 1 })
            #expect(server.abortedTransfers(for: "/a") == 0)
            for recorder in recorders.dropLast() { #expect(recorder.events.count == 1) }  // nothing after cancel
        }

        @Test func cancellingEverySubscriberAbortsTheTransfer() async throws {
            let server = try LoopbackServer()
            defer { server.stop() }
            server.setRoute("/endless", .endless().dripping(bytes: 16_384, every: .milliseconds(2)))
            let loader = makeTestLoader(testLoaderConfiguration())
            let recorders = (0..<100).map { _ in EventRecorder() }
            let tasks = recorders.map {
                loader.load(DataRequest(url: server.url(for: "/endless")), handler: $0.handler)
            }
            // When the body is flowing and every caller cancels
            #expect(await ImagoTesting.eventually(timeout: patience) { recorders[0].events.count >= 2 })
            for task in tasks { task.cancel() }
            // Then the server sees the connection aborted, and the loader holds nothing
            #expect(await server.waitUntil(timeout: patience) { $0.abortedTransfers(for: "/endless") == 1 })
            #expect(server.requestCount(for: "/endless") == 1)
            #expect(loader.transferCount == 0)
            for recorder in recorders {
                #expect(recorder.error == .cancelled)
                #expect(recorder.terminalCount == 1 && recorder.isWellFormed)
            }
        }

        @Test func differentCredentialsOrAcceptHeadersNeverShareATransfer() async throws {
            let server = try LoopbackServer()
            defer { server.stop() }
            server.setRoute(
                "/a",
                .handler { request in
                    .init(
                        status: 200, headers: ["Content-Type": "image/png"],
                        body: Data((request.headers["Authorization"] ?? "-").utf8))
                })
            server.suspend("/a")
            let loader = makeTestLoader(testLoaderConfiguration())
            let url = server.url(for: "/a")
            let requests = [
                DataRequest(url: url, headers: ["Authorization": "Bearer alice"]),
                DataRequest(url: url, headers: ["authorization": "Bearer bob"]),
                DataRequest(url: url, headers: ["Authorization": "Bearer alice", "Accept": "image/webp"]),
                // X-Request-ID is ignored for coalescing: this one joins the first
                DataRequest(url: url, headers: ["Authorization": "Bearer alice", "X-Request-ID": "2"]),
            ]
            let recorders = requests.map { _ in EventRecorder() }
            let tasks = zip(requests, recorders).map { loader.load($0, handler: $1.handler) }
            #expect(await server.waitUntil(timeout: patience) { $0.suspendedRequestCount(for: "/a") == 3 })
            server.resume("/a")
            for recorder in recorders { await recorder.waitForResult() }
            #expect(server.requestCount(for: "/a") == 3)
            #expect(
                recorders.map { $0.response.map { String(decoding: $0.data, as: UTF8.self) } } == [
                    "Bearer alice", "Bearer bob", "Bearer alice", "Bearer alice",
                ])
            _ = tasks
        }

        @Test func exactlyOneTerminalEventPerSubscriberWhenCancelsRaceCompletion() async throws {
            let server = try LoopbackServer()
            defer { server.stop() }
            server.setRoute("/a", .bytes(testBytes(50_000), contentType: "image/png"))
            let loader = makeTestLoader(testLoaderConfiguration())
            for round in 0..<20 {
                let recorders = (0..<20).map { _ in EventRecorder() }
                let tasks = recorders.map {
                    loader.load(DataRequest(url: server.url(for: "/a"), reportsPartialData: true), handler: $0.handler)
                }
                await withTaskGroup(of: Void.self) { group in
                    for (i, task) in tasks.enumerated() where i % 2 == round % 2 { group.addTask { task.cancel() } }
                }
                for recorder in recorders { await recorder.waitForResult() }
                for recorder in recorders {
                    #expect(recorder.terminalCount == 1)
                    #expect(recorder.isWellFormed)
                }
                // Cancelled or not, nothing more arrives later
                let counts = recorders.map(\.events.count)
                #expect(await ImagoTesting.eventually(timeout: patience) { loader.transferCount == 0 })
                #expect(recorders.map(\.events.count) == counts)
            }
        }
    }
}
