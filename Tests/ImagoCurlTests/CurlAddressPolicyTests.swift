import Foundation
import ImagoCore
import ImagoCurl
import ImagoTesting
import Testing

extension LoadingNetworkTests {
    /// The SSRF guard is applied to the address actually connected to: DNS answers and redirect hops cannot get
    /// around it, and the error names the host, never the URL.
    @Suite(.timeLimit(.minutes(1))) struct CurlAddressPolicyTests {
        let body = testBytes(5000)

        func makeLoader(
            _ policy: AddressPolicy, resolving host: String = "images.example", to address: String = "127.0.0.1",
            port: Int
        ) -> CurlDataLoader {
            var configuration = CurlDataLoader.Configuration(loading: testLoaderConfiguration())
            configuration.addressPolicy = policy
            configuration.resolveOverrides = [.init(host: host, port: port, addresses: [address])]
            return CurlDataLoader(configuration: configuration)
        }

        func url(_ host: String, _ server: LoopbackServer, _ path: String) throws -> URL {
            try #require(URL(string: "http://\(host):\(server.url(for: "/").port ?? 0)\(path)"))
        }

        @Test func hostResolvedToLoopbackIsRefused() async throws {
            // Given a public-only loader and a host name that resolves to 127.0.0.1
            let server = try LoopbackServer()
            defer { server.stop() }
            server.setRoute("/a", .bytes(body, contentType: "image/png"))
            let port = server.url(for: "/").port ?? 0
            let loader = makeLoader(.publicOnly, port: port)
            // When it is loaded (with a secret in the query)
            let target = try url("images.example", server, "/a?token=s3cret")
            // Then the load fails naming the host and the address, not the URL, and the server saw nothing
            await #expect(throws: DataLoadingError.addressRefused(host: "images.example", address: "127.0.0.1")) {
                try await loader.data(for: DataRequest(url: target))
            }
            #expect(
                !DataLoadingError.addressRefused(host: "images.example", address: "127.0.0.1").description
                    .contains("s3cret"))
            #expect(server.totalRequestCount == 0)
            // while the same loader with the default policy (.any) loads it
            let open = makeLoader(.any, port: port)
            #expect(try await open.data(for: DataRequest(url: target)).data == body)
        }

        @Test func ipv4MappedIPv6LoopbackIsRefused() async throws {
            let server = try LoopbackServer()
            defer { server.stop() }
            server.setRoute("/a", .bytes(body, contentType: "image/png"))
            let port = server.url(for: "/").port ?? 0
            let loader = makeLoader(.publicOnly, resolving: "images.example", to: "::ffff:127.0.0.1", port: port)
            let result = await Result {
                try await loader.data(for: DataRequest(url: try url("images.example", server, "/a")))
            }
            guard case .failure(DataLoadingError.addressRefused(let host, let address)) = result else {
                Issue.record("expected addressRefused, got \(result)")
                return
            }
            #expect(host == "images.example")
            #expect(IPAddress(address)?.embeddedIPv4 == 0x7F00_0001)
            #expect(server.totalRequestCount == 0)
        }

        @Test func redirectFromAnAllowedHostToLoopbackIsRefused() async throws {
            // Given a loader that trusts images.example (which resolves to 127.0.0.1) and nothing else private
            let server = try LoopbackServer()
            defer { server.stop() }
            server.setRoute("/secret", .bytes(body, contentType: "image/png"))
            server.setRoute("/r", .redirect(to: server.url(for: "/secret").absoluteString))
            server.setRoute("/ok", .bytes(body, contentType: "image/png"))
            let port = server.url(for: "/").port ?? 0
            let loader = makeLoader(AddressPolicy(mode: .publicOnly, allowedHosts: ["images.example"]), port: port)
            // The trusted host itself loads
            #expect(try await loader.data(for: DataRequest(url: try url("images.example", server, "/ok"))).data == body)
            // When it redirects to http://127.0.0.1:port/secret
            let result = await Result {
                try await loader.data(for: DataRequest(url: try url("images.example", server, "/r")))
            }
            // Then the hop to the loopback address is refused before any byte reaches /secret
            guard case .failure(DataLoadingError.addressRefused(let host, let address)) = result else {
                Issue.record("expected addressRefused, got \(result)")
                return
            }
            #expect(host == "127.0.0.1" && address == "127.0.0.1")
            #expect(server.requestCount(for: "/r") == 1)
            #expect(server.requestCount(for: "/secret") == 0)
        }

        @Test func allowedNetworkLetsAPrivateAddressThrough() async throws {
            let server = try LoopbackServer()
            defer { server.stop() }
            server.setRoute("/a", .bytes(body, contentType: "image/png"))
            let port = server.url(for: "/").port ?? 0
            let network = try #require(IPNetwork("127.0.0.0/8"))
            let loader = makeLoader(AddressPolicy(mode: .publicOnly, allowedNetworks: [network]), port: port)
            let response = try await loader.data(for: DataRequest(url: try url("images.example", server, "/a")))
            #expect(response.data == body)
        }
    }

    @Suite(.timeLimit(.minutes(1))) struct CurlMetricsTests {
        @Test func responsesCarryTimingsVersionAndPeer() async throws {
            let server = try LoopbackServer()
            defer { server.stop() }
            server.setRoute("/a", .bytes(testBytes(50_000), contentType: "image/png"))
            let loader = makeTestLoader(testLoaderConfiguration())
            let first = try await loader.data(for: DataRequest(url: server.url(for: "/a")))
            let second = try await loader.data(for: DataRequest(url: server.url(for: "/a")))
            let metrics = try #require(first.metrics)
            #expect(metrics.httpVersion == .http1_1)
            #expect(metrics.remoteAddress == "127.0.0.1")
            #expect(metrics.remotePort == server.url(for: "/").port)
            #expect(metrics.connect != nil && metrics.firstByte != nil)
            #expect(metrics.total >= (metrics.firstByte ?? .zero))
            #expect(metrics.tlsHandshake == nil)
            #expect(!metrics.reusedConnection)
            // the second transfer reused the first one's connection
            #expect(second.metrics?.reusedConnection == true)
            #expect(server.connectionsAccepted == 1)
        }

        /// `idleConnectionLifetime` (imgproxy's `IMGPROXY_CLIENT_KEEP_ALIVE_TIMEOUT`): a connection idle longer is
        /// not reused; zero reuses none.
        @Test func idleConnectionsAreReusedOnlyWithinTheirLifetime() async throws {
            let server = try LoopbackServer()
            defer { server.stop() }
            server.setRoute("/a", .bytes(testBytes(1_000), contentType: "image/png"))
            var never = CurlDataLoader.Configuration(loading: testLoaderConfiguration())
            never.idleConnectionLifetime = .zero
            let closing = CurlDataLoader(configuration: never)
            for _ in 0..<3 { _ = try await closing.data(for: DataRequest(url: server.url(for: "/a"))) }
            #expect(server.connectionsAccepted == 3, "zero: a connection a request")
            server.resetStatistics()
            var short = CurlDataLoader.Configuration(loading: testLoaderConfiguration())
            short.idleConnectionLifetime = .seconds(1)
            let loader = CurlDataLoader(configuration: short)
            _ = try await loader.data(for: DataRequest(url: server.url(for: "/a")))
            let soon = try await loader.data(for: DataRequest(url: server.url(for: "/a")))
            #expect(soon.metrics?.reusedConnection == true && server.connectionsAccepted == 1)
            try await Task.sleep(for: .milliseconds(2_100))
            let late = try await loader.data(for: DataRequest(url: server.url(for: "/a")))
            #expect(late.metrics?.reusedConnection == false && server.connectionsAccepted == 2, "idle past 1 s")
        }
    }
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
