import Foundation
import ImagoCodecs
import ImagoCore
import Testing

/// Every WebP in the corpus against its PNG reference (image-rs/image-webp's references, themselves produced
/// with libwebp's `dwebp`).
@Suite struct WebPDecoderCorpusTests {
    /// Lossy decoders differ slightly (upsampling, rounding): mean absolute error per channel must stay below this.
    static let lossyTolerance = 1.0

    static let stills: [String] = [
        "gallery1/1", "gallery1/2", "gallery1/3", "gallery1/4", "gallery1/5",
        "gallery2/1_webp_a", "gallery2/1_webp_ll", "gallery2/2_webp_a", "gallery2/2_webp_ll", "gallery2/3_webp_a",
        "gallery2/3_webp_ll", "gallery2/4_webp_a", "gallery2/4_webp_ll", "gallery2/5_webp_a", "gallery2/5_webp_ll",
        "regression/color_index", "regression/dark", "regression/lossless_indexed_1bit_palette",
        "regression/lossless_indexed_2bit_palette", "regression/lossless_indexed_4bit_palette", "regression/tiny",
    ]

    @Test func corpusListCoversEveryStillImage() throws {
        let onDisk = try ["gallery1", "gallery2", "regression"].flatMap { folder in
            try corpusFiles("webp/images/\(folder)", ext: "webp").map {
                "\(folder)/\($0.deletingPathExtension().lastPathComponent)"
            }
        }
        #expect(Set(onDisk) == Set(Self.stills))
    }

    @Test(arguments: stills)
    func stillImageMatchesItsReference(_ name: String) throws {
        // Given a corpus WebP and its reference PNG
        let data = try Data(contentsOf: corpusURL("webp/images").appendingPathComponent("\(name).webp"))
        let reference = try decodeReferencePNG(
            corpusURL("webp/reference").appendingPathComponent("\(name).png"))

        // When decoded
        let container = try WebPDecoder().decode(data, options: DecodingOptions())

        // Then it is a single frame of the reference's size, within the tolerance
        #expect(container.format == .webp)
        #expect(container.frames.count == 1)
        #expect(container.image.size == reference.size)
        let error = meanAbsoluteError(
            container.image.with(transparentColourZeroed: true), reference.with(transparentColourZeroed: true))
        #expect(error.mean <= Self.lossyTolerance, "\(name): mean \(error.mean), max \(error.max)")
        print("webp-conformance \(name) mean=\(error.mean) max=\(error.max)")
    }

    @Test(arguments: [("random_lossless", 3, 100), ("random_lossy", 4, 150)])
    func animationMatchesItsReferenceFrames(_ name: String, frameCount: Int, durationMilliseconds: Int) throws {
        let data = try Data(contentsOf: corpusURL("webp/images/animated").appendingPathComponent("\(name).webp"))
        let container = try WebPDecoder().decode(data, options: DecodingOptions())
        #expect(container.frames.count == frameCount)
        #expect(container.loopCount == 0)
        #expect(container.frames.allSatisfy { milliseconds($0.duration) == durationMilliseconds })
        for (index, frame) in container.frames.enumerated() {
            let reference = try decodeReferencePNG(
                corpusURL("webp/reference/animated").appendingPathComponent("\(name)-\(index + 1).png"))
            let error = meanAbsoluteError(frame.buffer, reference)
            #expect(error.mean <= Self.lossyTolerance, "\(name) frame \(index): mean \(error.mean)")
            print("webp-conformance \(name)-\(index + 1) mean=\(error.mean) max=\(error.max)")
        }
    }

    @Test func firstFrameOnlyDecodesOneAnimationFrame() throws {
        let data = try Data(
            contentsOf: corpusURL("webp/images/animated").appendingPathComponent("random_lossy.webp"))
        let container = try WebPDecoder().decode(data, options: DecodingOptions(decodesFirstFrameOnly: true))
        #expect(container.frames.count == 1)
        #expect(container.image.size == PixelSize(width: 99, height: 87))
    }

    @Test func targetSizeScalesWhileDecodingCloseToAResampledReference() throws {
        // Given a 1280x720 lossy photo and a 320x320 target
        let data = try Data(contentsOf: corpusURL("webp/images/gallery1").appendingPathComponent("3.webp"))
        let reference = try decodeReferencePNG(
            corpusURL("webp/reference/gallery1").appendingPathComponent("3.png"))

        // When decoded with a target size
        let container = try WebPDecoder().decode(
            data, options: DecodingOptions(targetSize: PixelSize(width: 320, height: 320)))

        // Then it fits, keeps the aspect ratio and looks like the reference shrunk the same way
        #expect(container.image.size == PixelSize(width: 320, height: 180))
        #expect(container.originalSize == PixelSize(width: 1280, height: 720))
        let shrunk = try reference.resampled(to: PixelSize(width: 320, height: 180))
        let error = meanAbsoluteError(container.image, shrunk)
        #expect(error.mean <= 3, "mean \(error.mean)")
    }

    @Test func targetSizeWithAlphaIsCloseToAPremultipliedResample() throws {
        // Given a 400x301 lossy image with alpha, decoded to fit 100x100
        let data = try Data(
            contentsOf: corpusURL("webp/images/gallery2").appendingPathComponent("1_webp_a.webp"))
        let reference = try decodeReferencePNG(
            corpusURL("webp/reference/gallery2").appendingPathComponent("1_webp_a.png"))
        let image = try WebPDecoder().decode(
            data, options: DecodingOptions(targetSize: PixelSize(width: 100, height: 100))
        ).image

        // Then libwebp's scaling agrees with Imago's own alpha-correct resampler
        #expect(image.size == PixelSize(width: 100, height: 75))
        let shrunk = try reference.resampled(to: image.size)
        let error = meanAbsoluteError(
            image.with(transparentColourZeroed: true), shrunk.with(transparentColourZeroed: true))
        #expect(error.mean <= 3, "mean \(error.mean), max \(error.max)")
        print("webp-scaled-alpha mean=\(error.mean) max=\(error.max)")
    }

    @Test func targetSizeDownsamplesAnimationFrames() throws {
        let data = try Data(
            contentsOf: corpusURL("webp/images/animated").appendingPathComponent("random_lossless.webp"))
        let container = try WebPDecoder().decode(
            data, options: DecodingOptions(targetSize: PixelSize(width: 32, height: 32)))
        #expect(container.frames.count == 3)
        // 64x63 halved: 31.5 rounds to 32
        #expect(container.frames.allSatisfy { $0.buffer.size == PixelSize(width: 32, height: 32) })
    }
}

extension PixelBuffer {
    /// A copy with the colour of fully transparent pixels zeroed (invisible; encoders may discard it).
    func with(transparentColourZeroed: Bool) -> PixelBuffer {
        guard transparentColourZeroed, format == .rgba8 else { return self }
        return
            (try? PixelBuffer(
                width: width, height: height, format: .rgba8, bytes: ImagoCodecsTests.transparentColourZeroed(bytes)))
            ?? self
    }
}
