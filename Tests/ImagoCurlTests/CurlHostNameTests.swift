import Foundation
import ImagoCore
import ImagoCurl
import ImagoTesting
import Testing

extension LoadingNetworkTests {
    /// A host no resolver takes fails at once with a typed error, never looked up or retried; an international name
    /// goes out in its IDNA form.
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

        @Test(arguments: [
            ("http://a%00.example/x.jpg", "the host a%00.example holds %00"),
            ("http://a%20b.example/x.jpg", "the host a%20b.example holds %20"),
            ("https://a!b.example/x.jpg", "the host a!b.example holds '!'"),
            ("http://\(String(repeating: "a.", count: 150))example/x.jpg", "the host is 307 characters long"),
            ("http://[fe80::1%25e!]/x.jpg", "the host [fe80::1%"),
        ])
        func aHostNoResolverTakesFailsAtOnceWithoutRetries(text: String, reason: String) async throws {
            let url = try #require(URL(string: text))
            let loader = makeLoader()
            let started = ContinuousClock.now
            let result = await Result { try await loader.data(for: DataRequest(url: url)) }
            guard case .failure(DataLoadingError.invalidURL(let failed, let said)) = result else {
                Issue.record("expected invalidURL, got \(result)")
                return
            }
            #expect(failed == url && said.hasPrefix(reason), "\(said)")
            #expect(!DataLoadingError.invalidURL(url: url, reason: said).isTransient)
            // The first retry's back-off alone is 0.5 s: well under it means no lookup, no retry
            #expect(ContinuousClock.now - started < .milliseconds(300))
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
