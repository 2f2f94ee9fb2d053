import Foundation
import ImagoCore
import Testing

@testable import ImagoCodecs

/// JPEGXLDecoder honours every DecodingOptions field: budgets before allocation, first frame only, target size,
/// orientation, partial data; and reports the bit depth and the colour of its samples.
@Suite struct JPEGXLDecoderOptionsTests {
    static func file(_ name: String) throws -> Data {
        try Data(contentsOf: corpusURL("jxl").appendingPathComponent(name))
    }

    static func reference(_ name: String) throws -> PixelBuffer {
        try decodeReferencePNG(corpusURL("jxl/reference").appendingPathComponent(name))
    }

    @Test func pixelLimitIsCheckedFromTheBasicInfo() throws {
        #expect(throws: CodecError.tooManyPixels(width: 384, height: 256, limit: 98_303)) {
            try JPEGXLDecoder().decode(
                try Self.file("gen-kodim05-lossy-d1.jxl"), options: DecodingOptions(pixelLimit: 98_303))
        }
    }

    @Test func frameLimitStopsAnAnimationAsFramesArrive() throws {
        #expect(throws: CodecError.tooManyFrames(limit: 10)) {
            try JPEGXLDecoder().decode(
                try Self.file("conformance-animation_icos4d.jxl"), options: DecodingOptions(frameLimit: 10))
        }
    }

    @Test func animationByteAndWorkBudgetsHold() throws {
        let data = try Self.file("conformance-animation_icos4d.jxl")
        // 128×128×4 = 64 KiB a frame: 20 frames fit in 1.3 MB, 48 do not
        #expect(throws: CodecError.animationTooLarge(limit: 1_300_000)) {
            try JPEGXLDecoder().decode(data, options: DecodingOptions(animationByteLimit: 1_300_000))
        }
        #expect(throws: CodecError.animationTooMuchWork(limit: 16_384 * 30)) {
            try JPEGXLDecoder().decode(
                data,
                options: DecodingOptions(
                    targetSize: PixelSize(width: 16, height: 16), animationWorkLimit: 16_384 * 30))
        }
    }

    @Test func firstFrameOnly() throws {
        let container = try JPEGXLDecoder().decode(
            try Self.file("jxlrs-cropped_traffic_light.jxl"), options: DecodingOptions(decodesFirstFrameOnly: true))
        #expect(container.frames.count == 1)
        #expect(milliseconds(container.frames[0].duration) == 3000)
        #expect(container.image == (try Self.reference("jxlrs-cropped_traffic_light.jxl.frame000.png")))
    }

    @Test func targetSizeFitsAfterDecoding() throws {
        let container = try JPEGXLDecoder().decode(
            try Self.file("gen-kodim03-lossless.jxl"),
            options: DecodingOptions(targetSize: PixelSize(width: 96, height: 96)))
        #expect(container.image.size == PixelSize(width: 96, height: 64))
        #expect(container.originalSize == PixelSize(width: 384, height: 256))
        let shrunk = try Self.reference("gen-kodim03-lossless.jxl.png").resampled(to: container.image.size)
        #expect(meanAbsoluteError(container.image, shrunk).mean < 1.0)
    }

    @Test func orientationIsReportedWhenNotApplied() throws {
        // Given a file whose codestream says "rotate 90° clockwise"
        let data = try Self.file("jxlrs-orientation6_rotate_90_cw.jxl")

        // When decoded without applying the orientation
        let container = try JPEGXLDecoder().decode(data, options: DecodingOptions(appliesOrientation: false))

        // Then the stored pixels come back with the orientation to apply, which gives the reference
        #expect(container.orientation == .right)
        #expect(container.image.size == PixelSize(width: 100, height: 256))
        #expect(container.image.oriented(.right) == (try Self.reference("jxlrs-orientation6_rotate_90_cw.jxl.png")))
    }

    @Test func bitDepthIsTheFilesBitsPerSample() throws {
        let depths = try ["conformance-spot.jxl", "conformance-sunset_logo.jxl", "gen-kodim05-lossy-d1.jxl"].map {
            try JPEGXLDecoder().decode(try Self.file($0), options: DecodingOptions()).bitDepth
        }
        #expect(depths == [16, 10, 8])
    }

    @Test func colourOfTheSamplesIsReported() throws {
        var keep = DecodingOptions()
        keep.colorPolicy = .keep
        // ProPhoto stored losslessly: the samples keep that space, described by an ICC profile only
        let spot = try JPEGXLDecoder().decodeWithColour(
            try Self.file("conformance-spot.jxl"), options: DecodingOptions())
        #expect((spot.colour.iccProfile?.count ?? 0) > 100)
        #expect(spot.colour.cicp == nil)
        // XYB with a linear-grey profile: rendered as sRGB grey by libjxl (sRGB transfer, 13)
        let grey = try JPEGXLDecoder().decodeWithColour(
            try Self.file("conformance-grayscale.jxl"), options: DecodingOptions())
        // (sRGB code points: the profile libjxl would synthesise for them is left out, so nothing is converted or
        // kept)
        #expect(grey.colour.cicp?.transfer == 13)
        #expect(grey.colour.iccProfile == nil)
        // An sRGB lossy photo: sRGB primaries and transfer, and no synthesised profile to keep
        let photo = try JPEGXLDecoder().decodeWithColour(
            try Self.file("gen-kodim05-lossy-d1.jxl"), options: DecodingOptions())
        #expect(photo.colour.cicp == EmbeddedColour.CICP(primaries: 1, transfer: 13, matrix: 0, isFullRange: true))
        #expect(photo.colour.iccProfile == nil)
        #expect(try JPEGXLDecoder().decode(Self.file("gen-kodim05-lossy-d1.jxl"), options: keep).colorProfile == nil)
    }

    @Test(.timeLimit(.minutes(1)))
    func truncatedFileFailsUnlessPartialDataIsAllowed() throws {
        let full = try Self.file("gen-anim-4frames-loop2.jxl")
        let cut = Data(full.prefix(full.count * 6 / 10))
        #expect(throws: CodecError.truncated(format: .jpegXL)) {
            try JPEGXLDecoder().decode(cut, options: DecodingOptions())
        }
        // With partial data allowed, the complete frames come back as a preview, matching their references
        let partial = try JPEGXLDecoder().decode(cut, options: DecodingOptions(allowsPartialData: true))
        #expect(partial.isPreview)
        #expect((1..<4).contains(partial.frames.count))
        for (number, frame) in partial.frames.enumerated() {
            let reference = try Self.reference("gen-anim-4frames-loop2.jxl.frame00\(number).png")
            #expect(meanAbsoluteError(frame.buffer, reference).mean < 1.0)
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func premultipliedAlphaComesOutStraight() throws {
        // Given the conformance file stored with premultiplied alpha (its last byte cut: the corpus keeps only
        // the truncated copies), rendered as a preview
        let data = try Data(
            contentsOf: corpusURL("hostile-modern").appendingPathComponent(
                "truncated-conformance-alpha_premultiplied-last-byte-missing.jxl"))
        let container = try JPEGXLDecoder().decode(data, options: DecodingOptions(allowsPartialData: true))

        // Then some half-transparent pixel has a colour brighter than its alpha: impossible for premultiplied data
        let image = container.image
        var straightPixels = 0
        image.withUnsafeBytes { bytes in
            for pixel in stride(from: 0, to: bytes.count, by: 4) where bytes[pixel + 3] > 0 && bytes[pixel + 3] < 200 {
                if max(bytes[pixel], bytes[pixel + 1], bytes[pixel + 2]) > bytes[pixel + 3] { straightPixels += 1 }
            }
        }
        #expect(container.isPreview)
        #expect(straightPixels > 1000, "\(straightPixels)")
    }
}
