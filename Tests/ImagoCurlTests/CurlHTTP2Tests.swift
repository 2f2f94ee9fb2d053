import Foundation
import ImagoCore
import ImagoCurl
import ImagoTesting
import Testing

extension LoadingNetworkTests {
    /// HTTP/2 against a real server: nginx with TLS (a certificate made for the run) and `http2` on.
    @Suite(.timeLimit(.minutes(1))) struct CurlHTTP2Tests {
        @Test func hundredImagesAtConcurrencySixTravelOverOneHTTP2Connection() async throws {
            // Given nginx serving 100 images of 20 KB over TLS with HTTP/2
            let root = FileManager.default.temporaryDirectory.appendingPathComponent("h2-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: root) }
            for i in 0..<100 {
                try testBytes(20_000, seed: UInt8(i)).write(to: root.appendingPathComponent("\(i).jpg"))
            }
            let nginx = try NginxServer(root: root)
            defer { nginx.stop() }
            var configuration = CurlDataLoader.Configuration(loading: testLoaderConfiguration(concurrency: 6))
            configuration.tls.caBundlePath = nginx.certificatePath
            let loader = CurlDataLoader(configuration: configuration)
            // When all 100 are requested at once
            let responses = try await withThrowingTaskGroup(of: (Int, DataResponse).self) { group in
                for i in 0..<100 {
                    let url = nginx.http2URL.appendingPathComponent("\(i).jpg")
                    group.addTask { (i, try await loader.data(for: DataRequest(url: url))) }
                }
                return try await group.reduce(into: [Int: DataResponse]()) { $0[$1.0] = $1.1 }
            }
            // Then every body is right, every response says HTTP/2, and nginx saw one connection for all of them
            #expect(responses.count == 100)
            for (i, response) in responses {
                #expect(response.data == testBytes(20_000, seed: UInt8(i)))
                #expect(response.metrics?.httpVersion == .http2)
            }
            #expect(responses.values.contains { $0.metrics?.tlsHandshake != nil })
            #expect(loader.maximumObservedConcurrency == 6)
            let port = try #require(nginx.http2URL.port)
            #expect(nginx.requestCount(port: port) == 100)
            #expect(nginx.connectionCount(port: port) == 1)
        }

        @Test func http1OnlyServerIsSpokenToInHTTP1() async throws {
            let root = FileManager.default.temporaryDirectory.appendingPathComponent("h1-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: root) }
            try testBytes(1000).write(to: root.appendingPathComponent("a.jpg"))
            let nginx = try NginxServer(root: root)
            defer { nginx.stop() }
            var configuration = CurlDataLoader.Configuration(loading: testLoaderConfiguration())
            configuration.tls.caBundlePath = nginx.certificatePath
            let loader = CurlDataLoader(configuration: configuration)
            let response = try await loader.data(
                for: DataRequest(url: nginx.http1TLSURL.appendingPathComponent("a.jpg")))
            #expect(response.metrics?.httpVersion == .http1_1)
            // and without the run's certificate in the CA bundle the same server is refused
            let strict = makeTestLoader(testLoaderConfiguration())
            let refused = await Result {
                try await strict.data(for: DataRequest(url: nginx.http2URL.appendingPathComponent("a.jpg")))
            }
            guard case .failure(DataLoadingError.tlsRefused) = refused else {
                Issue.record("expected tlsRefused, got \(refused)")
                return
            }
        }
    }
}
