import CWebP
import Foundation
import ImagoCodecs
import ImagoCore
import Testing

/// Animations over ``DecodingOptions/animationMemoryBudget`` are decoded on demand: every frame, played in order
/// or after seeks, equals the up-front decode of the same file.
@Suite struct OnDemandAnimationTests {
    /// An animated WebP of `frames` frames of `width`×`height`: a Kodak photo (scaled to fill) with a half-
    /// transparent square moving over it, so that frames are sub-rectangles blended over earlier ones.
    static func animatedWebP(width: Int, height: Int, frames: Int, lossless: Bool = false) throws -> Data {
        let photo = try PNGDecoder().decode(corpusData("kodak/05.png"), options: DecodingOptions()).image
            .convertedToRGBA().resampled(to: PixelSize(width: width, height: height))
        var encoderOptions = WebPAnimEncoderOptions()
        guard WebPAnimEncoderOptionsInit(&encoderOptions) != 0 else { throw TestFailure("options") }
        encoderOptions.kmax = 0  // no forced key frames: sub-rectangles after the first frame
        encoderOptions.anim_params.loop_count = 0
        guard let encoder = WebPAnimEncoderNew(Int32(width), Int32(height), &encoderOptions) else {
            throw TestFailure("encoder")
        }
        defer { WebPAnimEncoderDelete(encoder) }
        var config = WebPConfig()
        guard WebPConfigInit(&config) != 0 else { throw TestFailure("config") }
        config.lossless = lossless ? 1 : 0
        config.quality = lossless ? 10 : 60
        config.method = 0
        let side = max(8, min(width, height) / 5)
        var timestamp: Int32 = 0
        for index in 0..<frames {
            var frame = photo
            let x0 = (index * 7) % max(1, width - side)
            let y0 = (index * 3) % max(1, height - side)
            frame.withUnsafeMutableBytes { bytes in
                for y in y0..<(y0 + side) {
                    for x in x0..<(x0 + side) {
                        let i = (y * width + x) * 4
                        bytes[i] = UInt8((index * 37) & 255)
                        bytes[i + 3] = 128
                    }
                }
            }
            var picture = WebPPicture()
            guard WebPPictureInit(&picture) != 0 else { throw TestFailure("picture") }
            picture.use_argb = 1
            picture.width = Int32(width)
            picture.height = Int32(height)
            defer { WebPPictureFree(&picture) }
            let imported = frame.withUnsafeBytes {
                WebPPictureImportRGBA(&picture, $0.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(width * 4))
            }
            guard imported != 0, WebPAnimEncoderAdd(encoder, &picture, timestamp, &config) != 0 else {
                throw TestFailure("frame \(index)")
            }
            timestamp += Int32(20 + index % 3 * 10)
        }
        guard WebPAnimEncoderAdd(encoder, nil, timestamp, nil) != 0 else { throw TestFailure("end") }
        var output = WebPData()
        defer { WebPDataClear(&output) }
        guard WebPAnimEncoderAssemble(encoder, &output) != 0, let bytes = output.bytes else {
            throw TestFailure("assemble")
        }
        return Data(bytes: bytes, count: output.size)
    }

    struct TestFailure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    static func options(budget: Int, target: PixelSize? = nil) -> DecodingOptions {
        var options = DecodingOptions(targetSize: target)
        options.animationMemoryBudget = budget
        return options
    }

    @Test(arguments: [nil, PixelSize(width: 40, height: 40)])
    func framesOnDemandEqualTheUpFrontDecodeInOrderAndAfterSeeks(_ target: PixelSize?) throws {
        // Given a 40-frame animated WebP decoded up front and on demand
        let data = try Self.animatedWebP(width: 96, height: 64, frames: 40)
        let decoder = ImageDecoderRegistry(ImagoCodecs.decoders)
        let upFront = try decoder.decode(data, options: Self.options(budget: .max, target: target))
        let onDemand = try decoder.decode(data, options: Self.options(budget: 1, target: target))
        #expect(upFront.frameSource == nil && upFront.frames.count == 40)
        #expect(onDemand.frameSource != nil && onDemand.frames.count == 1 && onDemand.frameCount == 40)
        #expect(onDemand.isAnimated && onDemand.totalDuration == upFront.totalDuration)
        #expect(onDemand.image == upFront.image)
        // When every frame is played in order, Then each equals the up-front one (pixels and duration)
        for index in 0..<40 {
            let frame = try onDemand.frame(at: index)
            #expect(frame.buffer == upFront.frames[index].buffer, "frame \(index)")
            #expect(frame.duration == upFront.frames[index].duration)
        }
        // And after seeks backwards, forwards and repeats
        for index in [39, 0, 20, 19, 5, 38, 38, 1, 2, 30] {
            #expect(try onDemand.frame(at: index).buffer == upFront.frames[index].buffer, "seek to \(index)")
        }
        // And at full size the on-demand container costs the file, two canvases and two frames, not forty frames
        if target == nil { #expect(onDemand.cost < upFront.cost / 4) }
        #expect(throws: CodecError.self) { try onDemand.frame(at: 40) }
    }

    @Test func processorsApplyLazilyToEveryFrame() throws {
        let data = try Self.animatedWebP(width: 96, height: 64, frames: 12)
        let decoder = ImageDecoderRegistry(ImagoCodecs.decoders)
        let upFront = try decoder.decode(data, options: Self.options(budget: .max))
        let onDemand = try decoder.decode(data, options: Self.options(budget: 1))
        // When a processor is applied to the on-demand container
        let small = PixelSize(width: 30, height: 20)
        let processed = try onDemand.mapFramesLazily { try $0.resampled(to: small) }
        // Then every frame it produces is processed, as the up-front frames are
        #expect(processed.frameCount == 12 && processed.image.size == small)
        for index in [0, 5, 11, 3] {
            #expect(try processed.frame(at: index).buffer == upFront.frames[index].buffer.resampled(to: small))
        }
    }
}
