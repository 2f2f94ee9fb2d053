import Foundation
import ImagoCodecs
import ImagoCore
import ImagoTesting
import Testing

/// Animated WebP output (libwebpmux's WebPAnimEncoder): frames, durations and loop count survive a round trip,
/// and the pipeline stores a processed animation without losing frames.
@Suite struct WebPAnimatedEncoderTests {
    /// Four distinct opaque 40×30 frames with different durations.
    static func animation(loopCount: Int = 3) throws -> ImageContainer {
        let durations: [Duration] = [.milliseconds(100), .milliseconds(250), .milliseconds(70), .seconds(1)]
        let frames = try durations.enumerated().map { index, duration in
            let buffer = try PixelBuffer(width: 40, height: 30, format: .rgba8) { out in
                for y in 0..<30 {
                    for x in 0..<40 {
                        let i = (y * 40 + x) * 4
                        out[i] = UInt8((x * 6 + index * 60) & 0xFF)
                        out[i + 1] = UInt8(y * 8)
                        out[i + 2] = (x + y + index) % 7 == 0 ? 255 : 30
                        out[i + 3] = 255
                    }
                }
            }
            return ImageFrame(buffer: buffer, duration: duration)
        }
        return ImageContainer(frames: frames, format: .gif, loopCount: loopCount)
    }

    @Test func losslessAnimationRoundTripsFramesDurationsAndLoopCount() throws {
        let animation = try Self.animation()
        let data = try WebPEncoder().encode(animation, options: EncodingOptions(isLossless: true))
        #expect(ImageFormat(sniffing: data) == .webp)

        let decoded = try WebPDecoder().decode(data, options: DecodingOptions())

        #expect(decoded.frames.count == 4)
        #expect(decoded.loopCount == 3)
        #expect(decoded.frames.map { milliseconds($0.duration) } == [100, 250, 70, 1000])
        for (index, frame) in decoded.frames.enumerated() {
            #expect(frame.buffer == animation.frames[index].buffer, "frame \(index)")
        }
    }

    @Test func lossyAnimationKeepsFramesAndDurations() throws {
        // Photos (synthetic patterns are a poor test of lossy WebP): four Kodak images at 96×64
        let frames = try ["01", "02", "03", "04"].enumerated().map { index, name in
            let photo = try decodeReferencePNG(corpusURL("kodak").appendingPathComponent("\(name).png"))
            return ImageFrame(
                buffer: try photo.resampled(to: PixelSize(width: 96, height: 64)),
                duration: try Self.animation().frames[index].duration)
        }
        let animation = ImageContainer(frames: frames, loopCount: 0)
        let registry = ImageEncoderRegistry(ImagoCodecs.encoders)
        #expect(registry.animatedFormat == .webp)
        let data = try registry.encode(animation, as: .webp, options: EncodingOptions(quality: 0.9))
        let decoded = try WebPDecoder().decode(data, options: DecodingOptions())
        #expect(decoded.frames.count == 4)
        #expect(decoded.loopCount == 0)
        #expect(decoded.frames.map { milliseconds($0.duration) } == [100, 250, 70, 1000])
        for (index, frame) in decoded.frames.enumerated() {
            #expect(meanAbsoluteError(frame.buffer, animation.frames[index].buffer).mean < 3, "frame \(index)")
        }
    }

    @Test func stillEncodersWriteTheFirstFrame() throws {
        let animation = try Self.animation()
        let png = try PNGEncoder().encode(animation, options: EncodingOptions())
        #expect(try PNGDecoder().decode(png, options: DecodingOptions()).image == animation.image)
        #expect(!PNGEncoder().encodesAnimation)
    }

    @Test(.timeLimit(.minutes(1))) func pipelineStoresAProcessedAnimationWithEveryFrame() async throws {
        // Given an animated APNG, a resize, and a pipeline that stores processed images
        let data = try corpusData("apng/gen-dispose-none-blend-over.png")
        let dataCache = MockDataCache()
        var configuration = ImagePipeline.Configuration(dataLoader: MockDataLoader())
        configuration.decoders = ImageDecoderRegistry(ImagoCodecs.decoders)
        configuration.encoders = ImageEncoderRegistry(ImagoCodecs.encoders)
        configuration.dataCache = dataCache
        configuration.dataCachePolicy = .storeAll
        let pipeline = ImagePipeline(configuration: configuration)
        let request = ImageRequest(source: .data(id: "anim.png", data), processors: [.resize(width: 48, height: 48)])

        // When
        let image = try await pipeline.image(for: request)
        await pipeline.waitForPendingCacheWrites()

        // Then the processed entry is an animated WebP with every frame and duration
        #expect(image.frames.count == 4)
        let stored = dataCache.keys.compactMap { dataCache.entry(for: $0)?.data }
            .filter { ImageFormat(sniffing: $0) == .webp }
        #expect(stored.count == 1)
        let reread = try WebPDecoder().decode(try #require(stored.first), options: DecodingOptions())
        #expect(reread.frames.count == 4)
        #expect(reread.frames.map { milliseconds($0.duration) } == image.frames.map { milliseconds($0.duration) })
        #expect(reread.loopCount == 3)
    }
}
