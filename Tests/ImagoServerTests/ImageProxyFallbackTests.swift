import Foundation
import Imago
import ImagoTesting
import Testing

@testable import ImagoServer

@Suite("ImageProxy: a fallback image answers for sources that cannot be had")
struct ImageProxyFallbackTests {
    /// A fixture whose proxy has a 40 × 20 fallback JPEG (`status`, `maxAge`), with a missing source at `/gone.jpg`
    /// and an HTML page at `/page.jpg`.
    func fixture(status: Int? = 200, maxAge: Duration? = nil) throws -> (ProxyFixture, FallbackImage) {
        let fallback = try FallbackImage(
            data: try ServerTestImages.jpeg(width: 40, height: 20), status: status, maxAge: maxAge)
        let fixture = try ProxyFixture { $0.fallbackImage = fallback }
        fixture.origin.setRoute("/page.jpg", .bytes(Data("<html>moved</html>".utf8), contentType: "image/jpeg"))
        return (fixture, fallback)
    }

    @Test func aMissingSourceIsAnsweredWithTheFallbackRenderedForTheURL() async throws {
        let (fixture, _) = try fixture(maxAge: .seconds(60))

        let response = await fixture.get(fixture.path("rs:fit:20:20", "/gone.jpg", ext: "png"))

        #expect(response.status == 200, "\(errorMessage(response))")
        #expect(response.header("Content-Type") == "image/png")
        #expect(response.header("Cache-Control") == "public, max-age=60")
        let image = try ServerTestImages.decode(response.body)
        #expect(image.size == PixelSize(width: 20, height: 10))
        #expect(image[pixel: 2, 5].r > 200 && image[pixel: 17, 5].b > 200)  // the fallback's red and blue halves
        // Another missing source with the same options: the same output, from the output cache
        let other = await fixture.get(fixture.path("rs:fit:20:20", "/also-gone.jpg", ext: "png"))
        #expect(other.status == 200 && other.body == response.body && other.header("ETag") == response.header("ETag"))
        let samples = prometheusSamples(fixture.proxy.metrics.prometheusText())
        #expect(samples["imago_serve_cache_hits_total{tier=\"output_memory\"}"] == 1)
        #expect(samples["imago_serve_fallbacks_total"] == 2)
        // The source, once it exists, is served as itself
        fixture.origin.setRoute("/gone.jpg", .bytes(fixture.jpeg, contentType: "image/jpeg"))
        let real = await fixture.get(fixture.path("rs:fit:100:100", "/gone.jpg", ext: "png"))
        #expect(try ServerTestImages.decode(real.body).size == PixelSize(width: 100, height: 50))
        #expect(real.header("Cache-Control") == "public, max-age=31536000")
    }

    @Test func aFallbackForARequestWithCookiesIsPrivateButRenderedOnce() async throws {
        let fallback = try FallbackImage(
            data: try ServerTestImages.jpeg(width: 40, height: 20), status: 200, maxAge: .seconds(60))
        let fixture = try ProxyFixture {
            $0.fallbackImage = fallback
            $0.cookiePassthrough = .all
        }
        let path = fixture.path("rs:fit:20:20", "/gone.jpg", ext: "png")
        let alice = await fixture.get(path, headers: ["cookie": "session=alice"])
        #expect(alice.status == 200 && alice.header("Cache-Control") == "private, max-age=60")
        // Another client's cookies: the source is asked again, the fallback's render is the cached one
        let bob = await fixture.get(path, headers: ["cookie": "session=bob"])
        #expect(bob.header("Cache-Control") == "private, max-age=60" && bob.body == alice.body)
        #expect(fixture.origin.requestCount(for: "/gone.jpg") == 2)
        let samples = prometheusSamples(fixture.proxy.metrics.prometheusText())
        #expect(samples["imago_serve_cache_hits_total{tier=\"output_memory\"}"] == 1)
        // Without cookies the same fallback is public
        #expect(await fixture.get(path).header("Cache-Control") == "public, max-age=60")
    }

    @Test func aSourceThatIsNotAnImageIsAnsweredWithTheFallbackToo() async throws {
        let (fixture, _) = try fixture()

        let response = await fixture.get(fixture.path("rs:fit:20:20", "/page.jpg", ext: "png"))

        #expect(response.status == 200, "\(errorMessage(response))")
        #expect(try ServerTestImages.decode(response.body).size == PixelSize(width: 20, height: 10))
    }

    @Test func theFailuresOwnStatusCanBeKeptAndThenNo304IsSent() async throws {
        let (fixture, _) = try fixture(status: nil)
        let path = fixture.path("rs:fit:20:20", "/gone.jpg", ext: "png")

        let response = await fixture.get(path)
        #expect(response.status == 404)
        #expect(try ServerTestImages.decode(response.body).size == PixelSize(width: 20, height: 10))
        let etag = try #require(response.header("ETag"))
        let again = await fixture.get(path, headers: ["if-none-match": etag])
        #expect(again.status == 404 && again.body == response.body)
    }

    @Test func clientAndPolicyErrorsAreNotReplaced() async throws {
        let (fixture, _) = try fixture()

        #expect(await fixture.get(fixture.path("rs:nope:20:20", "/gone.jpg")).status == 400)
        #expect(await fixture.get("/bad-signature/rs:fit:20:20/plain/" + fixture.source("/gone.jpg")).status == 403)
        let refusing = try ProxyFixture {
            $0.fallbackImage = try FallbackImage(data: try ServerTestImages.jpeg(width: 4, height: 2))
            $0.sourcePolicy = SourcePolicy(allowedHosts: ["images.example.com"], allowsPrivateAddresses: true)
        }
        #expect(await refusing.get(refusing.path("rs:fit:20:20", "/gone.jpg")).status == 403)
    }

    @Test func aFallbackMustBeAnImageWithAStatusThatIsNotInformational() throws {
        #expect(throws: CodecError.self) { try FallbackImage(data: Data("nope".utf8)) }
        #expect(throws: ProxyError.self) { try FallbackImage(data: try ServerTestImages.jpeg(), status: 101) }
        #expect(throws: ProxyError.self) {
            try FallbackImage(data: try ServerTestImages.jpeg(), maxAge: .seconds(-1))
        }
    }
}
