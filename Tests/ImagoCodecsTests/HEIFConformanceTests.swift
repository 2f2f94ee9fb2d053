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

    /// `Tests/Samples/sequence-msf1-kodim03.heics`, made by `scripts/make-heics.py` from
    /// `gen-kodim03-8bit-420.heic`: an image-sequence `ftyp` (`msf1`; `msf1`, `mif1`, `hevc`), the still's `meta`
    /// as the cover image and a `moov` with one `pict` track holding the same HEVC picture.
    static func sequenceSample() throws -> Data {
        try Data(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Samples/sequence-msf1-kodim03.heics"))
    }

    @Test func anImageSequenceGivesItsPrimaryImage() throws {
        // Given a .heics with a cover image and a one-sample track
        let sequence = try Self.sequenceSample()
        #expect(ImageFormat(sniffing: sequence) == .heic)

        // When decoded
        let container = try ImageDecoderRegistry(ImagoCodecs.decoders).decode(sequence)

        // Then it is the primary image: the still's pixels exactly, one frame
        let still = try HEIFDecoder().decode(
            Data(contentsOf: corpusURL("heic").appendingPathComponent("gen-kodim03-8bit-420.heic")),
            options: DecodingOptions())
        #expect(container.frames.count == 1)
        #expect(container.format == .heic)
        #expect(container.image == still.image)

        // A sequence without a cover image (its meta box renamed `free`): libheif 1.15 reads no track, a typed error
        var trackOnly = sequence
        let meta = try #require(trackOnly.firstRange(of: Data("meta".utf8)))
        trackOnly.replaceSubrange(meta, with: Data("free".utf8))
        #expect(throws: CodecError.self) { try HEIFDecoder().decode(trackOnly, options: DecodingOptions()) }
    }

    /// A target at least 4× smaller is averaged in blocks straight from libheif's planes (no full-size RGBA), then
    /// resampled: within a level of resampling the full decode.
    @Test func blockReducedThumbnailMatchesTheFullDecodeResampled() throws {
        let data = try Data(contentsOf: corpusURL("heic").appendingPathComponent("gen-kodim03-8bit-420.heic"))
        let target = PixelSize(width: 96, height: 96)
        let reduced = try HEIFDecoder().decode(data, options: DecodingOptions(targetSize: target)).image
        let full = try HEIFDecoder().decode(data, options: DecodingOptions()).image
            .resampled(to: PixelSize(width: 96, height: 64))
        #expect(reduced.size == PixelSize(width: 96, height: 64))
        #expect(reduced.isKnownOpaque)
        let error = referenceError(reduced, full)
        #expect(error <= 1.0, "MAE \(error)")
    }

    @Test func theDefaultRegistryDecodesHEICAndTheFormatsFolderPhoto() throws {
        let data = try corpusData("formats/TestImage.heic")
        let container = try ImageDecoderRegistry(ImagoCodecs.decoders).decode(data)
        #expect(container.format == .heic)
        #expect(container.image.size == PixelSize(width: 1440, height: 960))
    }
}
