import Foundation
import ImagoCodecs
import ImagoCore
import Testing

/// Every AVIF in `../shared/corpus/avif` against its reference PNGs (Pillow with libavif 1.4 and dav1d; transforms
/// applied in MIAF order), within the README's tolerance: size, frame count, durations, loop count and pixels.
@Suite struct AVIFConformanceTests {
    /// `avif/README.md`: two independent AVIF decoders differ by up to MAE 0.78 (10/12-bit rounding).
    static let tolerance = 1.5

    static let files: [String] = [
        "gen-anim-4frames.avif", "gen-kodim03-8bit-420.avif", "gen-kodim05-8bit-444.avif",
        "gen-kodim07-10bit-420.avif", "gen-kodim08-10bit-444.avif", "gen-kodim12-8bit-420-alpha.avif",
        "gen-kodim14-lossless.avif", "gen-kodim19-12bit-444.avif", "gen-kodim23-irot1-imir1.avif",
        "libavif-abc_color_irot_alpha_irot.avif", "libavif-clop_irot_imor.avif",
        "libavif-color_grid_alpha_nogrid.avif", "libavif-colors-animated-8bpc-alpha-exif-xmp.avif",
        "libavif-colors-animated-8bpc.avif", "libavif-draw_points_idat.avif", "libavif-kodim03_yuv420_8bpc.avif",
        "libavif-paris_icc_exif_xmp.avif", "libavif-sofa_grid1x5_420.avif", "libavif-white_1x1.avif",
        "linku-fox.profile0.10bpc.yuv420.monochrome.avif", "linku-fox.profile2.12bpc.yuv420.avif",
        "linku-kimono.mirror-vertical.rotate270.crop.avif", "linku-red-at-12-oclock-with-color-profile-lossy.avif",
        "linku-star-10bpc.avifs", "ms-Monochrome.avif", "ms-reduced_still_picture_header.avif",
        "pillow-rot1mir1.avif", "pillow-transparency.avif",
    ]

    @Test func listCoversTheCorpus() throws {
        let onDisk = try corpusFiles("avif", ext: "avif") + corpusFiles("avif", ext: "avifs")
        #expect(Set(onDisk.map(\.lastPathComponent)) == Set(Self.files))
    }

    @Test(arguments: files)
    func fileMatchesItsReference(_ name: String) throws {
        // Given a corpus AVIF
        let data = try Data(contentsOf: corpusURL("avif").appendingPathComponent(name))

        // When decoded with the default options
        let container = try AVIFDecoder().decode(data, options: DecodingOptions())

        // Then size, frames, durations, loop count and pixels match the references
        #expect(container.format == .avif)
        #expect(container.orientation == .up)
        let errors: [Double]
        if let sequence = try sequenceReference("avif", name) {
            #expect(container.frames.count == sequence.frames)
            #expect(container.frames.map { milliseconds($0.duration) } == sequence.durations_ms)
            // null (no edit list) is reported as 0, loop forever, as browsers play such files.
            #expect(container.loopCount == (sequence.loop ?? 0))
            #expect(container.image.size == PixelSize(width: sequence.width, height: sequence.height))
            errors = try container.frames.enumerated().map { index, frame in
                let reference = try decodeReferencePNG(
                    corpusURL("avif/reference").appendingPathComponent(
                        "\(name).frame\(String(format: "%03d", index)).png"))
                return referenceError(frame.buffer, reference)
            }
        } else {
            #expect(container.frames.count == 1)
            let reference = try decodeReferencePNG(stillReferenceURL("avif", name))
            #expect(container.image.size == reference.size)
            errors = [referenceError(container.image, reference)]
        }
        print(
            "avif-conformance \(name) mae=\(errors.map { String(format: "%.3f", $0) }) bitDepth=\(container.bitDepth ?? 0)"
        )
        #expect(errors.allSatisfy { $0 <= Self.tolerance }, "\(name): MAE \(errors)")
    }

    @Test(arguments: [
        ("gen-kodim03-8bit-420.avif", 8), ("gen-kodim07-10bit-420.avif", 10), ("gen-kodim19-12bit-444.avif", 12),
    ])
    func bitDepthIsTheFiles(_ name: String, depth: Int) throws {
        let data = try Data(contentsOf: corpusURL("avif").appendingPathComponent(name))
        let container = try AVIFDecoder().decode(data, options: DecodingOptions())
        #expect(container.bitDepth == depth)
        #expect(container.image.format == .rgba8)
    }

    @Test func rotationIsReturnedNotAppliedWithoutAppliesOrientation() throws {
        // Given a file with irot 1 and imir 1 (display = rotate 90° anticlockwise, then mirror left/right)
        let data = try Data(contentsOf: corpusURL("avif").appendingPathComponent("gen-kodim23-irot1-imir1.avif"))

        // When decoded without applying orientation
        let raw = try AVIFDecoder().decode(data, options: DecodingOptions(appliesOrientation: false))

        // Then the orientation is returned and applying it gives the reference
        #expect(raw.orientation == .rightMirrored)
        let reference = try decodeReferencePNG(stillReferenceURL("avif", "gen-kodim23-irot1-imir1.avif"))
        #expect(referenceError(raw.image.oriented(raw.orientation), reference) <= Self.tolerance)
    }

    @Test func firstFrameOnlyAndTargetSize() throws {
        let data = try Data(contentsOf: corpusURL("avif").appendingPathComponent("gen-anim-4frames.avif"))
        let container = try AVIFDecoder().decode(
            data, options: DecodingOptions(targetSize: PixelSize(width: 96, height: 96), decodesFirstFrameOnly: true))
        #expect(container.frames.count == 1)
        #expect(container.image.size == PixelSize(width: 96, height: 64))
        #expect(container.originalSize == PixelSize(width: 192, height: 128))
        let reference = try decodeReferencePNG(
            corpusURL("avif/reference").appendingPathComponent("gen-anim-4frames.avif.frame000.png"))
        #expect(referenceError(container.image, try reference.resampled(to: container.image.size)) <= 2)
    }

    @Test func limitsAreCheckedFromTheHeader() throws {
        let still = try Data(contentsOf: corpusURL("avif").appendingPathComponent("gen-kodim03-8bit-420.avif"))
        #expect(throws: CodecError.tooManyPixels(width: 384, height: 256, limit: 10_000)) {
            try AVIFDecoder().decode(still, options: DecodingOptions(pixelLimit: 10_000))
        }
        let animation = try Data(contentsOf: corpusURL("avif").appendingPathComponent("gen-anim-4frames.avif"))
        #expect(throws: CodecError.tooManyFrames(limit: 3)) {
            try AVIFDecoder().decode(animation, options: DecodingOptions(frameLimit: 3))
        }
        #expect(throws: CodecError.animationTooLarge(limit: 100_000)) {
            try AVIFDecoder().decode(animation, options: DecodingOptions(animationByteLimit: 100_000))
        }
        #expect(throws: CodecError.animationTooMuchWork(limit: 50_000)) {
            try AVIFDecoder().decode(animation, options: DecodingOptions(animationWorkLimit: 50_000))
        }
    }

    @Test func theDefaultRegistryDecodesAVIF() throws {
        let data = try Data(contentsOf: corpusURL("avif").appendingPathComponent("gen-kodim05-8bit-444.avif"))
        let container = try ImageDecoderRegistry(ImagoCodecs.decoders).decode(data)
        #expect(container.format == .avif)
        #expect(container.image.size == PixelSize(width: 384, height: 256))
    }
}
