import Foundation
import ImagoCodecs
import ImagoCore
import Testing

/// Every JPEG XL in the corpus (`../shared/corpus/jxl`) against its references: size, frame count, durations,
/// loop count and pixels by mean absolute error per channel (colour under alpha 0 ignored).
@Suite struct JPEGXLConformanceTests {
    /// The corpus README's tolerance: two independent JPEG XL decoders differ by at most 0.22.
    static let tolerance = 1.0
    /// The two recompressed-JPEG files: their references come from a different JPEG decoder (libjpeg-turbo).
    static let recompressedJPEGTolerance = 6.0
    static let recompressedJPEGs: Set<String> = [
        "conformance-bench_oriented_brg.jxl", "jxlrs-3x3_jpeg_recompression.jxl",
    ]

    // Files stored losslessly in a colour space other than sRGB (bench_oriented_brg's channel-swapping profile,
    // spot's ProPhoto, patches_lossless, gray_alpha_lossless) come with an ICC profile that the colour stage
    // converts, so every still is compared with the converted `NAME.png` (before that stage existed, these four
    // were 22.7, 12.2, 0.50 and 0.0 away from it).

    static let stills: [String] = [
        "conformance-alpha_nonpremultiplied.jxl", "conformance-alpha_triangles.jxl",
        "conformance-bench_oriented_brg.jxl", "conformance-blendmodes.jxl", "conformance-delta_palette.jxl",
        "conformance-grayscale.jxl", "conformance-patches_lossless.jxl", "conformance-spot.jxl",
        "conformance-sunset_logo.jxl", "conformance-upsampling.jxl", "gen-kodim03-lossless.jxl",
        "gen-kodim05-lossy-d1.jxl", "gen-kodim12-lossless-alpha.jxl", "gen-kodim12-lossy-alpha.jxl",
        "jxlrs-3x3_jpeg_recompression.jxl", "jxlrs-3x3a_srgb_lossy.jxl", "jxlrs-dice.jxl",
        "jxlrs-gray_alpha_lossless.jxl", "jxlrs-lossy_with_icc.jxl", "jxlrs-orientation2_flip_horizontal.jxl",
        "jxlrs-orientation6_rotate_90_cw.jxl", "jxlrs-orientation8_rotate_90_ccw.jxl", "jxlrs-squeeze_alpha.jxl",
        "jxlrs-with_preview.jxl",
    ]

    /// (file, frames, duration of each in ms, loop count): from `reference/NAME.json`.
    static let animations: [(file: String, frames: Int, durations: [Int], loopCount: Int)] = [
        ("conformance-animation_icos4d.jxl", 48, Array(repeating: 50, count: 48), 0),
        ("jxlrs-cropped_traffic_light.jxl", 4, [3000, 1000, 3000, 1000], 0),
        // cjxl 0.7 dropped the APNG's loop count: the file itself says "forever" (corpus README).
        ("gen-anim-4frames-loop2.jxl", 4, [250, 250, 250, 250], 0),
    ]

    @Test func listsCoverEveryCorpusFile() throws {
        let onDisk = try corpusFiles("jxl", ext: "jxl").map(\.lastPathComponent)
        #expect(Set(onDisk) == Set(Self.stills).union(Self.animations.map(\.file)))
    }

    @Test(arguments: stills)
    func stillMatchesItsReference(_ name: String) throws {
        // Given a corpus file and its reference picture
        let data = try Data(contentsOf: corpusURL("jxl").appendingPathComponent(name))
        let reference = try decodeReferencePNG(corpusURL("jxl/reference").appendingPathComponent(name + ".png"))

        // When decoded with the default options
        let container = try JPEGXLDecoder().decode(data, options: DecodingOptions())

        // Then one frame of the reference's size (orientation applied), within the tolerance
        #expect(container.format == .jpegXL)
        #expect(container.frames.count == 1)
        #expect(container.orientation == .up)
        #expect(container.image.size == reference.size)
        let error = meanAbsoluteError(
            container.image.with(transparentColourZeroed: true), reference.with(transparentColourZeroed: true))
        let tolerance = Self.recompressedJPEGs.contains(name) ? Self.recompressedJPEGTolerance : Self.tolerance
        #expect(error.mean <= tolerance, "\(name): mean \(error.mean), max \(error.max)")
        print("jxl-conformance \(name) mean=\(error.mean) max=\(error.max)")
    }

    @Test(arguments: animations.indices)
    func animationMatchesItsReferenceFrames(_ index: Int) throws {
        // Given an animated corpus file
        let expected = Self.animations[index]
        let data = try Data(contentsOf: corpusURL("jxl").appendingPathComponent(expected.file))

        // When decoded
        let container = try JPEGXLDecoder().decode(data, options: DecodingOptions())

        // Then every displayed frame, its duration and the loop count match the references
        #expect(container.frames.count == expected.frames)
        #expect(container.frames.map { milliseconds($0.duration) } == expected.durations)
        #expect(container.loopCount == expected.loopCount)
        var worst = 0.0
        for (number, frame) in container.frames.enumerated() {
            let reference = try decodeReferencePNG(
                corpusURL("jxl/reference").appendingPathComponent(
                    "\(expected.file).frame\(String(format: "%03d", number)).png"))
            #expect(frame.buffer.size == reference.size)
            let error = meanAbsoluteError(
                frame.buffer.with(transparentColourZeroed: true), reference.with(transparentColourZeroed: true))
            worst = max(worst, error.mean)
            #expect(error.mean <= Self.tolerance, "\(expected.file) frame \(number): mean \(error.mean)")
        }
        print("jxl-conformance \(expected.file) worst-frame mean=\(worst)")
    }
}
