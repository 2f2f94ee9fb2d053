import Foundation
import ImagoCore
import ImagoTesting
import Testing

extension LoadingNetworkTests {
    @Suite(.timeLimit(.minutes(1))) struct LoadingTLSTests {
        @Test func selfSignedCertificateIsRefused() async throws {
            // Given an HTTPS server on 127.0.0.1 whose certificate no authority signed
            let server = try await SelfSignedTLSServer()
            defer { server.stop() }
            let url = try #require(URL(string: "https://127.0.0.1:\(server.port)/image.png"))
            var configuration = testLoaderConfiguration()
            configuration.retryPolicy = RetryPolicy(maximumRetries: 2, initialDelay: .milliseconds(5))
            let loader = makeTestLoader(configuration)
            let events = Locked<[DataLoaderEvent]>([])
            loader.addObserver { e in events.withLock { $0.append(e) } }

            // When a loader that retries fetches from it
            let recorder = EventRecorder()
            let task = loader.load(DataRequest(url: url), handler: recorder.handler)
            let result = await recorder.waitForResult(timeout: .seconds(30))
            _ = task

            // Then the load fails as a refused TLS connection, not retried (a handshake again cannot help), and
            // nothing was delivered
            guard case .failure(.tlsRefused(let failedURL, _)) = result else {
                Issue.record("expected tlsRefused, got \(String(describing: result))")
                return
            }
            #expect(failedURL == url)
            #expect(await ImagoTesting.eventually(timeout: .seconds(5)) { events.value.contains { $0.isTerminal } })
            #expect(!events.value.contains { if case .retried = $0 { true } else { false } }, "\(events.value)")
            let refusal = DataLoadingError.tlsRefused(url: url, reason: "unknown ca")
            #expect(FailureCache.reason(for: refusal) == .rejected(refusal.description))
            #expect(!recorder.events.contains { if case .partialData = $0 { true } else { false } })
            // and the server saw the client abort the handshake over the certificate (not a refused connection)
            let sawAlert = await ImagoTesting.eventually(timeout: .seconds(5)) {
                server.log.contains("unknown ca") || server.log.contains("bad certificate")
                    || server.log.contains("certificate unknown")
            }
            #expect(sawAlert, "s_server said: \(server.log)")
        }
    }
}
