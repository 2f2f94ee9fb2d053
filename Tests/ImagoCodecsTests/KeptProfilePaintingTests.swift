import Foundation
import ImagoCore
import Synchronization
import Testing

@testable import ImagoCodecs

/// ImagoCore's painting processors on an image kept in its Display P3 profile (`ColorPolicy.keep`): the colours
/// asked for, in sRGB, are converted into P3 by the converter the decoder attached, so they show as asked.
@Suite struct KeptProfilePaintingTests {
    static let orange = RGBA(r: 200, g: 100, b: 50, a: 255)

    func distance(_ a: RGBA, _ b: RGBA) -> Int {
        max(abs(Int(a.r) - Int(b.r)), abs(Int(a.g) - Int(b.g)), abs(Int(a.b) - Int(b.b)), abs(Int(a.a) - Int(b.a)))
    }

    /// The P3 photo decoded with its profile kept.
    func keptPhoto() throws -> ImageContainer {
        var options = DecodingOptions(targetSize: PixelSize(width: 64, height: 64))
        options.colorPolicy = .keep
        return try JPEGDecoder().decode(try corpusData("icc/gen-kodim03-displayp3-v4.jpg"), options: options)
    }

    /// `image` written as PNG with `profile` and read back converted to sRGB, as a browser shows it.
    func viewed(_ image: PixelBuffer, profile: ColorProfile) throws -> PixelBuffer {
        let png = try PNGEncoder().encode(image, options: EncodingOptions(colorProfile: profile))
        return try PNGDecoder().decode(png, options: DecodingOptions()).image
    }

    @Test func theDecoderAttachesAConverterToTheProfileItKeeps() throws {
        let profile = try #require(try keptPhoto().colorProfile)
        #expect(profile.converter != nil)
        let stored = profile.fromSRGB(Self.orange)
        #expect(distance(stored, Self.orange) >= 8, "P3's numbers for the orange, not sRGB's: \(stored)")
        // Equality is the bytes and the description, not the converter
        #expect(profile == ColorProfile(data: profile.data, description: profile.description))
    }

    @Test func aCanvasABackgroundAndAnOverlayShowTheColoursAskedFor() throws {
        let photo = try keptPhoto()
        let profile = try #require(photo.colorProfile)
        // A canvas 8 pixels wider on each side, filled with the orange
        let canvas = ImageProcessors.Canvas(
            width: photo.image.width + 16, height: photo.image.height + 16, x: 8, y: 8, fill: Self.orange)
        let padded = try canvas.process(photo.image, profile: profile)
        #expect(distance(try viewed(padded, profile: profile)[pixel: 0, 0], Self.orange) <= 2)
        #expect(distance(padded[pixel: 0, 0], Self.orange) >= 8)
        // A transparent corner flattened onto the orange
        var holed = photo.image.convertedToRGBA()
        holed[pixel: 0, 0] = RGBA(r: 0, g: 0, b: 0, a: 0)
        let flattened = try ImageProcessors.Background(color: Self.orange).process(holed, profile: profile)
        #expect(distance(try viewed(flattened, profile: profile)[pixel: 0, 0], Self.orange) <= 2)
        // An orange badge drawn over it
        var badge = try PixelBuffer(width: 4, height: 4)
        for y in 0..<4 { for x in 0..<4 { badge[pixel: x, y] = Self.orange } }
        let badged = try ImageProcessors.Overlay(badge, id: "orange", x: 2, y: 2).process(photo.image, profile: profile)
        #expect(distance(try viewed(badged, profile: profile)[pixel: 3, 3], Self.orange) <= 2)
        // Without a profile (sRGB), the numbers are the orange's own, as before
        #expect(try canvas.process(photo.image, profile: nil)[pixel: 0, 0] == Self.orange)
    }

    /// A converter that counts its conversions and converts nothing.
    final class CountingConverter: ColorConverting {
        let count = Mutex(0)
        func convertFromSRGB(_ image: PixelBuffer, into profile: ColorProfile) -> PixelBuffer {
            count.withLock { $0 += 1 }
            return image
        }
    }

    @Test func aColourThatWouldNotShowIsNotConverted() throws {
        // An opaque image's background, a transparent background, and a canvas the image's own size at its origin
        // paint nothing: no conversion; a canvas that shows its fill converts it once
        let converter = CountingConverter()
        let profile = ColorProfile(data: Data([1, 2, 3]), converter: converter)
        let opaque = try keptPhoto().image
        try #require(opaque.isKnownOpaque)
        var holed = opaque.convertedToRGBA()
        holed[pixel: 0, 0] = RGBA(r: 0, g: 0, b: 0, a: 0)
        _ = try ImageProcessors.Background(color: Self.orange).process(opaque, profile: profile)
        _ = try ImageProcessors.Background(color: RGBA(r: 9, g: 9, b: 9, a: 0)).process(holed, profile: profile)
        let own = ImageProcessors.Canvas(width: opaque.width, height: opaque.height, x: 0, y: 0, fill: Self.orange)
        #expect(try own.process(opaque, profile: profile).bytes == opaque.convertedToRGBA().bytes)
        #expect(converter.count.withLock { $0 } == 0)
        let wider = ImageProcessors.Canvas(
            width: opaque.width + 2, height: opaque.height, x: 1, y: 0, fill: Self.orange)
        _ = try wider.process(opaque, profile: profile)
        _ = try ImageProcessors.Background(color: Self.orange).process(holed, profile: profile)
        #expect(converter.count.withLock { $0 } == 2)
    }

    @Test func theKeepingPipelinePassesTheProfileToItsProcessors() async throws {
        // Through ImagePipeline: decoded with the profile kept, then a canvas with the orange
        let data = try corpusData("icc/gen-kodim03-displayp3-v4.jpg")
        var configuration = ImagePipeline.Configuration()  // with every shipped codec
        configuration.decodingOptions.colorPolicy = .keep
        let pipeline = ImagePipeline(configuration: configuration)
        let request = ImageRequest(
            source: .data(id: "p3", data),
            processors: [.resize(width: 32, height: 32), .canvas(width: 48, height: 48, x: 8, y: 8, fill: Self.orange)])
        let image = try await pipeline.image(for: request)
        let profile = try #require(image.colorProfile)
        #expect(distance(try viewed(image.image, profile: profile)[pixel: 0, 0], Self.orange) <= 2)
    }
}
