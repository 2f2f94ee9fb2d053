import Foundation
import ImagoCodecs
import ImagoCore
import Testing

@Suite struct JPEGDownsamplingTests {
    let decoder = JPEGDecoder()

    @Test func decodesA12MegapixelPhotoToTheAspectFitSizeAndKeepsTheOriginalSize() throws {
        // Given the 4032x3024 TestJFIF.jpg
        let data = try corpusData("formats/TestJFIF.jpg")
        // When decoded to fit 256x256
        let container = try decoder.decode(
            data, options: DecodingOptions(targetSize: PixelSize(width: 256, height: 256)))
        // Then it is 256x192 (4:3 kept), and the container remembers 4032x3024
        #expect(container.image.size == PixelSize(width: 256, height: 192))
        #expect(container.originalSize == PixelSize(width: 4032, height: 3024))
        #expect(container.format == .jpeg)
        #expect(!container.isPreview)
    }

    @Test(arguments: [
        // 768x512 to 192x128: DCT-scaled by exactly 1/4, no resampling step
        (192, 1.0),
        // 768x512 to 256x171: DCT-scaled by 3/8 (288x192), then area-averaged
        (256, 4.0),
    ])
    func downsampledDecodeIsCloseToAFullDecodeAreaAveraged(target: Int, maximumError: Double) throws {
        // Given a Kodak photo encoded as JPEG
        let photo = try PNGDecoder().decode(corpusData("kodak/01.png"), options: DecodingOptions()).image
        let data = try JPEGEncoder().encode(photo, options: EncodingOptions(quality: 0.9))
        // When decoded to fit the target, and separately at full size then area-averaged to the same size
        let small = try decoder.decode(
            data, options: DecodingOptions(targetSize: PixelSize(width: target, height: target))
        ).image
        let reference = try decoder.decode(data, options: DecodingOptions()).image.resampled(to: small.size)
        // Then the sizes are the aspect fit and the pixels nearly agree
        #expect(small.size == PixelSize(width: target, height: (512 * target + 384) / 768))
        let mae = try #require(meanChannelError(small, reference))
        #expect(mae < maximumError, "mean absolute error \(mae)")
    }

    @Test func neverUpscales() throws {
        // Given an 80x60 JPEG and a target larger than it
        let data = try corpusData("formats/TestImage.jpg")
        let container = try decoder.decode(
            data, options: DecodingOptions(targetSize: PixelSize(width: 400, height: 400)))
        // Then it stays 80x60
        #expect(container.image.size == PixelSize(width: 80, height: 60))
        #expect(container.originalSize == PixelSize(width: 80, height: 60))
    }

    @Test func targetSizeAppliesToTheDisplayedOrientation() throws {
        // Given rgb.jpg (500x333 stored) tagged orientation 6 (displayed 333x500)
        let data = TestImages.jpeg(try corpusData("jpeg/reference/rgb.jpg"), withOrientation: 6)
        // When fitted to 100x100
        let container = try decoder.decode(
            data, options: DecodingOptions(targetSize: PixelSize(width: 100, height: 100)))
        // Then the displayed image is portrait 67x100 and the original size is the displayed 333x500
        #expect(container.image.size == PixelSize(width: 67, height: 100))
        #expect(container.originalSize == PixelSize(width: 333, height: 500))
        #expect(container.orientation == .up)
    }
}

@Suite struct JPEGOrientationTests {
    let decoder = JPEGDecoder()

    @Test func appliesExifOrientationSixByRotatingClockwise() throws {
        // Given an 80x60 JPEG, and the same bytes with an APP1 Exif segment saying orientation 6
        let plainData = try corpusData("formats/TestImage.jpg")
        let taggedData = TestImages.jpeg(plainData, withOrientation: 6)
        // When both are decoded
        let plain = try decoder.decode(plainData, options: DecodingOptions())
        let tagged = try decoder.decode(taggedData, options: DecodingOptions())
        // Then the tagged one is the plain one turned upright: 60x80, pixel for pixel, orientation consumed
        #expect(plain.orientation == .up)
        #expect(tagged.image.size == PixelSize(width: 60, height: 80))
        #expect(tagged.image == plain.image.oriented(.right))
        #expect(tagged.orientation == .up)
        #expect(tagged.originalSize == PixelSize(width: 60, height: 80))
    }

    @Test func reportsOrientationWithoutApplyingItWhenAsked() throws {
        let plainData = try corpusData("formats/TestImage.jpg")
        let tagged = try decoder.decode(
            TestImages.jpeg(plainData, withOrientation: 8), options: DecodingOptions(appliesOrientation: false))
        let plain = try decoder.decode(plainData, options: DecodingOptions())
        #expect(tagged.orientation == .left)
        #expect(tagged.image == plain.image)
        #expect(tagged.originalSize == PixelSize(width: 80, height: 60))
    }
}

@Suite struct JPEGLimitsAndTruncationTests {
    let decoder = JPEGDecoder()

    @Test func hugeDeclaredDimensionsThrowTooManyPixelsBeforeAllocating() throws {
        // Given a real JPEG whose SOF0 is patched to declare 60000x60000 (3.6 gigapixels, 14 GB as RGBA)
        var data = try corpusData("formats/TestImage.jpg")
        let sof = try #require(data.firstRange(of: Data([0xFF, 0xC0]))).lowerBound
        data.replaceSubrange((sof + 5)..<(sof + 9), with: [0xEA, 0x60, 0xEA, 0x60])
        // When decoded, then it fails from the header alone
        #expect(throws: CodecError.tooManyPixels(width: 60000, height: 60000, limit: 100_000_000)) {
            try decoder.decode(data, options: DecodingOptions())
        }
        // and a lower limit is honoured too
        #expect(throws: CodecError.tooManyPixels(width: 80, height: 60, limit: 1000)) {
            try decoder.decode(try corpusData("formats/TestImage.jpg"), options: DecodingOptions(pixelLimit: 1000))
        }
    }

    @Test func truncatedDataThrowsUnlessPartialDataIsAllowed() throws {
        // Given rgb.jpg cut to 60% of its bytes
        let full = try corpusData("jpeg/reference/rgb.jpg")
        let cut = full.prefix(full.count * 6 / 10)
        // When decoded strictly, then it is reported as truncated
        #expect(throws: CodecError.truncated(format: .jpeg)) { try decoder.decode(cut, options: DecodingOptions()) }
        // When partial data is allowed, then the full-size image is a preview whose top rows match the full decode
        let preview = try decoder.decode(cut, options: DecodingOptions(allowsPartialData: true))
        let complete = try decoder.decode(full, options: DecodingOptions())
        #expect(preview.isPreview)
        #expect(!complete.isPreview)
        #expect(preview.image.size == complete.image.size)
        let top = 0..<(preview.image.height / 4)
        #expect(
            top.allSatisfy { y in
                (0..<preview.image.width).allSatisfy { preview.image[pixel: $0, y] == complete.image[pixel: $0, y] }
            })
        #expect(preview.image != complete.image)
    }

    @Test func emptyAndNonJPEGDataFailWithClearErrors() throws {
        #expect(throws: CodecError.empty) { try decoder.decode(Data(), options: DecodingOptions()) }
        #expect(throws: CodecError.self) {
            try decoder.decode(Data([0xFF, 0xD8, 0xFF, 0xE0, 0, 0]), options: DecodingOptions())
        }
    }
}

@Suite struct CodecConcurrencyTests {
    @Test func oneDecoderServesConcurrentDecodesWithIdenticalResults() async throws {
        // Given one JPEG and one PNG decoder and a photo in both formats
        let png = try corpusData("kodak/01.png")
        let photo = try PNGDecoder().decode(png, options: DecodingOptions()).image
        let jpeg = try JPEGEncoder().encode(photo, options: EncodingOptions(quality: 0.8))
        let jpegDecoder = JPEGDecoder()
        let pngDecoder = PNGDecoder()
        let thumbnail = DecodingOptions(targetSize: PixelSize(width: 128, height: 128))
        let expectedJPEG = try jpegDecoder.decode(jpeg, options: thumbnail).image
        let expectedPNG = try pngDecoder.decode(png, options: thumbnail).image
        // When eight tasks decode both at once
        let results = try await withThrowingTaskGroup(of: (PixelBuffer, PixelBuffer).self) { group in
            for _ in 0..<8 {
                group.addTask {
                    (
                        try jpegDecoder.decode(jpeg, options: thumbnail).image,
                        try pngDecoder.decode(png, options: thumbnail).image
                    )
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        // Then every result is the same as the single-threaded one
        #expect(results.count == 8)
        #expect(results.allSatisfy { $0.0 == expectedJPEG && $0.1 == expectedPNG })
    }
}
