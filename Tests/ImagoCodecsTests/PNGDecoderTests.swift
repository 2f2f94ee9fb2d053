import Foundation
import ImagoCodecs
import ImagoCore
import Testing

@Suite struct PNGDecoderTests {
    let decoder = PNGDecoder()

    @Test func decodesTestEXIFPNGAsAnOpaqueUprightImage() throws {
        // Given SDWebImage's TestEXIF.png (150x200 RGB, no eXIf chunk: its metadata is XMP)
        let container = try decoder.decode(corpusData("formats/TestEXIF.png"), options: DecodingOptions())
        // Then it is 150x200 RGBA, fully opaque, upright
        #expect(container.image.size == PixelSize(width: 150, height: 200))
        #expect(container.image.format == .rgba8)
        #expect(!container.image.hasTransparency)
        #expect(container.orientation == .up)
        #expect(container.format == .png)
    }

    @Test func hugeDeclaredDimensionsThrowTooManyPixelsBeforeAllocating() throws {
        // Given a PNG whose IHDR declares 100000x100000 (40 GB as RGBA) and has no pixel data
        let data = TestImages.pngHeader(width: 100_000, height: 100_000)
        // When decoded, then it fails from the header alone
        #expect(throws: CodecError.tooManyPixels(width: 100_000, height: 100_000, limit: 100_000_000)) {
            try decoder.decode(data, options: DecodingOptions())
        }
    }

    @Test func grayscaleWithoutAlphaDecodesToGray8AndEverythingElseToRGBA8() throws {
        let gray = try decoder.decode(corpusData("pngsuite/png/basn0g08.png"), options: DecodingOptions()).image
        let grayWithTRNS = try decoder.decode(corpusData("pngsuite/png/tbbn0g04.png"), options: DecodingOptions()).image
        let palette = try decoder.decode(corpusData("formats/IndexedPNG.png"), options: DecodingOptions()).image
        let rgba16 = try decoder.decode(corpusData("formats/RGBA16PNG.png"), options: DecodingOptions()).image
        #expect(gray.format == .gray8)
        #expect(grayWithTRNS.format == .rgba8)
        #expect(palette.format == .rgba8)
        #expect(palette.size == PixelSize(width: 687, height: 123))
        #expect(rgba16.format == .rgba8)
        #expect(rgba16.size == PixelSize(width: 126, height: 135))
    }

    @Test func appliesOrientationFromAnEXIfChunk() throws {
        // Given a PNG of a 6x4 pattern, and the same with an eXIf chunk saying orientation 6
        let pattern = try TestImages.pattern(width: 6, height: 4)
        let plain = try PNGEncoder().encode(pattern, options: EncodingOptions())
        let tagged = TestImages.png(plain, withOrientation: 6)
        // When decoded with and without applying orientation
        let applied = try decoder.decode(tagged, options: DecodingOptions())
        let reported = try decoder.decode(tagged, options: DecodingOptions(appliesOrientation: false))
        // Then applying turns the pixels; otherwise the orientation is reported and the pixels kept
        #expect(applied.image == pattern.oriented(.right))
        #expect(applied.orientation == .up)
        #expect(applied.originalSize == PixelSize(width: 4, height: 6))
        #expect(reported.image == pattern)
        #expect(reported.orientation == .right)
    }

    @Test func downsamplesToTheAspectFitSize() throws {
        // Given a 768x512 Kodak PNG
        let data = try corpusData("kodak/01.png")
        // When decoded to fit 256x256
        let container = try decoder.decode(
            data, options: DecodingOptions(targetSize: PixelSize(width: 256, height: 256)))
        // Then it is 256x171, and area-averaged from the full image
        #expect(container.image.size == PixelSize(width: 256, height: 171))
        #expect(container.originalSize == PixelSize(width: 768, height: 512))
        let full = try decoder.decode(data, options: DecodingOptions()).image
        #expect(container.image == (try full.resampled(to: PixelSize(width: 256, height: 171))))
    }

    @Test func truncatedDataThrowsTruncated() throws {
        let data = try corpusData("kodak/01.png")
        #expect(throws: CodecError.truncated(format: .png)) {
            try decoder.decode(data.prefix(data.count / 2), options: DecodingOptions())
        }
        #expect(throws: CodecError.truncated(format: .png)) {
            try decoder.decode(data.prefix(20), options: DecodingOptions())
        }
    }

    @Test func animatedPNGDecodesItsStillDefaultImage() throws {
        // Given an APNG (Debian's libpng has no APNG support)
        let container = try decoder.decode(corpusData("formats/TestImageAnimated.apng"), options: DecodingOptions())
        // Then the default image decodes as a single frame, and the format says APNG
        #expect(container.frames.count == 1)
        #expect(container.image.size == PixelSize(width: 320, height: 240))
        #expect(container.format == .apng)
    }

    @Test func registryRoutesJPEGAndPNGToTheseDecoders() throws {
        let registry = ImageDecoderRegistry(ImagoCodecs.decoders)
        #expect(registry.supportedFormats.isSuperset(of: [.jpeg, .png, .apng]))
        #expect(try registry.decode(corpusData("formats/TestImage.png")).format == .png)
        #expect(try registry.decode(corpusData("formats/TestImage.jpg")).format == .jpeg)
    }

    @Test(arguments: [("basn0g01.png", 1), ("basn0g16.png", 16), ("basn2c08.png", 8), ("basn3p04.png", 8)])
    func bitDepthIsWhatIHDRDeclares(_ name: String, depth: Int) throws {
        // A palette image's channels are its palette's, 8-bit, whatever the index width
        let data = try corpusData("pngsuite/png/\(name)")
        #expect(try PNGDecoder().decode(data, options: DecodingOptions()).bitDepth == depth)
    }
}
