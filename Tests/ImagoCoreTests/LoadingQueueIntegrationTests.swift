import Foundation
import ImagoCore
import ImagoTesting
import Testing

extension LoadingNetworkTests {
    @Suite(.timeLimit(.minutes(1))) struct LoadingConcurrencyTests {
        @Test func concurrencyNeverExceedsTheLimit() async throws {
            // Given 24 distinct resources, all held at the server's gate, and a loader limited to 3 transfers
            let server = try LoopbackServer()
            defer { server.stop() }
            let paths = (0..<24).map { "/\($0)" }
            for path in paths {
                server.setRoute(path, .bytes(testBytes(20_000), contentType: "image/png"))
                server.suspend(path)
            }
            let loader = makeTestLoader(testLoaderConfiguration(concurrency: 3))
            // When all are requested at once
            let recorders = paths.map { _ in EventRecorder() }
            let tasks = zip(paths, recorders).map { path, r in
                loader.load(DataRequest(url: server.url(for: path)), handler: r.handler)
            }
            // Then exactly 3 reach the server while the gate holds them
            #expect(
                await server.waitUntil(timeout: patience) { server in
                    paths.reduce(0) { $0 + server.suspendedRequestCount(for: $1) } == 3
                })
            #expect(server.totalRequestCount == 3)
            for path in paths { server.resume(path) }
            for recorder in recorders { await recorder.waitForResult() }
            // and, released, all succeed without the server ever seeing more than 3 at a time
            #expect(recorders.allSatisfy { $0.response?.data.count == 20_000 })
            #expect(server.maxConcurrentRequests == 3)
            #expect(loader.maximumObservedConcurrency == 3)
            _ = tasks
        }

        @Test func highPriorityOvertakesQueuedLowPriority() async throws {
            // Given a loader of one slot whose queue is suspended while requests arrive
            let server = try LoopbackServer()
            defer { server.stop() }
            for name in ["low1", "low2", "low3", "high", "raised"] {
                server.setRoute("/\(name)", .bytes(testBytes(1000), contentType: "image/png"))
            }
            let loader = makeTestLoader(testLoaderConfiguration(concurrency: 1))
            let order = Locked<[String]>([])
            loader.addObserver { event in
                if case .started(let url, _) = event {
                    order.withLock { $0.append(String(url.split(separator: "/").last!)) }
                }
            }
            loader.suspend()
            var tasks: [any DataLoadTask] = []
            let recorders = (0..<5).map { _ in EventRecorder() }
            for (i, name) in ["low1", "low2", "low3"].enumerated() {
                tasks.append(
                    loader.load(
                        DataRequest(url: server.url(for: "/\(name)"), priority: .low), handler: recorders[i].handler))
            }
            tasks.append(
                loader.load(DataRequest(url: server.url(for: "/high"), priority: .high), handler: recorders[3].handler))
            let raised = loader.load(
                DataRequest(url: server.url(for: "/raised"), priority: .veryLow), handler: recorders[4].handler)
            // When one waiting request is raised to veryHigh and the queue resumes
            raised.setPriority(.veryHigh)
            loader.resume()
            for recorder in recorders { await recorder.waitForResult() }
            // Then the raised one goes first, then high, then the low ones in order
            #expect(order.value == ["raised", "high", "low1", "low2", "low3"])
            #expect(server.maxConcurrentRequests == 1)
            _ = tasks
        }

        @Test func sharedTransferRunsAtTheHighestPriorityOfItsSubscribers() async throws {
            let server = try LoopbackServer()
            defer { server.stop() }
            for name in ["a", "b"] { server.setRoute("/\(name)", .bytes(testBytes(1000), contentType: "image/png")) }
            let loader = makeTestLoader(testLoaderConfiguration(concurrency: 1))
            let order = Locked<[String]>([])
            loader.addObserver { event in
                if case .started(let url, _) = event {
                    order.withLock { $0.append(String(url.split(separator: "/").last!)) }
                }
            }
            loader.suspend()
            let recorders = (0..<3).map { _ in EventRecorder() }
            let t1 = loader.load(
                DataRequest(url: server.url(for: "/a"), priority: .normal), handler: recorders[0].handler)
            let t2 = loader.load(DataRequest(url: server.url(for: "/b"), priority: .low), handler: recorders[1].handler)
            // a second subscriber of /b at high priority lifts the shared transfer above /a
            let t3 = loader.load(
                DataRequest(url: server.url(for: "/b"), priority: .high), handler: recorders[2].handler)
            loader.resume()
            for recorder in recorders { await recorder.waitForResult() }
            #expect(order.value == ["b", "a"])
            #expect(server.requestCount(for: "/b") == 1)
            _ = (t1, t2, t3)
        }

        @Test func cancelAllEndsQueuedAndRunningLoads() async throws {
            let server = try LoopbackServer()
            defer { server.stop() }
            server.setRoute("/slow", .endless().dripping(bytes: 1000, every: .milliseconds(5)))
            for i in 0..<5 { server.setRoute("/q\(i)", .bytes(testBytes(10), contentType: "image/png")) }
            let loader = makeTestLoader(testLoaderConfiguration(concurrency: 1))
            let running = EventRecorder()
            let tasks = [loader.load(DataRequest(url: server.url(for: "/slow")), handler: running.handler)]
            let queued = (0..<5).map { _ in EventRecorder() }
            let more = queued.enumerated().map { i, r in
                loader.load(DataRequest(url: server.url(for: "/q\(i)")), handler: r.handler)
            }
            #expect(await ImagoTesting.eventually(timeout: patience) { running.events.count >= 1 })
            loader.cancelAll()
            #expect(running.error == .cancelled)
            #expect(queued.allSatisfy { $0.error == .cancelled })
            #expect(await server.waitUntil(timeout: patience) { $0.abortedTransfers(for: "/slow") == 1 })
            #expect(server.totalRequestCount == 1)
            #expect(loader.transferCount == 0)
            // the slot was given back: a new load runs
            let after = EventRecorder()
            let task = loader.load(DataRequest(url: server.url(for: "/q0")), handler: after.handler)
            await after.waitForResult()
            #expect(after.response?.data.count == 10)
            _ = (tasks, more, task)
        }
    }
}
