import Foundation
import ImagoCore
import Testing

@testable import ImagoCodecs

/// The colour hook for a colour-management stage: AVIFDecoder and HEIFDecoder return the `colr` box's ICC
/// profile or CICP code points beside the (unconverted) pixels.
@Suite struct EmbeddedColourTests {
    @Test func avifWithAnICCProfileHandsItOver() throws {
        let data = try Data(contentsOf: corpusURL("avif").appendingPathComponent("libavif-paris_icc_exif_xmp.avif"))
        let (container, colour) = try AVIFDecoder().decodeWithColour(data, options: DecodingOptions())
        #expect(container.frames.count == 1)
        let icc = try #require(colour.iccProfile)
        // An ICC profile starts with its size and has the signature 'acsp' at offset 36
        #expect(icc.count > 128)
        #expect(icc[36..<40].elementsEqual("acsp".utf8))
    }

    @Test func avifWithoutAProfileHandsOverItsCICP() throws {
        let data = try Data(contentsOf: corpusURL("avif").appendingPathComponent("gen-kodim03-8bit-420.avif"))
        let colour = try AVIFDecoder().decodeWithColour(data, options: DecodingOptions()).colour
        #expect(colour.iccProfile == nil)
        // manifest.json: nclx [1, 13, 6, 1] (BT.709 primaries, sRGB transfer, BT.601 matrix, full range)
        #expect(colour.cicp == EmbeddedColour.CICP(primaries: 1, transfer: 13, matrix: 6, isFullRange: true))
    }

    @Test func heicWithADisplayP3ProfileHandsItOver() throws {
        let data = try Data(contentsOf: corpusURL("heic").appendingPathComponent("pillowheif-empty_icc.heic"))
        let colour = try HEIFDecoder().decodeWithColour(data, options: DecodingOptions()).colour
        let icc = try #require(colour.iccProfile)
        #expect(icc[36..<40].elementsEqual("acsp".utf8))
    }
}
