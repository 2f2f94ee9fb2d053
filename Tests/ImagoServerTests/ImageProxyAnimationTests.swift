import Foundation
import Imago
import ImagoTesting
import Testing

@testable import ImagoServer

@Suite("ImageProxy: animations kept frame by frame up to --max-animation-frames")
struct ImageProxyAnimationTests {
    /// The corpus's 116 × 100 animated GIF of 14 frames at `/anim.gif`, and a proxy keeping up to `frames` frames.
    func fixture(
        frames: Int, pixelLimit: Int? = nil, framePixels: Int = 0, securityOptions: Bool = false
    ) throws -> (ProxyFixture, ImageContainer) {
        let gif = try serverCorpus("gif/samples/moon_impact.gif")
        let fixture = try ProxyFixture {
            $0.maxAnimationFrames = frames
            if let pixelLimit { $0.pixelLimit = pixelLimit }
            $0.maxAnimationFramePixels = framePixels
            $0.allowsSecurityOptions = securityOptions
        }
        fixture.origin.setRoute("/anim.gif", .bytes(gif, contentType: "image/gif"))
        let source = try ImageDecoderRegistry.makeDefault().decode(gif)
        return (fixture, source)
    }

    func decode(_ response: ServerResponse) throws -> ImageContainer {
        try ImageDecoderRegistry.makeDefault().decode(response.body)
    }

    static let browser = ["accept": "image/avif,image/webp,*/*"]

    @Test func anAnimationIsResizedFrameByFrameIntoAnAnimatedWebP() async throws {
        let (fixture, source) = try fixture(frames: 100)
        try #require(source.frameCount == 14, "the corpus GIF has 14 frames")

        let response = await fixture.get(fixture.path("rs:fit:58:58", "/anim.gif"), headers: Self.browser)

        #expect(response.status == 200, "\(errorMessage(response))")
        #expect(response.header("Content-Type") == "image/webp")
        // libwebp's animation encoder merges a frame identical to the one before into its duration: the whole
        // loop lasts as long as the source's
        let output = try decode(response)
        #expect(output.frameCount > 1 && output.frameCount <= source.frameCount)
        #expect(output.totalDuration == source.totalDuration)
        #expect(output.frames.allSatisfy { $0.buffer.size == PixelSize(width: 58, height: 50) })
        // The frames differ as the source's do
        #expect(output.frames[0].buffer != output.frames[1].buffer)
        // An explicit WebP keeps them too
        let explicit = await fixture.get(fixture.path("rs:fit:58:58/f:webp", "/anim.gif"))
        #expect(try decode(explicit).frameCount == output.frameCount)
    }

    @Test func theFirstFrameIsSentWhereFramesCannotBeKept() async throws {
        let (fixture, _) = try fixture(frames: 100)
        // Explicit still formats, a trim
        let cases: [(String, [String: String], Set<String>)] = [
            ("rs:fit:50:50/f:jpg", ["accept": "*/*"], ["image/jpeg"]),
            ("rs:fit:50:50/f:png", Self.browser, ["image/png"]),
            ("rs:fit:50:50/t:10/f:webp", Self.browser, ["image/webp"]),
        ]
        for (options, headers, types) in cases {
            let response = await fixture.get(fixture.path(options, "/anim.gif"), headers: headers)
            #expect(response.status == 200, "\(options): \(errorMessage(response))")
            #expect(types.contains(response.header("Content-Type") ?? ""), "\(options): \(response.headers)")
            #expect(try decode(response).frameCount == 1, "\(options)")
        }
    }

    @Test func anAnimatedGIFStaysAnAnimatedGIFForAClientThatTakesNoWebP() async throws {
        let (proxy, source) = try fixture(frames: 100)
        // Given a client that takes no animated format, or a URL asking for GIF
        for (options, headers) in [("rs:fit:58:58", ["accept": "*/*"]), ("rs:fit:58:58/f:gif", Self.browser)] {
            let response = await proxy.get(proxy.path(options, "/anim.gif"), headers: headers)
            // Then the answer is a GIF with every frame, resized, at the source's durations and loop count
            #expect(response.status == 200, "\(options): \(errorMessage(response))")
            #expect(response.header("Content-Type") == "image/gif", "\(options)")
            let output = try decode(response)
            #expect(output.format == .gif)
            #expect(output.frameCount == source.frameCount, "\(options)")
            #expect(output.frames.map(\.duration) == source.frames.map(\.duration), "\(options)")
            #expect(output.loopCount == source.loopCount, "\(options)")
            #expect(output.frames.allSatisfy { $0.buffer.size == PixelSize(width: 58, height: 50) }, "\(options)")
            #expect(output.frames.contains { $0.buffer != output.frames[0].buffer }, "\(options)")
        }
        // And without --max-animation-frames, the first frame, still a GIF
        let (plain, _) = try fixture(frames: 1)
        let still = await plain.get(plain.path("rs:fit:58:58", "/anim.gif"), headers: ["accept": "*/*"])
        #expect(still.header("Content-Type") == "image/gif")
        #expect(try decode(still).frameCount == 1)
    }

    @Test func aWebPSourceIsSentInAFormatEveryClientShowsWhenAcceptDoesNotNameWebP() async throws {
        let (proxy, _) = try fixture(frames: 100)
        let webp = try serverCorpus("webp/images/animated/random_lossy.webp")
        proxy.origin.setRoute("/anim.webp", .bytes(webp, contentType: "image/webp"))
        let source = try ImageDecoderRegistry.makeDefault().decode(webp)
        try #require(source.frameCount == 4)
        // A client that names no WebP: an animated GIF with every frame (imgproxy's preferred formats)
        let old = await proxy.get(proxy.path("rs:fit:50:50", "/anim.webp"), headers: ["accept": "*/*"])
        #expect(old.status == 200 && old.header("Content-Type") == "image/gif", "\(errorMessage(old))")
        #expect(try decode(old).frameCount == 4)
        // A browser that takes WebP keeps it
        let modern = await proxy.get(proxy.path("rs:fit:50:50", "/anim.webp"), headers: Self.browser)
        #expect(modern.header("Content-Type") == "image/webp")
        // Without --max-animation-frames, the first frame, as JPEG (opaque) rather than WebP
        let (plain, _) = try fixture(frames: 1)
        plain.origin.setRoute("/anim.webp", .bytes(webp, contentType: "image/webp"))
        let still = await plain.get(plain.path("rs:fit:50:50", "/anim.webp"), headers: ["accept": "*/*"])
        #expect(still.header("Content-Type") == "image/jpeg")
    }

    @Test func byDefaultAndOverTheLimitsTheFirstFrameIsRendered() async throws {
        let (plain, _) = try fixture(frames: 1)
        let still = await plain.get(plain.path("rs:fit:50:50/f:webp", "/anim.gif"))
        #expect(still.status == 200)
        #expect(try decode(still).frameCount == 1)

        // More frames than allowed: the first frame, not an error
        let (few, _) = try fixture(frames: 5)
        let first = await few.get(few.path("rs:fit:50:50/f:webp", "/anim.gif"))
        #expect(first.status == 200, "\(errorMessage(first))")
        #expect(try decode(first).frameCount == 1)

        // Frames × canvas over the pixel limit (one frame is within it): the first frame
        let (bounded, _) = try fixture(frames: 100, pixelLimit: 116 * 100 * 3)
        let bounded1 = await bounded.get(bounded.path("rs:fit:50:50/f:webp", "/anim.gif"))
        #expect(bounded1.status == 200, "\(errorMessage(bounded1))")
        #expect(try decode(bounded1).frameCount == 1)
    }

    /// imgproxy's `IMGPROXY_MAX_ANIMATION_FRAME_RESOLUTION`: each frame held to its own limit instead of all frames
    /// together to the pixel limit.
    @Test func aFramePixelLimitHoldsEachFrameInsteadOfAllTogether() async throws {
        let canvas = 116 * 100
        // All 14 frames together are over this pixel limit: by default, the first frame
        let (summed, source) = try fixture(frames: 100, pixelLimit: canvas * 3)
        let first = await summed.get(summed.path("rs:fit:58:58/f:webp", "/anim.gif"))
        #expect(first.status == 200, "\(errorMessage(first))")
        #expect(try decode(first).frameCount == 1)
        // With a frame limit the canvas meets, every frame is kept
        let (perFrame, _) = try fixture(frames: 100, pixelLimit: canvas * 3, framePixels: canvas)
        let kept = await perFrame.get(perFrame.path("rs:fit:58:58/f:gif", "/anim.gif"))
        #expect(kept.status == 200, "\(errorMessage(kept))")
        #expect(try decode(kept).frameCount == source.frameCount)
        // A canvas one pixel over it: the first frame, held to the pixel limit as a still, not an error
        let (tight, _) = try fixture(frames: 100, pixelLimit: canvas * 3, framePixels: canvas - 1)
        let still = await tight.get(tight.path("rs:fit:58:58/f:gif", "/anim.gif"))
        #expect(still.status == 200, "\(errorMessage(still))")
        #expect(try decode(still).frameCount == 1)
        #expect(try decode(still).frames[0].buffer.size == PixelSize(width: 58, height: 50))
        // ... and over the pixel limit too: 422, as any still over it
        let (small, _) = try fixture(frames: 100, pixelLimit: canvas - 1, framePixels: canvas - 1)
        #expect(await small.get(small.path("rs:fit:58:58/f:gif", "/anim.gif")).status == 422)
    }

    /// A URL's `mafr` only tightens: within the server's frame limit, and beside the sum of a server without one.
    @Test func aURLsFramePixelLimitOnlyTightens() async throws {
        let canvas = 116 * 100
        func frameCount(_ fixture: ProxyFixture, _ options: String) async throws -> Int {
            let response = await fixture.get(fixture.path("rs:fit:58:58/f:gif" + options, "/anim.gif"))
            try #require(response.status == 200, "\(options): \(errorMessage(response))")
            return try decode(response).frameCount
        }
        let (perFrame, _) = try fixture(frames: 100, framePixels: canvas, securityOptions: true)
        #expect(try await frameCount(perFrame, "/mafr:0.0116") == 14)
        #expect(try await frameCount(perFrame, "/mafr:0.0115") == 1)
        #expect(try await frameCount(perFrame, "/mafr:1") == 14)  // the server's limit is the smaller
        // A server summing its frames keeps summing: mafr cannot let more frames through
        let (summed, _) = try fixture(frames: 100, pixelLimit: canvas * 3, securityOptions: true)
        #expect(try await frameCount(summed, "/mafr:1") == 1)
        let (roomy, _) = try fixture(frames: 100, securityOptions: true)
        #expect(try await frameCount(roomy, "/mafr:0.0115") == 1)
        #expect(try await frameCount(roomy, "") == 14)
        // Refused, naming the option, where security options are not allowed; invalid values are 400s
        let (off, _) = try fixture(frames: 100)
        let refused = await off.get(off.path("mafr:1", "/anim.gif"))
        #expect(refused.status == 400 && errorMessage(refused).contains("max_animation_frame_resolution"))
        var options = ProcessingOptions()
        try OptionParser.apply("max_animation_frame_resolution:2.5", to: &options)
        #expect(options.security.maxAnimationFramePixels == 2_500_000)
        #expect(options.canonicalDescription.hasSuffix("/mafr:2500000"))
        for bad in ["mafr:0", "mafr:-1", "mafr:x", "mafr:1:2", "mafr:1001"] {
            #expect(throws: ProxyError.self, "\(bad)") { try OptionParser.apply(bad[...], to: &options) }
        }
    }

    /// Limits a URL sets that the server's match or undercut key the same output as no limit.
    @Test func aURLsResolvedAnimationLimitsShareTheOutputOfNoLimit() async throws {
        let (proxy, _) = try fixture(frames: 20, framePixels: 116 * 100, securityOptions: true)
        let plain = await proxy.get(proxy.path("rs:fit:58:58/f:gif", "/anim.gif"))
        let same = await proxy.get(proxy.path("rs:fit:58:58/f:gif/maf:100/mafr:5", "/anim.gif"))
        #expect(plain.status == 200 && same.status == 200, "\(errorMessage(same))")
        #expect(same.body == plain.body && same.header("ETag") == plain.header("ETag"))
        let samples = prometheusSamples(proxy.proxy.metrics.prometheusText())
        #expect(samples["imago_serve_cache_hits_total{tier=\"output_memory\"}"] == 1)
        // A tighter one is its own output, held to its limit though the pipeline's memory has the whole animation
        let fewer = await proxy.get(proxy.path("rs:fit:58:58/f:gif/maf:2", "/anim.gif"))
        #expect(fewer.status == 200 && fewer.header("ETag") != plain.header("ETag"))
        #expect(try decode(fewer).frameCount == 1)
        let smaller = await proxy.get(proxy.path("rs:fit:58:58/f:gif/mafr:0.01", "/anim.gif"))
        #expect(try decode(smaller).frameCount == 1)
        let within = await proxy.get(proxy.path("rs:fit:58:58/f:gif/msr:0.01", "/anim.gif"))
        #expect(within.status == 422, "a still first frame over msr too")
    }

    @Test func theFrameSettingAndTheAnimatedFormatAreInTheKey() throws {
        var key = OutputKey(source: "https://a.example/x.gif", options: ProcessingOptions(), format: .sourceDerived)
        let still = key.diskKey
        key.animation = OutputKey.Animation(frames: 10, format: .webp)
        let animated = key.diskKey
        key.animation = OutputKey.Animation(frames: 10, format: nil)
        let first = key.diskKey
        key.animation = OutputKey.Animation(frames: 10, format: .webp, framePixels: 1_000)
        #expect(Set([still, animated, first, key.diskKey]).count == 4)
        #expect(animated.hasSuffix("animation=10:webp"), "keys without a frame limit are as before")
        #expect(!still.contains("animation"))
        let encoders = ImageEncoderRegistry.makeDefault()
        #expect(FormatNegotiation.animatedFormat(for: .explicit(.png), accept: nil, encoders: encoders) == nil)
        #expect(FormatNegotiation.animatedFormat(for: .explicit(.webp), accept: nil, encoders: encoders) == .webp)
        #expect(
            FormatNegotiation.animatedFormat(
                for: .negotiated(.avif), accept: "image/avif,image/webp", encoders: encoders)
                == .webp)
        #expect(FormatNegotiation.animatedFormat(for: .explicit(.gif), accept: nil, encoders: encoders) == .gif)
        // An animation whose format is derived from the source keeps its frames as a GIF; one negotiated into a
        // still format (AVIF without WebP) is the first frame
        #expect(FormatNegotiation.animatedFormat(for: .sourceDerived, accept: "*/*", encoders: encoders) == .gif)
        #expect(
            FormatNegotiation.animatedFormat(for: .negotiated(.avif), accept: "image/avif", encoders: encoders) == nil)
        // A still derived from the source keeps JPEG, PNG and GIF, and turns the formats not every client shows
        // into JPEG (opaque) or PNG
        for (source, opaque, expected) in [
            (ImageFormat.jpeg, true, ImageFormat.jpeg), (.png, false, .png), (.gif, true, .gif), (.webp, true, .jpeg),
            (.webp, false, .png), (.avif, true, .jpeg), (.jpegXL, false, .png), (.heic, true, .jpeg),
        ] {
            #expect(
                FormatNegotiation.format(for: .sourceDerived, source: source, isOpaque: opaque, encoders: encoders)
                    == expected, "\(source) opaque: \(opaque)")
        }
    }
}
