import Foundation
import ImagoCodecs
import ImagoCore
import Testing

/// Decoders mark what they know to be opaque (`PixelBuffer.isKnownOpaque`), so that resampling and encoding skip
/// the alpha scan, and never mark what may be transparent. (Debug builds check every mark against the pixels.)
@Suite struct DecoderOpaqueMarkTests {
    @Test func jpegOutputIsMarkedAtFullSizeAndDownsampled() throws {
        // Given a Kodak photo as JPEG
        let photo = try PNGDecoder().decode(corpusData("kodak/01.png"), options: DecodingOptions()).image
        let data = try JPEGEncoder().encode(photo, options: EncodingOptions(quality: 0.85))
        // When decoded at full size, DCT-scaled only (192), and DCT-scaled then resampled (256)
        for target in [nil, 192, 256] {
            let options = DecodingOptions(targetSize: target.map { PixelSize(width: $0, height: $0) })
            let image = try JPEGDecoder().decode(data, options: options).image
            // Then the result is known to be opaque
            #expect(image.isKnownOpaque, "target \(String(describing: target))")
        }
    }

    @Test(arguments: [
        ("formats/TestEXIF.png", true),  // RGB
        ("pngsuite/png/basn2c08.png", true),  // RGB, 8-bit
        ("pngsuite/png/basn6a08.png", false),  // RGBA
        ("pngsuite/png/tbrn2c08.png", false),  // RGB with tRNS
    ])
    func pngIsMarkedOnlyWithoutAlphaOrTRNS(path: String, isOpaque: Bool) throws {
        let image = try PNGDecoder().decode(corpusData(path), options: DecodingOptions()).image
        #expect(image.format == .rgba8)
        #expect(image.isKnownOpaque == isOpaque)
    }

    @Test(arguments: [("gallery1/3.webp", true), ("gallery2/1_webp_a.webp", false)])
    func webpStillIsMarkedOnlyWithoutAlpha(path: String, isOpaque: Bool) throws {
        let data = try Data(contentsOf: corpusURL("webp/images").appendingPathComponent(path))
        #expect(try WebPDecoder().decode(data, options: DecodingOptions()).image.isKnownOpaque == isOpaque)
    }
}
