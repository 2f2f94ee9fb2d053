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

    /// An animated WebP assembled with libwebp's muxer, cheaply: a Kodak photo scaled to `width`×`height` as the
    /// first frame, then a 256×256 crop of another photo placed at a different spot in every later frame (two
    /// encodes in all, so a 300-frame full-HD file takes a second to make).
    static func muxedAnimatedWebP(width: Int, height: Int, frames: Int) throws -> Data {
        let background = try PNGDecoder().decode(corpusData("kodak/05.png"), options: DecodingOptions()).image
            .convertedToRGBA().resampled(to: PixelSize(width: width, height: height))
        let patch = try PNGDecoder().decode(corpusData("kodak/23.png"), options: DecodingOptions()).image
            .convertedToRGBA().resampled(to: PixelSize(width: 256, height: 256))
        let first = try WebPEncoder().encode(background, options: EncodingOptions(quality: 0.6))
        let small = try WebPEncoder().encode(patch, options: EncodingOptions(quality: 0.6))
        guard let mux = WebPMuxNew() else { throw TestFailure("mux") }
        defer { WebPMuxDelete(mux) }
        guard WebPMuxSetCanvasSize(mux, Int32(width), Int32(height)) == WEBP_MUX_OK else { throw TestFailure("size") }
        var parameters = WebPMuxAnimParams(bgcolor: 0, loop_count: 0)
        guard WebPMuxSetAnimationParams(mux, &parameters) == WEBP_MUX_OK else { throw TestFailure("params") }
        for index in 0..<frames {
            let bitstream = index == 0 ? first : small
            let status = bitstream.withUnsafeBytes { bytes -> WebPMuxError in
                var info = WebPMuxFrameInfo()
                info.bitstream = WebPData(
                    bytes: bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), size: bytes.count)
                info.x_offset = index == 0 ? 0 : Int32((index * 46) % (width - 256)) & ~1
                info.y_offset = index == 0 ? 0 : Int32((index * 26) % (height - 256)) & ~1
                info.duration = 40
                info.id = WEBP_CHUNK_ANMF
                info.dispose_method = WEBP_MUX_DISPOSE_NONE
                info.blend_method = WEBP_MUX_NO_BLEND
                return WebPMuxPushFrame(mux, &info, 1)
            }
            guard status == WEBP_MUX_OK else { throw TestFailure("frame \(index): \(status)") }
        }
        var output = WebPData()
        defer { WebPDataClear(&output) }
        guard WebPMuxAssemble(mux, &output) == WEBP_MUX_OK, let bytes = output.bytes else {
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

    @Test(.timeLimit(.minutes(3))) func imagoDecodeOfA300FrameFullHDWebPStaysUnder80MB() throws {
        // Given a 300-frame 1920×1080 animated WebP (2.4 GB of frames decoded up front)
        let tool = try #require(HugeImageScaleDownTests.imagoExecutable(), "build the imago executable first")
        let data = try Self.muxedAnimatedWebP(width: 1920, height: 1080, frames: 300)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("imago-anim-\(UUID().uuidString).webp")
        try data.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        // When `imago decode --json` reads it
        let run = try HugeImageScaleDownTests.runMeasured(tool, ["decode", "--json", file.path])
        // Then it reports all 300 frames within 80 MB of peak RSS
        #expect(run.status == 0 && run.output.contains("\"frames\":300"), "\(run.output)")
        #expect(run.peakRSSKB < 80_000, "peak RSS \(run.peakRSSKB) KB")
        print("imago decode --json of a 300-frame 1920x1080 WebP (\(data.count) bytes): peak RSS \(run.peakRSSKB) KB")
    }
}
