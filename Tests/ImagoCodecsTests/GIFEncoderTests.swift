import Foundation
import ImagoCodecs
import ImagoCore
import ImagoTesting
import Testing

/// GIF output (giflib): the corpus's GIFs survive a round trip pixel for pixel, photos are reduced to 256
/// colours with dithering, animations keep frames, durations, loop count and transparency, and frames hold only
/// what changed.
@Suite struct GIFEncoderTests {
    /// What one image descriptor of a GIF says, with its graphics control block.
    struct Descriptor: Equatable {
        var x: Int, y: Int, width: Int, height: Int
        var disposal: Int
        var transparentIndex: Int?
        var delay: Int
    }

    /// The image descriptors of `data`, read block by block (independently of giflib), and whether a NETSCAPE2.0
    /// block is present with its loop count.
    static func structure(of data: Data) throws -> (frames: [Descriptor], loop: Int?) {
        let bytes = [UInt8](data)
        #expect(bytes.starts(with: Array("GIF89a".utf8)))
        func u16(_ i: Int) -> Int { Int(bytes[i]) | Int(bytes[i + 1]) << 8 }
        var i = 13
        if bytes[10] & 0x80 != 0 { i += 3 << ((Int(bytes[10]) & 7) + 1) }
        var frames: [Descriptor] = []
        var loop: Int?
        var control: (disposal: Int, transparent: Int?, delay: Int) = (0, nil, 0)
        func skipSubBlocks() {
            while bytes[i] != 0 { i += Int(bytes[i]) + 1 }
            i += 1
        }
        while i < bytes.count {
            switch bytes[i] {
            case 0x21:
                let label = bytes[i + 1]
                if label == 0xF9 {
                    let flags = bytes[i + 3]
                    control = (Int(flags >> 2) & 7, flags & 1 != 0 ? Int(bytes[i + 6]) : nil, u16(i + 4))
                } else if label == 0xFF, Array(bytes[(i + 3)..<(i + 14)]) == Array("NETSCAPE2.0".utf8) {
                    loop = u16(i + 16)
                }
                i += 2
                skipSubBlocks()
            case 0x2C:
                frames.append(
                    Descriptor(
                        x: u16(i + 1), y: u16(i + 3), width: u16(i + 5), height: u16(i + 7), disposal: control.disposal,
                        transparentIndex: control.transparent, delay: control.delay))
                control = (0, nil, 0)
                let packed = bytes[i + 9]
                i += 10
                if packed & 0x80 != 0 { i += 3 << ((Int(packed) & 7) + 1) }
                i += 1  // LZW minimum code size
                skipSubBlocks()
            case 0x3B:
                return (frames, loop)
            default:
                Issue.record("unexpected block \(bytes[i]) at \(i)")
                return (frames, loop)
            }
        }
        Issue.record("no trailer")
        return (frames, loop)
    }

    /// `buffer` with every transparent pixel (alpha below 128) as (0, 0, 0, 0) and every other alpha 255: what GIF
    /// can hold of it.
    static func gifVisible(_ buffer: PixelBuffer) throws -> PixelBuffer {
        let rgba = buffer.format == .gray8 ? buffer.convertedToRGBA() : buffer
        var bytes = rgba.bytes
        for p in stride(from: 0, to: bytes.count, by: 4) {
            if bytes[p + 3] < 128 {
                (bytes[p], bytes[p + 1], bytes[p + 2], bytes[p + 3]) = (0, 0, 0, 0)
            } else {
                bytes[p + 3] = 255
            }
        }
        return try PixelBuffer(width: rgba.width, height: rgba.height, format: .rgba8, bytes: bytes)
    }

    /// A 24 × 16 canvas of `background` with a filled `rect`.
    static func canvas(
        _ background: RGBA, _ rect: (x: Int, y: Int, width: Int, height: Int)? = nil,
        _ fill: RGBA = RGBA(r: 0, g: 0, b: 0)
    ) throws -> PixelBuffer {
        var buffer = try PixelBuffer(width: 24, height: 16, format: .rgba8)
        for y in 0..<16 {
            for x in 0..<24 {
                let inside = rect.map { x >= $0.x && x < $0.x + $0.width && y >= $0.y && y < $0.y + $0.height } ?? false
                buffer[pixel: x, y] = inside ? fill : background
            }
        }
        return buffer
    }

    @Test func corpusGIFsRoundTripPixelForPixel() throws {
        var checked = 0
        for url in try corpusFiles("gif/samples", ext: "gif") {
            // Given every sample GIF, decoded (its first 16 frames: a debug build quantizes slowly)
            let decoded = try GIFDecoder().decode(Data(contentsOf: url), options: DecodingOptions())
            let source = ImageContainer(
                frames: try (0..<min(16, decoded.frameCount)).map { try decoded.frame(at: $0) }, format: .gif,
                loopCount: decoded.loopCount)
            // When it is written as GIF and decoded again
            let data = try GIFEncoder().encode(source, options: EncodingOptions())
            let again = try GIFDecoder().decode(data, options: DecodingOptions())
            // Then the frames, durations (hundredths) and loop count are the same
            let name = url.lastPathComponent
            #expect(again.frameCount == source.frameCount, "\(name)")
            #expect(again.loopCount == source.loopCount, "\(name)")
            #expect(again.frames.map(\.duration) == source.frames.map(\.duration), "\(name)")
            // And so are the pixels, the corpus's canvases having at most 255 colours each
            for index in 0..<min(source.frameCount, again.frameCount) {
                let frame = try again.frame(at: index).buffer
                #expect(try Self.gifVisible(frame) == Self.gifVisible(source.frames[index].buffer), "\(name) #\(index)")
                checked += 1
            }
        }
        #expect(checked == 59)
    }

    @Test func photosAreDitheredOntoTheirMedianCut() throws {
        // Given a Kodak photo with a pure white and a pure black bar across it
        var photo = try decodeReferencePNG(corpusURL("kodak").appendingPathComponent("23.png"))
            .resampled(to: PixelSize(width: 192, height: 128))
        for y in 0..<8 {
            for x in 0..<192 {
                photo[pixel: x, y] = RGBA(r: 255, g: 255, b: 255)
                photo[pixel: x, 127 - y] = RGBA(r: 0, g: 0, b: 0)
            }
        }
        // When it is written as GIF
        let data = try GIFEncoder().encode(photo, options: EncodingOptions())
        let decoded = try GIFDecoder().decode(data, options: DecodingOptions()).image
        // Then it is close on average (256 colours, dithered), and white and black stay within a few levels of
        // their colours: each entry is the mean of its pixels (giflib's own map gives 248 for white)
        let error = try #require(meanChannelError(decoded, photo))
        #expect(error < 3, "mean error \(error)")  // giflib's own median cut fails this
        for (y, level) in [(3, 255), (124, 0)] {
            for x in stride(from: 0, to: 192, by: 7) {
                let pixel = decoded[pixel: x, y]
                #expect(
                    abs(Int(pixel.r) - level) <= 3 && abs(Int(pixel.g) - level) <= 3 && abs(Int(pixel.b) - level) <= 3,
                    "\(x), \(y): \(pixel)")
            }
        }
        // And it is one frame with no graphics control block (opaque) and no loop block
        let structure = try Self.structure(of: data)
        #expect(structure.frames == [Descriptor(x: 0, y: 0, width: 192, height: 128, disposal: 0, delay: 0)])
        #expect(structure.loop == nil)
        // And the same pixels give the same bytes
        #expect(try GIFEncoder().encode(photo, options: EncodingOptions()) == data)
    }

    @Test func grayAndPremultipliedInputAreWrittenAsTheirColours() throws {
        let gray = try PixelBuffer(width: 16, height: 4, format: .gray8, bytes: (0..<64).map { UInt8($0 * 4) })
        let decodedGray = try GIFDecoder().decode(
            GIFEncoder().encode(gray, options: EncodingOptions()), options: DecodingOptions())
        #expect(decodedGray.image == gray.convertedToRGBA())

        let straight = try Self.canvas(RGBA(r: 200, g: 100, b: 50, a: 200), (2, 2, 4, 4), RGBA(r: 0, g: 0, b: 0, a: 0))
        let decoded = try GIFDecoder().decode(
            GIFEncoder().encode(straight.premultiplied(), options: EncodingOptions()), options: DecodingOptions())
        // Unpremultiplied before writing: within rounding of the straight colour, alpha 200 shown opaque
        let pixel = decoded.image[pixel: 10, 10]
        #expect(pixel.a == 255 && abs(Int(pixel.r) - 200) <= 1 && abs(Int(pixel.g) - 100) <= 1)
        #expect(decoded.image[pixel: 3, 3].a == 0)
    }

    @Test func animationsKeepFramesDurationsLoopCountAndTransparency() throws {
        // Given an animation whose opaque pixels become transparent: a red block, then a blue block elsewhere
        // on a transparent canvas, then nothing, then the same again, then a green field
        let clear = RGBA(r: 0, g: 0, b: 0, a: 0)
        let red = RGBA(r: 255, g: 0, b: 0)
        let blue = RGBA(r: 0, g: 0, b: 255)
        let canvases = [
            try Self.canvas(clear, (1, 1, 6, 5), red),
            try Self.canvas(clear, (15, 8, 5, 4), blue),
            try Self.canvas(clear),
            try Self.canvas(clear),
            try Self.canvas(RGBA(r: 0, g: 200, b: 0)),
        ]
        let durations: [Duration] = [
            .milliseconds(100), .milliseconds(40), .milliseconds(1000), .milliseconds(64), .zero,
        ]
        let animation = ImageContainer(
            frames: zip(canvases, durations).map { ImageFrame(buffer: $0, duration: $1) }, format: .gif, loopCount: 0)
        // When it is written as GIF
        let data = try GIFEncoder().encode(animation, options: EncodingOptions())
        let decoded = try GIFDecoder().decode(data, options: DecodingOptions())
        // Then every canvas comes back exactly, with its duration (to the hundredth) and the loop count
        #expect(decoded.frames.count == 5)
        #expect(decoded.loopCount == 0)
        #expect(decoded.frames.map { milliseconds($0.duration) } == [100, 40, 1000, 60, 0])
        for (index, frame) in decoded.frames.enumerated() {
            #expect(frame.buffer == canvases[index], "frame \(index)")
        }
        // And each frame holds only its own rectangle; the frames before a vanishing block are cleared
        let frames = try Self.structure(of: data).frames
        #expect(
            frames.map { [$0.x, $0.y, $0.width, $0.height] } == [
                [1, 1, 6, 5], [15, 8, 5, 4], [0, 0, 1, 1], [0, 0, 1, 1], [0, 0, 24, 16],
            ])
        #expect(frames.map(\.disposal) == [2, 2, 1, 1, 1])
        #expect(frames.allSatisfy { $0.transparentIndex != nil })
    }

    @Test func aClearedFrameIsWidenedToEverythingOnScreen() throws {
        // Given an opaque field, a frame changing a corner of it, then a canvas with a transparent hole elsewhere
        let gray = RGBA(r: 90, g: 90, b: 90)
        let first = try Self.canvas(gray)
        let second = try Self.canvas(gray, (20, 12, 3, 3), RGBA(r: 250, g: 250, b: 0))
        var third = second
        third[pixel: 2, 2] = RGBA(r: 0, g: 0, b: 0, a: 0)
        let animation = ImageContainer(
            frames: [first, second, third].map { ImageFrame(buffer: $0, duration: .milliseconds(50)) }, format: .gif,
            loopCount: 2)
        let data = try GIFEncoder().encode(animation, options: EncodingOptions())
        // Then the second frame, changed only in its corner, is widened to the whole canvas and cleared, so the
        // hole shows
        let frames = try Self.structure(of: data).frames
        #expect(
            frames.map { [$0.x, $0.y, $0.width, $0.height] } == [[0, 0, 24, 16], [0, 0, 24, 16], [0, 0, 24, 16]])
        #expect(frames.map(\.disposal) == [1, 2, 1])
        #expect(try Self.structure(of: data).loop == 2)
        let decoded = try GIFDecoder().decode(data, options: DecodingOptions())
        #expect(decoded.frames.map(\.buffer) == [first, second, third])
        #expect(decoded.loopCount == 2)
    }

    @Test func onlyTheChangedRectangleOfAnOpaqueAnimationIsWritten() throws {
        // Given an opaque photo animation where only a block moves
        let photo = try decodeReferencePNG(corpusURL("kodak").appendingPathComponent("05.png"))
            .resampled(to: PixelSize(width: 120, height: 80))
        var frames: [ImageFrame] = []
        for step in 0..<4 {
            var canvas = photo
            for y in 30..<40 {
                for x in (step * 10)..<(step * 10 + 10) { canvas[pixel: x, y] = RGBA(r: 255, g: 0, b: 255) }
            }
            frames.append(ImageFrame(buffer: canvas, duration: .milliseconds(80)))
        }
        let data = try GIFEncoder().encode(
            ImageContainer(frames: frames, format: .gif, loopCount: 1), options: EncodingOptions())
        // Then frames after the first cover the moved block's old and new places only, and no loop block is
        // written for a single play
        let structure = try Self.structure(of: data)
        #expect(
            structure.frames.dropFirst().map { [$0.x, $0.y, $0.width, $0.height] } == [
                [0, 30, 20, 10], [10, 30, 20, 10], [20, 30, 20, 10],
            ])
        #expect(structure.loop == nil)
        let decoded = try GIFDecoder().decode(data, options: DecodingOptions())
        #expect(decoded.loopCount == 1)
        for (index, frame) in decoded.frames.enumerated() {
            let error = try #require(meanChannelError(frame.buffer, frames[index].buffer))
            #expect(error < 4, "frame \(index): \(error)")
            #expect(frame.buffer[pixel: index * 10 + 5, 35] == RGBA(r: 255, g: 0, b: 255), "frame \(index)")
        }
    }

    @Test func animatedWebPBecomesAnimatedGIF() throws {
        // Given the corpus's animated WebP (random colours: the hardest case for 256 of them)
        let source = try WebPDecoder().decode(
            corpusData("webp/images/animated/random_lossy.webp"), options: DecodingOptions())
        #expect(source.isAnimated)
        // When the registry writes it as GIF
        let registry = ImageEncoderRegistry(ImagoCodecs.encoders)
        let data = try registry.encode(source, as: .gif)
        let decoded = try GIFDecoder().decode(data, options: DecodingOptions())
        // Then frames, loop count and durations (to the hundredth) are kept, every frame shows alike, and
        // transparency is where alpha was below 128
        #expect(decoded.frames.count == source.frames.count)
        #expect(decoded.loopCount == source.loopCount)
        #expect(
            decoded.frames.map { milliseconds($0.duration) }
                == source.frames.map { (milliseconds($0.duration) + 5) / 10 * 10 })
        for (index, frame) in decoded.frames.enumerated() {
            let visible = try Self.gifVisible(source.frames[index].buffer)
            let error = try #require(meanChannelError(frame.buffer, visible))
            #expect(error < 8, "frame \(index): \(error)")
            #expect(
                stride(from: 3, to: visible.byteCount, by: 4).allSatisfy { frame.buffer.bytes[$0] == visible.bytes[$0] }
            )
        }
        // And WebP stays the format animations go to by default
        #expect(registry.animatedFormat == .webp)
    }

    @Test(.timeLimit(.minutes(1))) func pipelineStoresAProcessedAnimatedGIFAsAnAnimatedGIF() async throws {
        // Given the corpus's 14-frame GIF at a remote URL, a resize, and a pipeline that stores processed images
        let data = try corpusData("gif/samples/moon_impact.gif")
        let loader = MockDataLoader()
        let url = URL(string: "https://example.com/moon.gif")!
        loader.setResponse(data, for: url)
        let dataCache = MockDataCache()
        var configuration = ImagePipeline.Configuration(dataLoader: loader)  // with every shipped codec
        configuration.dataCache = dataCache
        configuration.dataCachePolicy = .storeEncodedImages
        let pipeline = ImagePipeline(configuration: configuration)

        // When it is loaded resized
        let image = try await pipeline.image(for: ImageRequest(url: url, processors: [.resize(width: 58, height: 58)]))
        await pipeline.waitForPendingCacheWrites()

        // Then the stored entry is a GIF, as the source was, with every frame, duration and the loop count
        let entries = dataCache.keys.compactMap { dataCache.entry(for: $0)?.data }
        #expect(entries.count == 1)
        let stored = try #require(entries.first)
        #expect(ImageFormat(sniffing: stored) == .gif)
        let reread = try GIFDecoder().decode(stored, options: DecodingOptions())
        #expect(reread.frameCount == 14 && image.frameCount == 14)
        #expect(reread.frames.map(\.duration) == image.frames.map(\.duration))
        #expect(reread.loopCount == image.loopCount)
        #expect(reread.image.size == image.image.size)
    }

    @Test func impossibleImagesAreTypedErrors() throws {
        let wide = try PixelBuffer(width: 70_000, height: 1, format: .gray8)
        #expect(throws: CodecError.self) { try GIFEncoder().encode(wide, options: EncodingOptions()) }
        let frames = [
            ImageFrame(buffer: try Self.canvas(RGBA(r: 1, g: 2, b: 3)), duration: .milliseconds(10)),
            ImageFrame(buffer: try PixelBuffer(width: 8, height: 8, format: .rgba8), duration: .milliseconds(10)),
        ]
        #expect(throws: CodecError.self) {
            try GIFEncoder().encode(ImageContainer(frames: frames, format: .gif), options: EncodingOptions())
        }
    }
}
