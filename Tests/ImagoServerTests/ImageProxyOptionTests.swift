import Foundation
import Imago
import ImagoTesting
import Testing

@testable import ImagoServer

@Suite("ImageProxy: every processing option changes the output as imgproxy's does")
struct ImageProxyOptionTests {
    /// The decoded image of a 200 response (the test fails on any other status).
    func image(_ fixture: ProxyFixture, _ options: String, headers: [String: String] = [:]) async throws -> PixelBuffer
    {
        let response = await fixture.get(fixture.path(options), headers: headers)
        try #require(response.status == 200, "\(errorMessage(response))")
        return try ServerTestImages.decode(response.body)
    }

    @Test func resizeTypesAndDerivedSides() async throws {
        let fixture = try ProxyFixture()
        // Given a 400 × 200 source
        #expect(try await image(fixture, "rs:fit:100:100").size == PixelSize(width: 100, height: 50))
        #expect(try await image(fixture, "rs:fill:100:100").size == PixelSize(width: 100, height: 100))
        #expect(try await image(fixture, "rs:force:50:80").size == PixelSize(width: 50, height: 80))
        #expect(try await image(fixture, "w:200").size == PixelSize(width: 200, height: 100))
        #expect(try await image(fixture, "height:50").size == PixelSize(width: 100, height: 50))
        #expect(try await image(fixture, "resize:fit:1000:1000").size == PixelSize(width: 400, height: 200))
        #expect(try await image(fixture, "rs:fit:1000:1000:1").size == PixelSize(width: 1000, height: 500))
        #expect(try await image(fixture, "").size == PixelSize(width: 400, height: 200))
    }

    @Test func gravityPicksThePartAFillKeeps() async throws {
        let fixture = try ProxyFixture()
        // Given a source red on the left and blue on the right, a square fill keeps one side only
        let west = try await image(fixture, "rs:fill:50:50/g:we")
        let east = try await image(fixture, "rs:fill:50:50/gravity:ea")
        let centre = try await image(fixture, "rs:fill:50:50/g:ce")
        #expect(west[pixel: 25, 25].r > 200 && west[pixel: 25, 25].b < 50)
        #expect(east[pixel: 25, 25].b > 200 && east[pixel: 25, 25].r < 50)
        #expect(centre[pixel: 5, 25].r > 200 && centre[pixel: 45, 25].b > 200)
        for gravity in ["no", "so", "noea", "nowe", "soea", "sowe"] {
            #expect(try await image(fixture, "rs:fill:50:50/g:\(gravity)").size == PixelSize(width: 50, height: 50))
        }
    }

    @Test func qualityFormatBlurRotateAndDPR() async throws {
        let fixture = try ProxyFixture()
        let low = await fixture.get(fixture.path("q:5/f:jpeg"))
        let high = await fixture.get(fixture.path("quality:95/f:jpeg"))
        #expect(low.status == 200 && high.status == 200)
        #expect(low.body.count < high.body.count)

        let png = await fixture.get(fixture.path("f:png"))
        #expect(png.header("Content-Type") == "image/png" && ImageFormat(sniffing: png.body) == .png)
        let webp = await fixture.get(fixture.path("rs:fit:64:64", ext: "webp"))
        #expect(webp.header("Content-Type") == "image/webp" && ImageFormat(sniffing: webp.body) == .webp)
        #expect(webp.header("Vary") == nil)  // asked for: not negotiated

        // A blur turns the sharp red/blue edge into a ramp
        let sharp = try await image(fixture, "f:png")
        let blurred = try await image(fixture, "bl:8/f:png")
        #expect(sharp[pixel: 198, 100].r > 200 && sharp[pixel: 202, 100].b > 200)
        let edge = blurred[pixel: 199, 100]
        #expect((60...200).contains(Int(edge.r)) && (60...200).contains(Int(edge.b)))

        // 90° clockwise: red (left) goes to the top
        let turned = try await image(fixture, "rot:90/f:png")
        #expect(turned.size == PixelSize(width: 200, height: 400))
        #expect(turned[pixel: 100, 10].r > 200 && turned[pixel: 100, 390].b > 200)
        #expect(try await image(fixture, "rot:180/rs:fit:100:100").size == PixelSize(width: 100, height: 50))

        #expect(try await image(fixture, "rs:fit:100:100/dpr:2").size == PixelSize(width: 200, height: 100))
    }

    @Test func flipMirrorsAfterTheRotationAndTheCropIsTheOutputs() async throws {
        // The source: red on the left half of 400 × 200, blue on the right
        let fixture = try ProxyFixture()
        let mirrored = try await image(fixture, "fl:1/f:png")
        #expect(mirrored.size == PixelSize(width: 400, height: 200))
        #expect(mirrored[pixel: 10, 100].b > 200 && mirrored[pixel: 390, 100].r > 200)
        // Turned (red on top), then mirrored top-bottom: blue on top; imgproxy's empty first argument
        let upsideDown = try await image(fixture, "rot:90/flip::t/f:png")
        #expect(upsideDown.size == PixelSize(width: 200, height: 400))
        #expect(upsideDown[pixel: 100, 10].b > 200 && upsideDown[pixel: 100, 390].r > 200)
        // With a fit box, as imgproxy: rotation and flip before the resize
        #expect(try await image(fixture, "fl:1:1/rs:fit:100:100").size == PixelSize(width: 100, height: 50))
        // A crop after a rotation is cut from the turned image: 100 × 50 from its top, all red
        let cut = try await image(fixture, "rot:90/c:100:50:no/f:png")
        #expect(cut.size == PixelSize(width: 100, height: 50))
        #expect(cut[pixel: 5, 5].r > 200 && cut[pixel: 95, 45].r > 200 && cut[pixel: 50, 25].b < 50)
        // … and after a flip from the mirrored one: the west 100 × 200 of a mirrored source is blue
        let west = try await image(fixture, "fl:1/c:100:0:we/f:png")
        #expect(west.size == PixelSize(width: 100, height: 200) && west[pixel: 50, 100].b > 200)
        for bad in ["fl:x", "fl:1:1:1", "flip:1:yes"] {
            let response = await fixture.get(fixture.path(bad))
            #expect(
                response.status == 400 && errorMessage(response).contains("'fl"), "\(bad): \(errorMessage(response))")
        }
        var options = ProcessingOptions()
        try OptionParser.apply("fl:0:1", to: &options)
        #expect(options.flipsVertically && !options.flipsHorizontally)
        #expect(options.canonicalDescription.contains("/fl:0:1"))
        #expect(!ProcessingOptions().canonicalDescription.contains("fl:"))
        // Outputs cropped before the rotation (stop 35 and earlier) are kept under other keys.
        var turnedCrop = ProcessingOptions()
        try OptionParser.apply("c:10:10", to: &turnedCrop)
        let unturned = turnedCrop.canonicalDescription
        try OptionParser.apply("rot:90", to: &turnedCrop)
        #expect(!unturned.contains("/rc"))
        #expect(turnedCrop.canonicalDescription.contains("/rc"))
    }

    @Test func unknownAndInvalidOptionsAre400NamingTheOption() async throws {
        let fixture = try ProxyFixture()
        let unknown = await fixture.get(fixture.path("adjust:10"))
        #expect(unknown.status == 400 && errorMessage(unknown) == "unknown option 'adjust'")
        let invalid = await fixture.get(fixture.path("rs:fit:abc"))
        #expect(invalid.status == 400 && errorMessage(invalid).contains("'rs'"))
        #expect(invalid.header("Content-Type") == "application/json")
        #expect(fixture.origin.requestCount(for: "/a.jpg") == 0)
    }
}
