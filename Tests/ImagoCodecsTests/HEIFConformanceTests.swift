import Foundation
import ImagoCodecs
import ImagoCore
import Testing

/// Every HEIF in `../shared/corpus/heic` against its reference PNG (pillow-heif with libheif 1.23, transforms
/// applied), within the README's tolerance (MAE ≤ 1.0): size and pixels, alpha, grids, irot/imir applied once.
@Suite struct HEIFConformanceTests {
    /// `heic/README.md`: libheif 1.15 and 1.23 differ by up to MAE 0.54.
    static let tolerance = 1.0

    static let files: [String] = [
        "gen-kodim03-8bit-420.heic", "gen-kodim05-8bit-444.heic", "gen-kodim12-alpha.heic", "gen-kodim19-10bit.heic",
        "gen-kodim23-irot1-imir1.heic", "gen-kodim23-irot3.heic", "libheif-with-alpha-512x512.heic",
        "pillowheif-L_10__29x100.heif", "pillowheif-L_exif_xmp_iptc.heic", "pillowheif-RGBA_10__128x128.heif",
        "pillowheif-RGBA_8__29x100.heif", "pillowheif-RGB_8__128x128.heif", "pillowheif-RGB_8_chroma444.heif",
        "pillowheif-empty_icc.heic", "pillowheif-zPug_3.heic",
    ]

    @Test func listCoversTheCorpus() throws {
        let onDisk = try corpusFiles("heic", ext: "heic") + corpusFiles("heic", ext: "heif")
        #expect(Set(onDisk.map(\.lastPathComponent)) == Set(Self.files))
    }

    @Test(arguments: files)
    func fileMatchesItsReference(_ name: String) throws {
        // Given a corpus HEIF file
        let data = try Data(contentsOf: corpusURL("heic").appendingPathComponent(name))

        // When decoded with the default options
        let container = try HEIFDecoder().decode(data, options: DecodingOptions())

        // Then it is one frame of the reference's size and pixels (converted to sRGB, as the reference is), with the transforms applied once and no orientation left to apply
        let reference = try decodeReferencePNG(stillReferenceURL("heic", name))
        #expect(container.frames.count == 1)
        #expect(container.orientation == .up)
        #expect(container.image.size == reference.size)
        let error = referenceError(container.image, reference)
        print("heif-conformance \(name) mae=\(String(format: "%.3f", error)) bitDepth=\(container.bitDepth ?? 0)")
        #expect(error <= Self.tolerance, "\(name): MAE \(error)")
    }

    @Test(arguments: [("gen-kodim03-8bit-420.heic", 8), ("gen-kodim19-10bit.heic", 10)])
    func bitDepthIsTheFiles(_ name: String, depth: Int) throws {
        let data = try Data(contentsOf: corpusURL("heic").appendingPathComponent(name))
        #expect(try HEIFDecoder().decode(data, options: DecodingOptions()).bitDepth == depth)
    }

    @Test func formatFollowsTheBrand() throws {
        let heic = try Data(contentsOf: corpusURL("heic").appendingPathComponent("gen-kodim03-8bit-420.heic"))
        #expect(try HEIFDecoder().decode(heic, options: DecodingOptions()).format == .heic)
        #expect(HEIFDecoder().formats == [.heic, .heif])
    }

    @Test func targetSizeAndPixelLimit() throws {
        let data = try Data(contentsOf: corpusURL("heic").appendingPathComponent("gen-kodim03-8bit-420.heic"))
        let small = try HEIFDecoder().decode(
            data, options: DecodingOptions(targetSize: PixelSize(width: 96, height: 96)))
        #expect(small.image.size == PixelSize(width: 96, height: 64))
        #expect(small.originalSize == PixelSize(width: 384, height: 256))
        #expect(throws: CodecError.tooManyPixels(width: 384, height: 256, limit: 10_000)) {
            try HEIFDecoder().decode(data, options: DecodingOptions(pixelLimit: 10_000))
        }
    }

    @Test func theDefaultRegistryDecodesHEICAndTheFormatsFolderPhoto() throws {
        let data = try corpusData("formats/TestImage.heic")
        let container = try ImageDecoderRegistry(ImagoCodecs.decoders).decode(data)
        #expect(container.format == .heic)
        #expect(container.image.size == PixelSize(width: 1440, height: 960))
    }
}
