import Foundation
import Imago
import ImagoTesting
import Testing

@testable import ImagoCodecs
@testable import ImagoServer

/// `imago serve` makes a WebP or JPEG thumbnail of a JPEG from the JPEG's own YCbCr planes when nothing else is asked
/// (``ImageProxy/Configuration/rendersJPEGsInYCbCr``), and everything else through RGB as before.
@Suite("imago serve: JPEG to WebP and JPEG from the YCbCr planes")
struct ServeYCbCrTests {
    static let kodak: Data = {
        let photo = try! PNGDecoder().decode(try! serverCorpus("kodak/23.png"), options: DecodingOptions()).image
        return try! JPEGEncoder().encode(photo, options: EncodingOptions(quality: 0.9))
    }()

    /// The answer to `options` for an origin serving `bytes` (named `name` in failures), with the YCbCr path on
    /// and off; with `times`, the same request made that many times (the last answer returned), the origin asked
    /// as often either way.
    static func both(
        _ options: String, _ bytes: Data, times: Int = 1, name: String = "s.jpg"
    ) async throws -> (on: ServerResponse, off: ServerResponse) {
        var answers: [ServerResponse] = []
        var fetches: [Int] = []
        for isOn in [true, false] {
            let fixture = try ProxyFixture {
                $0.rendersJPEGsInYCbCr = isOn
                $0.originalCache = MockDataCache()
            }
            fixture.origin.setRoute("/s.jpg", .bytes(bytes, contentType: "image/jpeg"))
            for _ in 1..<times { _ = await fixture.get(fixture.path(options, "/s.jpg")) }
            answers.append(await fixture.get(fixture.path(options, "/s.jpg")))
            fetches.append(fixture.origin.requestCount(for: "/s.jpg"))
        }
        #expect(
            fetches[0] == fetches[1] && (times > 1 || fetches[0] == 1), "\(name) \(options): fetches \(fetches)")
        return (answers[0], answers[1])
    }

    @Test(.timeLimit(.minutes(1)))
    func aJPEGThumbnailInWebPOrJPEGIsEncodedFromItsPlanes() async throws {
        let fixture = try ProxyFixture { $0.originalCache = MockDataCache() }
        fixture.origin.setRoute("/k.jpg", .bytes(Self.kodak, contentType: "image/jpeg"))
        let path = fixture.path("rs:fit:256:256/f:webp", "/k.jpg")
        let response = await fixture.get(path)
        #expect(response.status == 200 && response.header("Content-Type") == "image/webp")
        // The bytes are the planes' at the server's default quality, 80
        let box = DecodingOptions(targetSize: PixelSize(width: 256, height: 256))
        let planes = try #require(try JPEGDecoder().decodeYCbCr(Self.kodak, options: box))
        #expect(response.body == (try WebPEncoder().encode(planes.image, options: EncodingOptions(quality: 0.8))))
        // One fetch, counted under the origin tier, and the output cache answers the next request
        #expect(await fixture.get(path).body == response.body)
        #expect(fixture.origin.requestCount(for: "/k.jpg") == 1)
        // Render stages as through the pipeline: decode, process, encode
        let samples = prometheusSamples(fixture.proxy.metrics.prometheusText())
        for stage in ["decode", "process", "encode"] {
            #expect(samples["imago_serve_render_stage_seconds_count{stage=\"\(stage)\"}"] == 1, "\(stage)")
        }
        #expect(samples["imago_serve_cache_hits_total{tier=\"origin\"}"] == 1)
        #expect(samples["imago_serve_cache_hits_total{tier=\"output_memory\"}"] == 1)
        // A JPEG asked for: the planes' too (quality 80), its original read from the original cache
        let asJPEG = await fixture.get(fixture.path("rs:fit:256:256/f:jpeg", "/k.jpg"))
        #expect(fixture.origin.requestCount(for: "/k.jpg") == 1)
        #expect(asJPEG.body == (try JPEGEncoder().encode(planes.image, options: EncodingOptions(quality: 0.8))))
        // Through RGB the bytes differ, the picture hardly
        let (on, off) = try await Self.both("rs:fit:256:256/f:webp", Self.kodak)
        #expect(on.body == response.body && off.body != on.body)
        let a = try WebPDecoder().decode(on.body, options: DecodingOptions()).image
        let b = try WebPDecoder().decode(off.body, options: DecodingOptions()).image
        #expect(a.size == PixelSize(width: 256, height: 171) && b.size == a.size)
        #expect(ImagoTesting.psnr(a, b) > 35)
    }

    @Test(.timeLimit(.minutes(2)))
    func everythingElseTakesTheRGBPath() async throws {
        let p3 = try serverCorpus("icc/gen-kodim03-displayp3-v4.jpg")
        let turned = ExifFixture.jpeg(Self.kodak, withOrientation: 6)
        let gray = try serverCorpus("jpeg/reference/grayscale_square.jpg")
        let png = try PNGEncoder().encode(
            try JPEGDecoder().decode(Self.kodak, options: DecodingOptions()).image, options: EncodingOptions())
        let cases: [(options: String, source: Data)] = [
            ("rs:fill:256:256/g:we:1/f:webp", Self.kodak), ("rs:fill:256:256/g:sm/f:webp", Self.kodak),
            ("rs:fit:256:256/bl:2/f:webp", Self.kodak),
            ("rs:fit:256:256/rot:90/f:webp", Self.kodak), ("rs:fit:256:256/f:png", Self.kodak),
            ("rs:fit:256:256/mb:3000/f:webp", Self.kodak), ("rs:fit:256:256/bg:ff0000/f:webp", Self.kodak),
            ("rs:fit:256:256/ar:0/f:webp", turned), ("rs:fit:256:256/f:webp", turned),
            ("rs:fit:256:256/f:webp", p3), ("rs:fit:256:256/f:webp", gray), ("rs:fit:256:256/f:webp", png),
            ("rs:fit:256:256/f:webp/scp:0", p3), ("rs:fit:256:256/sh:1/f:jpeg", Self.kodak),
            ("rs:fit:256:256/f:avif", Self.kodak), ("rs:fit:256:256/f:jpeg", gray),
        ]
        for (options, source) in cases {
            let (on, off) = try await Self.both(options, source)
            #expect(on.status == 200 && on.body == off.body, "\(options)")
        }
        // Without an original cache, every request takes the RGB path (whose decoded image the pipeline's memory
        // keeps for the source's other outputs): two outputs of one source, one fetch
        let uncached = try ProxyFixture()
        uncached.origin.setRoute("/k.jpg", .bytes(Self.kodak, contentType: "image/jpeg"))
        let webp = await uncached.get(uncached.path("rs:fit:256:256/f:webp", "/k.jpg"))
        _ = await uncached.get(uncached.path("rs:fit:256:256/f:jpeg", "/k.jpg"))
        #expect(uncached.origin.requestCount(for: "/k.jpg") == 1)
        let (_, off) = try await Self.both("rs:fit:256:256/f:webp", Self.kodak)
        #expect(webp.body == off.body)
        // A URL that only resizes a plain JPEG takes the YCbCr path, to WebP or JPEG (asked for or the source's):
        // the comparison can tell
        // A fill cut at even offsets too (an odd one, above, would split chroma samples), and a force
        for options in [
            "rs:fit:256:256/f:webp", "rs:fit:256:256/f:jpeg", "rs:fit:256:256", "rs:fill:256:256/f:webp",
            "rs:fill:200:300/g:so/f:jpeg", "rs:force:300:100/f:webp",
        ] {
            let (on, off) = try await Self.both(options, Self.kodak)
            #expect(on.status == 200 && on.body != off.body, "\(options)")
            // The same picture, cut at the same place
            let decoders = ImageDecoderRegistry.makeDefault()
            let (a, b) = (try decoders.decode(on.body).image, try decoders.decode(off.body).image)
            #expect(a.size == b.size && ImagoTesting.psnr(a, b) > 33, "\(options)")
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func metadataIsKeptAsThroughRGB() async throws {
        // An EXIF block (orientation 1: nothing to turn) kept with strip_metadata:0, dropped without, in a Kodak
        // and a photo with an sRGB profile (which converting leaves as it is), EXIF and XMP
        let tagged = ExifFixture.jpeg(Self.kodak, withOrientation: 1)
        let paris = try serverCorpus("icc/libavif-paris_exif_xmp_icc.jpg")
        var reads = DecodingOptions()
        reads.readsMetadata = true
        for (options, source) in [
            ("rs:fit:200:200/sm:0/f:webp", tagged), ("rs:fit:200:200/f:webp", tagged),
            ("rs:fit:200:200/sm:0/f:webp", paris), ("rs:fit:200:200/f:webp", paris),
        ] {
            let (on, off) = try await Self.both(options, source)
            #expect(on.status == 200 && on.body != off.body)
            let kept = try WebPDecoder().decode(on.body, options: reads).metadata
            #expect(kept == (try WebPDecoder().decode(off.body, options: reads).metadata), "\(options)")
            #expect((kept?.exif != nil) == options.contains("sm:0"), "\(options)")
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func malformedJPEGsAreAnsweredAsThroughRGB() async throws {
        // Each malformed JPEG of the corpus: the same status either way, and the same error; a file the YCbCr
        // decode fails on is decoded again by the pipeline, which reports it
        let folder = SharedCorpus.item("jpeg/malformed").url
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".jpg") }
        #expect(files.count >= 8)
        var failed = 0
        for file in files.sorted() {
            // Twice: a file that failed is answered again as it was the first time, the origin asked as often
            let (on, off) = try await Self.both(
                "rs:fit:64:64/f:webp", try Data(contentsOf: folder.appendingPathComponent(file)), times: 2, name: file)
            #expect(on.status == off.status, "\(file): \(on.status) \(off.status)")
            if off.status != 200 {
                failed += 1
                #expect(on.body == off.body, "\(file)")
            }
        }
        #expect(failed >= 4)
    }
}
