import Foundation
import Imago
import ImagoServer
import ImagoTesting
import Testing

@Suite("MicroHTTPServer: the proxy over libmicrohttpd")
struct MicroHTTPServerTests {
    /// A fixture served on a free loopback port.
    func serve(_ fixture: ProxyFixture) throws -> MicroHTTPServer {
        let proxy = fixture.proxy
        return try MicroHTTPServer(host: "127.0.0.1", port: 0) { await proxy.respond(to: $0) }
    }

    @Test(.timeLimit(.minutes(1)))
    func servesGETHEADAnd304OverTheWire() async throws {
        let fixture = try ProxyFixture()
        let server = try serve(fixture)
        defer { server.stop() }
        let client = TestHTTPClient()
        let base = "http://127.0.0.1:\(server.port)"
        // A percent-encoded plain source reaches the handler still encoded (libmicrohttpd must not unescape it)
        let encodedSource = fixture.source().addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let get = try await client.send(URL(string: base + "/_/rs:fit:80:80/plain/" + encodedSource)!)
        #expect(get.status == 200 && get.headers["content-type"] == "image/jpeg")
        #expect(get.headers["content-length"] == "\(get.body.count)")
        #expect(try ServerTestImages.decode(get.body).size == PixelSize(width: 80, height: 40))
        let etag = try #require(get.headers["etag"])

        let head = try await client.send(URL(string: base + fixture.path("rs:fit:80:80"))!, method: "HEAD")
        #expect(head.status == 200 && head.body.isEmpty && head.headers["content-length"] == "\(get.body.count)")
        #expect(head.headers["etag"] == etag)

        let conditional = try await client.send(
            URL(string: base + fixture.path("rs:fit:80:80"))!, headers: ["If-None-Match": etag])
        #expect(conditional.status == 304 && conditional.body.isEmpty)

        let health = try await client.send(URL(string: base + "/healthz")!)
        #expect(health.status == 200 && String(decoding: health.body, as: UTF8.self).contains("ok"))
        let error = try await client.send(URL(string: base + fixture.path("nope:1"))!)
        #expect(error.status == 400 && error.headers["content-type"] == "application/json")
        #expect(fixture.origin.requestCount(for: "/a.jpg") == 1)
    }

    @Test(.timeLimit(.minutes(1)))
    func hundredConcurrentIdenticalRequestsCostOneFetchDecodeAndEncode() async throws {
        let fixture = try ProxyFixture()
        let server = try serve(fixture)
        defer { server.stop() }
        let client = TestHTTPClient()
        let url = URL(string: "http://127.0.0.1:\(server.port)" + fixture.path("rs:fill:64:64/f:webp"))!
        // Given the origin holds its answer until all 100 requests are in the proxy
        fixture.origin.suspend("/a.jpg")
        let responses = Task {
            try await withThrowingTaskGroup(of: (Int, Data).self) { group in
                for _ in 0..<100 {
                    group.addTask {
                        let r = try await client.send(url); return (r.status, r.body)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
        }
        #expect(await ImagoTesting.eventually(timeout: .seconds(20)) { fixture.proxy.metrics.inFlight == 100 })
        fixture.origin.resume("/a.jpg")
        let results = try await responses.value
        #expect(results.count == 100 && results.allSatisfy { $0.0 == 200 && $0.1 == results[0].1 })
        #expect(fixture.origin.requestCount(for: "/a.jpg") == 1)
        let samples = prometheusSamples(fixture.proxy.metrics.prometheusText())
        // One render (one decode, one encode) led; 99 joined it
        #expect(samples["imago_serve_cache_hits_total{tier=\"origin\"}"] == 1)
        #expect(samples["imago_serve_cache_hits_total{tier=\"coalesced\"}"] == 99)
        #expect(samples["imago_serve_origin_fetches_total"] == 1)
    }

    @Test(.timeLimit(.minutes(1)))
    func metricsCountWhatWasSent() async throws {
        let fixture = try ProxyFixture()
        let server = try serve(fixture)
        defer { server.stop() }
        let client = TestHTTPClient()
        let base = "http://127.0.0.1:\(server.port)"
        var bodyBytes = 0
        for width in [30, 30, 30, 40] {
            bodyBytes += try await client.send(URL(string: base + fixture.path("w:\(width)"))!).body.count
        }
        for _ in 0..<2 { _ = try await client.send(URL(string: base + fixture.path("bad:1"))!) }
        _ = try await client.send(URL(string: base + fixture.path("", "/missing.jpg"))!)
        _ = try await client.send(URL(string: base + fixture.path("w:30"))!, method: "HEAD")

        let text = String(decoding: try await client.send(URL(string: base + "/metrics")!).body, as: UTF8.self)
        let samples = prometheusSamples(text)
        #expect(text.contains("# TYPE imago_serve_request_duration_seconds histogram"))
        #expect(samples["imago_serve_requests_total{status=\"200\"}"] == 5)
        #expect(samples["imago_serve_requests_total{status=\"400\"}"] == 2)
        #expect(samples["imago_serve_requests_total{status=\"404\"}"] == 1)
        #expect(samples["imago_serve_request_duration_seconds_count"] == 8)
        #expect(samples["imago_serve_request_duration_seconds_bucket{le=\"+Inf\"}"] == 8)
        // w:30 and w:40 rendered from fresh fetches (this fixture keeps no originals on disk); w:30 twice more and
        // its HEAD from the output cache. The 404 is no completed fetch.
        #expect(samples["imago_serve_cache_hits_total{tier=\"origin\"}"] == 2)
        #expect(samples["imago_serve_cache_hits_total{tier=\"output_memory\"}"] == 3)
        #expect(samples["imago_serve_origin_fetches_total"] == 2)
        #expect(Int(samples["imago_serve_bytes_out_total"] ?? 0) >= bodyBytes)
        #expect(samples["imago_serve_bytes_in_total"] == Double(2 * fixture.jpeg.count))
        #expect(samples["imago_serve_requests_in_flight"] == 1)  // this /metrics request
        #expect(samples["imago_serve_queue_length"] == 0)
    }
}
