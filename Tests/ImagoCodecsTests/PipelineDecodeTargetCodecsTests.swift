import Foundation
import Imago
import Testing

extension PipelineCodecsTests {
    @Test(
        "Issue 23 item 1: a resize without targetSize decodes a large JPEG downsampled, same size and pixels as full",
        arguments: [ImageProcessors.Resize.Mode.aspectFit, .aspectFill, .exact, .aspectFillWithoutCrop])
    func resizeDerivesDecodeTargetWithRealJPEG(mode: ImageProcessors.Resize.Mode) async throws {
        // Given a large JPEG and today's result: a full decode, then the resize
        let data = try corpusData("formats/TestImageLarge.jpg")
        let resize = ImageProcessors.Resize(size: PixelSize(width: 256, height: 256), mode: mode)
        let full = try JPEGDecoder().decode(data, options: DecodingOptions())
        let expected = try resize.process(full.image)

        // When the pipeline runs the resize with no targetSize
        let pipeline = ImagePipeline(configuration: try .withDefaults(diskCacheDirectory: nil))
        let image = try await pipeline.image(
            for: ImageRequest(source: .data(id: "large.jpg", data), processors: [resize]))

        // Then the size is the same and the pixels differ only by resampling
        #expect(image.image.size == expected.size)
        let error = try #require(meanChannelError(image.image, expected))
        #expect(error < 4.0, "mean channel error \(error)")
        // and it is not blurrier beyond resampling: its detail (mean difference between neighbours) is within
        // 15 % of today's (measured: fit, fill and fill-without-crop within 10 %; exact 13 % lower, since the
        // DCT-scaled 384x256 is then squeezed to 256x256 in one axis only)
        let detail = sharpness(image.image)
        let expectedDetail = sharpness(expected)
        #expect(detail >= 0.85 * expectedDetail, "detail \(detail) against \(expectedDetail)")
        // and the decoder was given the target: a decode with it matches, and is not the full-size image
        var options = DecodingOptions(targetSize: resize.size)
        options.targetMode = try #require(resize.decodeTarget).mode
        let decoded = try JPEGDecoder().decode(data, options: options)
        #expect(decoded.image.width < full.image.width)
        #expect(decoded.image.width >= min(expected.width, full.image.width))
        #expect(decoded.image.height >= min(expected.height, full.image.height))
    }
}

/// The mean absolute difference of green between horizontal neighbours: a measure of detail (blur lowers it).
private func sharpness(_ image: PixelBuffer) -> Double {
    var total = 0
    for y in 0..<image.height {
        for x in 1..<image.width { total += abs(Int(image[pixel: x, y].g) - Int(image[pixel: x - 1, y].g)) }
    }
    return Double(total) / Double(image.height * max(1, image.width - 1))
}

/// A processor that records the size of the image it was given, with a 100 × 100 decode target reached as
/// `shrinking` says (by default only by a reduced decode, as a resize in linear light declares).
private struct RecordingInput: ImageProcessing {
    let seen: Locked<PixelSize?>
    var shrinking = DecodeTarget.Shrinking.reducedDecodeOnly
    var identifier: String { "test.recording-input?\(shrinking)" }
    var decodeTarget: DecodeTarget? {
        DecodeTarget(size: PixelSize(width: 100, height: 100), shrinking: shrinking)
    }
    func process(_ image: PixelBuffer) throws -> PixelBuffer {
        seen.withLock { $0 = image.size }
        return image
    }
}

@Suite struct ShrinkOnlyWhileDecodingTests {
    /// A target reached only by a reduced decode: a JPEG comes at the smallest DCT scale covering it, not
    /// area-averaged to the fitted size; a PNG (which cannot decode smaller) comes at full size.
    @Test func jpegsAreDCTScaledOnlyAndOtherFormatsDecodeWhole() async throws {
        let jpeg = try corpusData("formats/TestImageLarge.jpg")
        let full = try JPEGDecoder().decode(jpeg, options: DecodingOptions()).image.size
        var options = DecodingOptions(targetSize: PixelSize(width: 100, height: 100))
        let fitted = try JPEGDecoder().decode(jpeg, options: options).image.size
        options.shrinksOnlyWhileDecoding = true
        let dct = try JPEGDecoder().decode(jpeg, options: options).image.size
        #expect(fitted.width == 100 || fitted.height == 100)
        #expect(dct.width >= fitted.width && dct.height >= fitted.height && dct.width < full.width)
        // a DCT scale k/8 of the full size (libjpeg rounds up)
        #expect(
            (1...7).contains { k in dct.width == (full.width * k + 7) / 8 && dct.height == (full.height * k + 7) / 8 },
            "\(dct) of \(full)")

        let pipeline = ImagePipeline(configuration: try .withDefaults(diskCacheDirectory: nil))
        for (name, data, expected) in [
            ("large.jpg", jpeg, dct),
            ("kodak.png", try corpusData("kodak/01.png"), PixelSize(width: 768, height: 512)),
        ] {
            let seen = Locked<PixelSize?>(nil)
            _ = try await pipeline.image(
                for: ImageRequest(source: .data(id: name, data), processors: [RecordingInput(seen: seen)]))
            #expect(seen.value == expected, "\(name)")
        }
        #expect(
            DecodeTarget(size: PixelSize(width: 5, height: 5), shrinksOnlyWhileDecoding: true).description
                == "fit=5x5+dct")
    }

    /// imgproxy's `IMGPROXY_DISABLE_SHRINK_ON_LOAD` (``DecodeTarget/Shrinking-swift.enum/never``): JPEGs and PNGs
    /// come at full size; an SVG is still drawn at the target, in linear light too.
    @Test(.enabled(if: SVGDecoder.isAvailable, "librsvg2-2 is not installed"))
    func withoutShrinkOnLoadOnlyVectorsAreDrawnSmaller() async throws {
        let jpeg = try corpusData("formats/TestImageLarge.jpg")
        let full = try JPEGDecoder().decode(jpeg, options: DecodingOptions()).image.size
        let svg = SVGDecoderTests.halves(width: 400, height: 200)
        let pipeline = ImagePipeline(configuration: try .withDefaults(diskCacheDirectory: nil))
        let cases: [(DecodeTarget.Shrinking, String, Data, PixelSize)] = [
            (.never, "large.jpg", jpeg, full),
            (.never, "kodak.png", try corpusData("kodak/01.png"), PixelSize(width: 768, height: 512)),
            (.never, "halves.svg", svg, PixelSize(width: 100, height: 50)),
            (.reducedDecodeOnly, "halves.svg", svg, PixelSize(width: 100, height: 50)),
            (.any, "halves.svg", svg, PixelSize(width: 100, height: 50)),
        ]
        for (shrinking, name, data, expected) in cases {
            let seen = Locked<PixelSize?>(nil)
            _ = try await pipeline.image(
                for: ImageRequest(
                    source: .data(id: name, data), processors: [RecordingInput(seen: seen, shrinking: shrinking)]))
            #expect(seen.value == expected, "\(shrinking) \(name)")
        }
        let target = DecodeTarget(size: PixelSize(width: 5, height: 5), shrinking: .never)
        #expect(target.description == "fit=5x5+vector" && !target.shrinksOnlyWhileDecoding)
        #expect(target.applies(to: .svg) && !target.applies(to: .jpeg) && !target.applies(to: .webp))
        let dct = DecodeTarget(size: PixelSize(width: 5, height: 5), shrinking: .reducedDecodeOnly)
        #expect(dct.applies(to: .jpeg) && dct.applies(to: .svg) && !dct.applies(to: .png))
    }
}
