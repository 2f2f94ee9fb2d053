import Foundation
import ImagoCore
import ImagoCurl
import ImagoTesting
import Testing

extension LoadingNetworkTests {
    /// An international name goes out in its IDNA form; a redirect libcurl cannot parse is not retried (hosts no
    /// resolver takes: `LoadingFaultTests`, for both loaders).
    @Suite(.timeLimit(.minutes(1))) struct CurlHostNameTests {
        let body = testBytes(3000)

        /// A libcurl loader that retries twice, with `overrides` in its resolver.
        func makeLoader(_ overrides: [CurlDataLoader.ResolveOverride] = []) -> CurlDataLoader {
            var loading = testLoaderConfiguration()
            loading.retryPolicy = RetryPolicy(maximumRetries: 2)
            var configuration = CurlDataLoader.Configuration(loading: loading)
            configuration.resolveOverrides = overrides
            return CurlDataLoader(configuration: configuration)
        }

        @Test func anInternationalHostGoesOutInItsIDNAForm() async throws {
            let server = try LoopbackServer()
            defer { server.stop() }
            server.setRoute("/a", .bytes(body, contentType: "image/png"))
            let port = server.url(for: "/").port ?? 0
            let loader = makeLoader([.init(host: "xn--bcher-kva.example", port: port, addresses: ["127.0.0.1"])])
            // Percent-encoded UTF-8, as a URL encoder writes "bücher.example"
            let url = try #require(URL(string: "http://b%C3%BCcher.example:\(port)/a"))
            #expect(try await loader.data(for: DataRequest(url: url)).data == body)
            #expect(server.lastRequestHeaders(for: "/a")?["Host"] == "xn--bcher-kva.example:\(port)")
        }

        @Test func aRedirectToAURLLibcurlCannotParseIsNotRetried() async throws {
            let server = try LoopbackServer()
            defer { server.stop() }
            server.setRoute("/r", .redirect(to: "http://[::1/x.jpg"))
            let loader = makeLoader()
            let result = await Result { try await loader.data(for: DataRequest(url: server.url(for: "/r"))) }
            guard case .failure(DataLoadingError.invalidURL) = result else {
                Issue.record("expected invalidURL, got \(result)")
                return
            }
            #expect(server.requestCount(for: "/r") == 1)
        }
    }
}
