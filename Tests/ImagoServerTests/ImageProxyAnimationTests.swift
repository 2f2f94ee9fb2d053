import Foundation
import Imago
import ImagoTesting
import Testing

@testable import ImagoServer

@Suite("ImageProxy: animations kept frame by frame up to --max-animation-frames")
struct ImageProxyAnimationTests {
    /// The corpus's 116 × 100 animated GIF of 14 frames at `/anim.gif`, and a proxy keeping up to `frames` frames.
    func fixture(frames: Int, pixelLimit: Int? = nil) throws -> (ProxyFixture, ImageContainer) {
        let gif = try serverCorpus("gif/samples/moon_impact.gif")
        let fixture = try ProxyFixture {
            $0.maxAnimationFrames = frames
            if let pixelLimit { $0.pixelLimit = pixelLimit }
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

    @Test func theFrameSettingAndTheAnimatedFormatAreInTheKey() throws {
        var key = OutputKey(source: "https://a.example/x.gif", options: ProcessingOptions(), format: .sourceDerived)
        let still = key.diskKey
        key.animation = OutputKey.Animation(frames: 10, format: .webp)
        let animated = key.diskKey
        key.animation = OutputKey.Animation(frames: 10, format: nil)
        #expect(Set([still, animated, key.diskKey]).count == 3)
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
