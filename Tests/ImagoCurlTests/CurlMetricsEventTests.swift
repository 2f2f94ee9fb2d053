import Foundation
import ImagoCore
import ImagoCurl
import ImagoTesting
import Testing

extension LoadingNetworkTests {
    /// The wire timings of each attempt that ends on the wire reach observers that ask for them, as `.measured`
    /// before the outcome event (an attempt the loader ends itself, as on a 404 head, has none).
    @Suite(.timeLimit(.minutes(1))) struct CurlMetricsEventTests {
        @Test func observersIncludingMetricsSeeEachAttemptMeasuredBeforeItsOutcome() async throws {
            let server = try LoopbackServer()
            defer { server.stop() }
            server.setRoute("/a", .bytes(testBytes(50_000), contentType: "image/png"))
            server.setRoute("/missing", .status(404))
            let loader = makeTestLoader(testLoaderConfiguration())
            let withMetrics = Locked<[DataLoaderEvent]>([])
            let plain = Locked<[DataLoaderEvent]>([])
            loader.addObserver(includingMetrics: true) { e in withMetrics.withLock { $0.append(e) } }
            loader.addObserver { e in plain.withLock { $0.append(e) } }
            _ = try await loader.data(for: DataRequest(url: server.url(for: "/a")))
            _ = try? await loader.data(for: DataRequest(url: server.url(for: "/missing")))
            #expect(await ImagoTesting.eventually(timeout: patience) { withMetrics.value.count { $0.isTerminal } == 2 })
            let log = withMetrics.value
            // started, measured, finished; started, failed (the loader refused the 404 head itself)
            #expect(log.count == 5)
            guard log.count == 5, case .measured(let url, let metrics) = log[1], case .finished = log[2],
                case .failed = log[4]
            else {
                Issue.record("unexpected events \(log)")
                return
            }
            #expect(url == server.url(for: "/a").absoluteString)
            #expect(metrics.httpVersion == .http1_1)
            #expect(metrics.remoteAddress == "127.0.0.1")
            #expect(metrics.remotePort == server.url(for: "/a").port)
            #expect(metrics.total > .zero)
            #expect((metrics.firstByte ?? .zero) > .zero && (metrics.firstByte ?? .zero) <= metrics.total)
            #expect(metrics.connect != nil)
            // An observer that did not ask sees the usual four events
            #expect(plain.value.count == 4)
            #expect(!plain.value.contains { if case .measured = $0 { true } else { false } })
        }
    }
}
