import Foundation
import Imago
import ImagoTesting
import Testing

@testable import ImagoCLI
@testable import ImagoServer

/// `strip_color_profile:0` and `--keep-color-profile` (imgproxy's `IMGPROXY_STRIP_COLOR_PROFILE=false`): a
/// wide-gamut source's pixels stay in its profile's space and the profile goes into the output, byte for byte, in
/// the formats that carry one; the others are converted to sRGB.
@Suite("ImageProxy: colour profiles kept")
struct ImageProxyColorProfileTests {
    /// `data` decoded under `policy`.
    static func decode(_ data: Data, _ policy: ColorPolicy) throws -> ImageContainer {
        var options = DecodingOptions()
        options.colorPolicy = policy
        return try ImageDecoderRegistry.makeDefault().decode(data, options: options)
    }

    /// The largest difference of any colour channel between two images of one size.
    static func maxDifference(_ a: PixelBuffer, _ b: PixelBuffer) -> Int {
        guard a.size == b.size else { return .max }
        var largest = 0
        for y in 0..<a.height {
            for x in 0..<a.width {
                let (p, q) = (a[pixel: x, y], b[pixel: x, y])
                largest = max(largest, abs(Int(p.r) - Int(q.r)), abs(Int(p.g) - Int(q.g)), abs(Int(p.b) - Int(q.b)))
            }
        }
        return largest
    }

    /// A proxy whose origin serves the corpus's Display P3 photograph at `/p3.jpg`, and the source's profile.
    static func fixture(
        _ configure: (inout ImageProxy.Configuration) -> Void = { _ in }
    ) throws -> (ProxyFixture, ColorProfile) {
        let p3 = try serverCorpus("icc/gen-kodim03-displayp3-v4.jpg")
        let profile = try #require(try decode(p3, .keep).colorProfile)
        let fixture = try ProxyFixture { configure(&$0) }
        fixture.origin.setRoute("/p3.jpg", .bytes(p3, contentType: "image/jpeg"))
        return (fixture, profile)
    }

    @Test(.timeLimit(.minutes(1)))
    func aWideGamutSourceKeepsItsProfileAndItsPixelsInEveryFormatThatCarriesOne() async throws {
        let (fixture, profile) = try Self.fixture()
        let stripped = await fixture.get(fixture.path("rs:fit:96:96/f:png", "/p3.jpg"))
        #expect(stripped.status == 200, "\(errorMessage(stripped))")
        let srgb = try Self.decode(stripped.body, .ignore).image
        #expect(try Self.decode(stripped.body, .keep).colorProfile?.data != profile.data)

        let kept = await fixture.get(fixture.path("rs:fit:96:96/scp:0/f:png", "/p3.jpg"))
        #expect(kept.status == 200, "\(errorMessage(kept))")
        #expect(kept.header("ETag") != stripped.header("ETag"))  // another output, cached under its own key
        let raw = try Self.decode(kept.body, .keep)
        #expect(raw.colorProfile?.data == profile.data)
        // The numbers are P3's (a red of the photo is less saturated in them than in sRGB's), and read through
        // the profile they are the sRGB render's colours.
        #expect(Self.maxDifference(raw.image, srgb) >= 10)
        #expect(Self.maxDifference(try Self.decode(kept.body, .convertToSRGB).image, srgb) <= 3)

        for format in ["jpg", "webp", "avif", "jxl", "tiff"] {
            let response = await fixture.get(fixture.path("rs:fit:96:96/scp:0/f:\(format)", "/p3.jpg"))
            #expect(response.status == 200, "\(format): \(errorMessage(response))")
            #expect(try Self.decode(response.body, .keep).colorProfile?.data == profile.data, "\(format)")
        }
        // One fetch for the sRGB decode and one for the kept one (no disk cache here), whatever the formats
        #expect(fixture.origin.requestCount(for: "/p3.jpg") == 2)
    }

    @Test(.timeLimit(.minutes(1)))
    func formatsWithoutProfilesAreConvertedAndTheServerDefaultYieldsToTheURL() async throws {
        let (fixture, profile) = try Self.fixture { $0.keepsColorProfile = true }
        // The server keeps profiles; the URL says strip: sRGB, and not the source's profile
        let stripped = await fixture.get(fixture.path("rs:fit:96:96/scp:1/f:png", "/p3.jpg"))
        let srgb = try Self.decode(stripped.body, .ignore).image
        #expect(try Self.decode(stripped.body, .keep).colorProfile?.data != profile.data)
        let byDefault = await fixture.get(fixture.path("rs:fit:96:96/f:png", "/p3.jpg"))
        #expect(try Self.decode(byDefault.body, .keep).colorProfile?.data == profile.data)

        // BMP carries no profile: its pixels are converted to sRGB after the resize, within 3 of the sRGB render
        let bmp = await fixture.get(fixture.path("rs:fit:96:96/f:bmp", "/p3.jpg"))
        #expect(bmp.status == 200, "\(errorMessage(bmp))")
        let pixels = try Self.decode(bmp.body, .ignore).image
        #expect(Self.maxDifference(pixels, srgb) <= 3)
        let raw = try Self.decode(byDefault.body, .ignore).image
        #expect(Self.maxDifference(pixels, raw) >= 10)

        // The command's flag sets the default
        let options = try ServeCommand.parse(
            parseArguments(["--unsigned", "--keep-color-profile"], options: ServeCommand.command.options),
            environment: [:])
        #expect(options.keepsColorProfile)
    }

    /// A background and a watermark are sRGB's colours, also on an image kept in its profile's space: they are
    /// converted into that space before they are painted, so a viewer reading the output through its profile sees
    /// the colours asked for (a fixed orange, inside both gamuts), and the stored numbers are P3's for it.
    @Test(.timeLimit(.minutes(1)))
    func backgroundsAndWatermarksArePaintedInTheKeptProfilesSpace() async throws {
        let orange = RGBA(r: 200, g: 100, b: 50, a: 255)
        var mark = try PixelBuffer(width: 8, height: 8)
        for y in 0..<8 { for x in 0..<8 { mark[pixel: x, y] = orange } }
        let png = try ImageEncoderRegistry.makeDefault().encode(mark, as: .png)
        let (fixture, profile) = try Self.fixture { $0.watermark = try? WatermarkImage(data: png) }
        func distance(_ a: RGBA, _ b: RGBA) -> Int {
            max(abs(Int(a.r) - Int(b.r)), abs(Int(a.g) - Int(b.g)), abs(Int(a.b) - Int(b.b)))
        }
        for path in ["rs:fit:64:64/pd:8/bg:200:100:50/wm:1:ce", "rs:fit:64:64/pd:8/bg:c86432/wm:1:ce"] {
            let kept = await fixture.get(fixture.path(path + "/scp:0/f:png", "/p3.jpg"))
            #expect(kept.status == 200, "\(errorMessage(kept))")
            let container = try Self.decode(kept.body, .keep)
            #expect(container.colorProfile?.data == profile.data)
            let (raw, viewed) = (container.image, try Self.decode(kept.body, .convertToSRGB).image)
            let centre = (raw.width / 2, raw.height / 2)
            // The padding's corner and the watermark at the centre, read through the profile: the orange
            #expect(distance(viewed[pixel: 0, 0], orange) <= 2, "\(viewed[pixel: 0, 0])")
            #expect(distance(viewed[pixel: centre.0, centre.1], orange) <= 2, "\(viewed[pixel: centre.0, centre.1])")
            // Stored as P3's numbers for it, not as sRGB's
            #expect(distance(raw[pixel: 0, 0], orange) >= 8, "\(raw[pixel: 0, 0])")
            #expect(distance(raw[pixel: centre.0, centre.1], orange) >= 8)
        }
        // Converted to sRGB (the default): the numbers are the orange itself
        let srgb = try Self.decode(
            await fixture.get(fixture.path("rs:fit:64:64/pd:8/bg:200:100:50/wm:1:ce/f:png", "/p3.jpg")).body, .ignore
        ).image
        #expect(
            distance(srgb[pixel: 0, 0], orange) <= 1
                && distance(srgb[pixel: srgb.width / 2, srgb.height / 2], orange) <= 1)
    }

    /// `--use-linear-colorspace` on an image kept in ProPhoto's space: the light is averaged through ProPhoto's own
    /// curve (gamma 1.8), so a black-and-white checkerboard halved is 0.5^(1/1.8) of full scale, 173.5, as the
    /// profile reads it, not sRGB's 188; converted to sRGB first, it is sRGB's 188.
    @Test(.timeLimit(.minutes(1)))
    func linearLightGoesThroughAKeptProfilesOwnCurve() async throws {
        let prophoto = try #require(
            try Self.decode(serverCorpus("icc/gen-kodim07-prophoto-v4.jpg"), .keep).colorProfile)
        var board = try PixelBuffer(width: 64, height: 64)
        for y in 0..<64 {
            for x in 0..<64 {
                let v: UInt8 = (x + y) % 2 == 0 ? 255 : 0
                board[pixel: x, y] = RGBA(r: v, g: v, b: v, a: 255)
            }
        }
        let png = try PNGEncoder().encode(board.assumingOpaque(), options: EncodingOptions(colorProfile: prophoto))
        let fixture = try ProxyFixture { $0.usesLinearColorspace = true }
        fixture.origin.setRoute("/board.png", .bytes(png, contentType: "image/png"))
        let kept = await fixture.get(fixture.path("rs:fit:32:32/scp:0/f:png", "/board.png"))
        #expect(kept.status == 200, "\(errorMessage(kept))")
        let raw = try Self.decode(kept.body, .keep)
        #expect(raw.colorProfile?.data == prophoto.data)
        #expect([173, 174].contains(raw.image[pixel: 10, 10].r), "\(raw.image[pixel: 10, 10])")
        let converted = await fixture.get(fixture.path("rs:fit:32:32/f:png", "/board.png"))
        #expect([187, 188, 189].contains(try Self.decode(converted.body, .ignore).image[pixel: 10, 10].r))
    }
}
