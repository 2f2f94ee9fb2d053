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

/// A processor that records the size of the image it was given, with a decode target reached only by a reduced
/// decode (as a resize in linear light declares).
private struct RecordingInput: ImageProcessing {
    let seen: Locked<PixelSize?>
    var identifier: String { "test.recording-input" }
    var decodeTarget: DecodeTarget? {
        DecodeTarget(size: PixelSize(width: 100, height: 100), shrinksOnlyWhileDecoding: true)
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
}
