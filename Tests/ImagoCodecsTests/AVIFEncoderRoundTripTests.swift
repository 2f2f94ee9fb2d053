import Foundation
import ImagoCodecs
import ImagoCore
import Testing

/// AVIFEncoder through AVIFDecoder: a Kodak photo at several qualities (error falls as quality rises, files
/// grow), alpha kept, lossless exact, and the default registry encoding AVIF.
@Suite struct AVIFEncoderRoundTripTests {
    static func photo() throws -> PixelBuffer {
        // kodim03 cropped to 192x128 keeps the suite fast (libaom at speed 6)
        let full = try decodeReferencePNG(corpusURL("kodak").appendingPathComponent("03.png"))
        return try full.resampled(to: PixelSize(width: 192, height: 128))
    }

    @Test(.timeLimit(.minutes(1)))
    func qualityTradesSizeForError() throws {
        // Given a photo encoded at three qualities
        let image = try Self.photo()
        var results: [(quality: Double, bytes: Int, error: Double)] = []
        for quality in [0.3, 0.6, 0.9] {
            let data = try AVIFEncoder().encode(image, options: EncodingOptions(quality: quality))
            // When decoded again
            let decoded = try AVIFDecoder().decode(data, options: DecodingOptions())
            #expect(decoded.format == .avif)
            #expect(decoded.image.size == image.size)
            #expect(decoded.image.isKnownOpaque)
            results.append((quality, data.count, referenceError(decoded.image, image)))
            print("avif-roundtrip quality=\(quality) bytes=\(data.count) mae=\(referenceError(decoded.image, image))")
        }
        // Then higher quality costs bytes and gains fidelity; even the lowest stays a recognisable picture
        #expect(results[0].bytes < results[1].bytes && results[1].bytes < results[2].bytes)
        #expect(results[0].error > results[1].error && results[1].error > results[2].error)
        #expect(results[2].error < 2.0)
        #expect(results[0].error < 10.0)
    }

    @Test(.timeLimit(.minutes(1)))
    func alphaSurvives() throws {
        // Given a gradient whose alpha runs 0…255 left to right
        var image = try PixelBuffer(width: 64, height: 32, format: .rgba8)
        image.withUnsafeMutableBytes { bytes in
            for y in 0..<32 {
                for x in 0..<64 {
                    let i = (y * 64 + x) * 4
                    (bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]) = (200, UInt8(y * 8), 40, UInt8(x * 4))
                }
            }
        }
        // When encoded at high quality and decoded
        let data = try AVIFEncoder().encode(image, options: EncodingOptions(quality: 0.9))
        let decoded = try AVIFDecoder().decode(data, options: DecodingOptions())
        // Then alpha is there and close
        #expect(!decoded.image.isKnownOpaque)
        #expect(referenceError(decoded.image, image) < 3.0)
        #expect(decoded.image[pixel: 0, 5].a < 8 && decoded.image[pixel: 63, 5].a > 245)
    }

    @Test(.timeLimit(.minutes(1)))
    func losslessIsExact() throws {
        let image = try Self.photo().resampled(to: PixelSize(width: 64, height: 48))
        let data = try AVIFEncoder().encode(image, options: EncodingOptions(isLossless: true))
        let decoded = try AVIFDecoder().decode(data, options: DecodingOptions())
        #expect(decoded.image.withUnsafeBytes { Array($0) } == image.withUnsafeBytes { Array($0) })
    }

    @Test func quantizerMapping() {
        #expect(AVIFEncoder.quantizer(forQuality: 1) == 0)
        #expect(AVIFEncoder.quantizer(forQuality: 0) == 63)
        #expect(AVIFEncoder.quantizer(forQuality: 0.85) == 9)
        #expect(AVIFEncoder(speed: 42).speed == 10)
    }

    @Test func theDefaultEncodersIncludeAVIF() throws {
        let registry = ImageEncoderRegistry(ImagoCodecs.encoders)
        let data = try registry.encode(try Self.photo(), as: .avif)
        #expect(ImageFormat(sniffing: data) == .avif)
    }
}
