import Foundation
import ImagoCodecs
import ImagoCore
import Testing

/// JPEGXLEncoder → JPEGXLDecoder: lossless is exact, lossy error grows with the distance, alpha survives.
@Suite struct JPEGXLEncoderRoundTripTests {
    /// A 384×256 Kodak photo (kodim03 downsampled), opaque.
    static func photo() throws -> PixelBuffer {
        try decodeReferencePNG(corpusURL("kodak").appendingPathComponent("03.png"))
            .resampled(to: PixelSize(width: 384, height: 256))
    }

    /// The photo with a horizontal alpha ramp, including fully transparent columns with colour under them.
    static func photoWithAlpha() throws -> PixelBuffer {
        var image = try photo()
        let (width, height) = (image.width, image.height)
        image.withUnsafeMutableBytes { bytes in
            for y in 0..<height {
                for x in 0..<width { bytes[(y * width + x) * 4 + 3] = UInt8(clamping: max(0, x - 40)) }
            }
        }
        return image
    }

    @Test func losslessRoundTripIsExact() throws {
        // Given a photo with alpha (colour kept under alpha 0)
        let image = try Self.photoWithAlpha()

        // When encoded losslessly and decoded
        let data = try JPEGXLEncoder(effort: 3).encode(image, options: EncodingOptions(isLossless: true))
        let decoded = try JPEGXLDecoder().decode(data, options: DecodingOptions())

        // Then every byte comes back
        #expect(ImageFormat(sniffing: data) == .jpegXL)
        #expect(decoded.image.bytes == image.bytes)
        #expect(decoded.bitDepth == 8)
    }

    @Test func losslessGrayRoundTripIsExact() throws {
        let gray = try PixelBuffer(
            width: 64, height: 48, format: .gray8, bytes: (0..<(64 * 48)).map { UInt8(truncatingIfNeeded: $0 * 7) })
        let data = try JPEGXLEncoder().encode(gray, options: EncodingOptions(isLossless: true))
        let decoded = try JPEGXLDecoder().decode(data, options: DecodingOptions())
        #expect(decoded.image.convertedToRGBA().bytes == gray.convertedToRGBA().bytes)
        #expect(decoded.image.isKnownOpaque)
    }

    @Test func lossyErrorGrowsWithDistance() throws {
        // Given an opaque photo
        let image = try Self.photo()
        var errors: [Double] = []
        var sizes: [Int] = []
        for distance in [0.5, 1.0, 3.0, 8.0] {
            // When encoded at each distance and decoded
            let data = try JPEGXLEncoder(effort: 3, distance: distance).encode(image, options: EncodingOptions())
            let decoded = try JPEGXLDecoder().decode(data, options: DecodingOptions())
            #expect(decoded.image.size == image.size)
            #expect(decoded.image.isKnownOpaque)
            errors.append(meanAbsoluteError(decoded.image, image).mean)
            sizes.append(data.count)
        }
        print("jxl-roundtrip distances 0.5/1/3/8 mae=\(errors) bytes=\(sizes)")
        // Then the error rises and the size falls with the distance, and distance 1 is close to the original
        #expect(errors == errors.sorted())
        #expect(sizes == sizes.sorted(by: >))
        #expect(errors[1] < 2.0)
        #expect(errors[3] < 8.0)
    }

    @Test func qualityMapsToCjxlDistances() {
        #expect(abs(JPEGXLEncoder.distance(forQuality: 0.9) - 1.0) < 1e-9)
        #expect(abs(JPEGXLEncoder.distance(forQuality: 1.0) - 0.1) < 1e-9)
        #expect(JPEGXLEncoder.distance(forQuality: 0.1) > JPEGXLEncoder.distance(forQuality: 0.5))
    }

    @Test func lossyAlphaSurvives() throws {
        let image = try Self.photoWithAlpha()
        let data = try JPEGXLEncoder(effort: 3).encode(image, options: EncodingOptions(quality: 0.9))
        let decoded = try JPEGXLDecoder().decode(data, options: DecodingOptions())
        #expect(!decoded.image.isKnownOpaque)
        let error = meanAbsoluteError(
            decoded.image.with(transparentColourZeroed: true), image.with(transparentColourZeroed: true))
        #expect(error.mean < 2.0, "mean \(error.mean)")
    }

    @Test func premultipliedInputIsStoredStraight() throws {
        // Given a premultiplied buffer
        let straight = try Self.photoWithAlpha()
        let premultiplied = straight.premultiplied()

        // When encoded losslessly and decoded
        let data = try JPEGXLEncoder().encode(premultiplied, options: EncodingOptions(isLossless: true))
        let decoded = try JPEGXLDecoder().decode(data, options: DecodingOptions())

        // Then straight samples come back (exactly those of un-premultiplying the input)
        #expect(decoded.image.alphaMode == .straight)
        #expect(decoded.image.bytes == premultiplied.unpremultiplied().bytes)
    }

    @Test func encoderIsRegisteredByDefault() throws {
        let registry = ImageEncoderRegistry(ImagoCodecs.encoders)
        let data = try registry.encode(try Self.photo(), as: .jpegXL, options: EncodingOptions(isLossless: true))
        #expect(ImageFormat(sniffing: data) == .jpegXL)
    }
}
