import Foundation
import Imago
import ImagoTesting
import Testing

@testable import ImagoServer

/// A file of the shared corpus (`../shared/corpus` beside the package); records an issue when it is missing.
func serverCorpus(_ path: String) throws -> Data {
    let (url, missing) = SharedCorpus.item(path)
    if let missing {
        Issue.record(Comment(rawValue: missing))
        throw CocoaError(.fileNoSuchFile)
    }
    return try Data(contentsOf: url)
}

@Suite("ImageProxy: skip_processing passes checked sources on untouched")
struct ImageProxySkipProcessingTests {
    /// The corpus's 100 × 50 animated GIF, served at `/anim.gif` beside the fixture's JPEG.
    func fixture(_ configure: (inout ImageProxy.Configuration) -> Void = { _ in }) throws -> (ProxyFixture, Data) {
        let gif = try serverCorpus("gif/samples/anim-gr.gif")
        let fixture = try ProxyFixture { configure(&$0) }
        fixture.origin.setRoute("/anim.gif", .bytes(gif, contentType: "image/gif"))
        return (fixture, gif)
    }

    @Test func aListedSourceFormatIsAnsweredWithTheSourceBytes() async throws {
        let (fixture, gif) = try fixture()

        // A resize that would change the image, with GIF sources skipped
        let path = fixture.path("rs:fit:20:20/skp:gif", "/anim.gif")
        let response = await fixture.get(path, headers: ["accept": "image/avif,image/webp,*/*"])

        // The animation's own bytes, as a GIF, whatever Accept allows
        #expect(response.status == 200, "\(errorMessage(response))")
        #expect(response.body == gif)
        #expect(response.header("Content-Type") == "image/gif")
        #expect(response.header("Content-Length") == "\(gif.count)")
        #expect(response.header("Content-Disposition") == "inline; filename=\"anim.gif\"")
        let etag = try #require(response.header("ETag"))
        // Again: from the output cache, one fetch in all
        let again = await fixture.get(path, headers: ["accept": "image/avif,image/webp,*/*"])
        #expect(again.body == gif && again.header("ETag") == etag)
        #expect(fixture.origin.requestCount(for: "/anim.gif") == 1)
        // Another Accept gets the same bytes under the same ETag, so a client's validator still matches
        let other = await fixture.get(path, headers: ["accept": "image/png"])
        #expect(other.body == gif && other.header("ETag") == etag)
        #expect(await fixture.get(path, headers: ["if-none-match": etag]).status == 304)
        // Two outputs were the source's bytes (one per key: the second Accept made its own); the rest were cached
        let samples = prometheusSamples(fixture.proxy.metrics.prometheusText())
        #expect(samples["imago_serve_passed_through_total"] == 2)
        // Without the option the same source is rendered: a 20 × 10 still
        let rendered = await fixture.get(fixture.path("rs:fit:20:20", "/anim.gif", ext: "png"))
        #expect(try ServerTestImages.decode(rendered.body).size == PixelSize(width: 20, height: 10))
    }

    /// imgproxy's `IMGPROXY_SKIP_PROCESSING_FORMATS`: the server's formats skipped for every URL, a URL's added.
    @Test func theServersFormatsAreSkippedForEveryURL() async throws {
        let (fixture, gif) = try fixture { $0.skippedFormats = [.gif] }
        let passed = await fixture.get(fixture.path("rs:fit:20:20", "/anim.gif"))
        #expect(passed.status == 200 && passed.body == gif, "\(errorMessage(passed))")
        // The same output as a URL that names the format itself
        let named = await fixture.get(fixture.path("rs:fit:20:20/skp:gif", "/anim.gif"))
        #expect(named.header("ETag") == passed.header("ETag"))
        #expect(fixture.origin.requestCount(for: "/anim.gif") == 1)
        // A JPEG is still rendered, unless the URL adds its format
        let jpeg = await fixture.get(fixture.path("rs:fit:20:20", ext: "png"))
        #expect(try ServerTestImages.decode(jpeg.body).size == PixelSize(width: 20, height: 10))
        let kept = await fixture.get(fixture.path("rs:fit:20:20/skp:jpg"))
        #expect(kept.body == fixture.jpeg)
        // Parsed as imgproxy's list; unknown names are refused
        #expect(
            try ImageProxy.Configuration.sourceFormats(parsing: "gif, png,heic,svg", option: "x")
                == [.gif, .png, .apng, .heic, .heif, .svg])
        for bad in ["", "gif,nope", ","] {
            #expect(throws: ProxyError.self, "\(bad)") {
                try ImageProxy.Configuration.sourceFormats(parsing: bad, option: "x")
            }
        }
    }

    @Test func anUnlistedSourceIsRenderedFromTheOneFetch() async throws {
        let (fixture, _) = try fixture()

        // A JPEG source with only GIF skipped
        let response = await fixture.get(fixture.path("rs:fit:100:100/skp:gif:png", ext: "png"))

        // is rendered, and the bytes fetched to see its format are the ones decoded (no second fetch)
        #expect(response.status == 200, "\(errorMessage(response))")
        #expect(try ServerTestImages.decode(response.body).size == PixelSize(width: 100, height: 50))
        #expect(fixture.origin.requestCount(for: "/a.jpg") == 1)
    }

    @Test func anotherOutputFormatInTheURLMeansARender() async throws {
        let (fixture, gif) = try fixture()

        // GIF skipped, but PNG asked for: rendered; JPEG skipped and asked for: passed on
        let png = await fixture.get(fixture.path("rs:fit:20:20/skp:gif", "/anim.gif", ext: "png"))
        #expect(png.status == 200 && png.header("Content-Type") == "image/png")
        #expect(try ServerTestImages.decode(png.body).size == PixelSize(width: 20, height: 10))
        let jpeg = await fixture.get(fixture.path("rs:fit:20:20/skp:jpg/f:jpg"))
        #expect(jpeg.body == fixture.jpeg)
        #expect(png.body != gif)
    }

    @Test func aSourceThatIsNotAnImageOfItsFormatIsRefused() async throws {
        let (fixture, _) = try fixture()
        fixture.origin.setRoute(
            "/broken.gif", .bytes(Data("GIF89a".utf8) + Data(repeating: 0xFF, count: 64), contentType: "image/gif"))

        let response = await fixture.get(fixture.path("skp:gif", "/broken.gif"))

        #expect(response.status == 415, "\(errorMessage(response))")
    }

    @Test func aSourceOverThePixelLimitIsRefusedUnprocessedToo() async throws {
        let (fixture, _) = try fixture { $0.pixelLimit = 4_000 }  // the GIF has 5,000 pixels

        let response = await fixture.get(fixture.path("skp:gif", "/anim.gif"))

        #expect(response.status == 422, "\(errorMessage(response))")
        #expect(errorMessage(response).contains("100x50"))
    }

    @Test func theOptionParsesAsImgproxysAndEntersTheKeys() throws {
        var options = ProcessingOptions()
        try OptionParser.apply("skp:gif:JPG", to: &options)
        try OptionParser.apply("skip_processing:png", to: &options)  // repeated: the lists join
        #expect(options.skippedFormats == [.gif, .jpeg, .png, .apng])
        #expect(options.canonicalDescription.hasSuffix("/skp:apng:gif:jpeg:png"))
        #expect(!ProcessingOptions().canonicalDescription.contains("skp"))
        var raw = ProcessingOptions()
        try OptionParser.apply("raw:0", to: &raw)
        #expect(raw.canonicalDescription == ProcessingOptions().canonicalDescription)
        for (segment, name) in [("skp", "skp"), ("skp:mp4", "skp"), ("raw:1", "raw")] {
            var rejected = ProcessingOptions()
            #expect(throws: ProxyError.self, "\(segment)") { try OptionParser.apply(Substring(segment), to: &rejected) }
            do {
                try OptionParser.apply(Substring(segment), to: &rejected)
            } catch {
                #expect(error.status == 400)
                #expect(error.description.contains(name), "\(segment): \(error.description)")
            }
        }
    }
}
