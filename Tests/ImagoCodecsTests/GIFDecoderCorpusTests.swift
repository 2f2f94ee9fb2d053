import Foundation
import ImagoCodecs
import ImagoCore
import Testing

/// The corpus's GIF samples: frame counts, delays, loop counts and pixels. The expected values were established
/// independently with Pillow 12 (frame composition via `seek` + `convert("RGBA")`, CRC-32 over the frame's RGBA
/// bytes with the colour of fully transparent pixels zeroed), not with this decoder.
@Suite struct GIFDecoderCorpusTests {
    struct Expectation: Sendable, CustomStringConvertible {
        var file: String
        var size: PixelSize
        var frameCount: Int
        var loopCount: Int
        /// The first delays, in milliseconds.
        var firstDelays: [Int]
        /// CRC-32 of chosen frames.
        var checksums: [Int: UInt32]
        var description: String { file }
    }

    static let samples: [Expectation] = [
        .init(
            file: "2x2.gif", size: .init(width: 2, height: 2), frameCount: 1, loopCount: 1, firstDelays: [0],
            checksums: [0: 0xE2A0_3178]),
        .init(
            file: "alpha_gif_a.gif", size: .init(width: 256, height: 256), frameCount: 1, loopCount: 1,
            firstDelays: [0], checksums: [0: 0xE6C8_6941]),
        .init(
            file: "anim-gr.gif", size: .init(width: 100, height: 50), frameCount: 2, loopCount: 0,
            firstDelays: [10, 100_000], checksums: [0: 0xE7C4_C432, 1: 0x606D_6798]),
        .init(
            file: "beacon.gif", size: .init(width: 6, height: 6), frameCount: 2, loopCount: 0, firstDelays: [0, 0],
            checksums: [0: 0x8276_3947, 1: 0x4EB2_7CA9]),
        .init(
            file: "beacon_icc.gif", size: .init(width: 6, height: 6), frameCount: 2, loopCount: 0,
            firstDelays: [0, 0], checksums: [0: 0x8276_3947, 1: 0x4EB2_7CA9]),
        .init(
            file: "beacon_xmp.gif", size: .init(width: 6, height: 6), frameCount: 2, loopCount: 0,
            firstDelays: [0, 0], checksums: [0: 0x8276_3947, 1: 0x4EB2_7CA9]),
        .init(
            file: "gifplayer-muybridge.gif", size: .init(width: 472, height: 298), frameCount: 380, loopCount: 0,
            firstDelays: [360, 40, 40, 40, 40, 40, 390, 40],
            checksums: [0: 0xBB40_CE88, 1: 0xFFA7_E738, 2: 0xB382_D24D, 379: 0xBA6A_9F02]),
        .init(
            file: "interlaced.gif", size: .init(width: 540, height: 330), frameCount: 1, loopCount: 1,
            firstDelays: [0], checksums: [0: 0x7E17_E5CC]),
        .init(
            file: "moon_impact.gif", size: .init(width: 116, height: 100), frameCount: 14, loopCount: 10,
            firstDelays: [150, 150, 150], checksums: [0: 0x06C6_611C, 2: 0x06C6_611C, 13: 0x3053_8B8B]),
        .init(
            file: "sample_1.gif", size: .init(width: 10, height: 10), frameCount: 1, loopCount: 1, firstDelays: [0],
            checksums: [0: 0xC33B_036B]),
        .init(
            file: "sample_big.gif", size: .init(width: 1000, height: 175), frameCount: 259, loopCount: 1,
            firstDelays: [0, 0, 0],
            checksums: [0: 0x5F6A_CC95, 1: 0x2594_76A0, 2: 0x785D_1182, 258: 0x26F1_CD10]),
        .init(
            file: "set_hsts.gif", size: .init(width: 1, height: 1), frameCount: 1, loopCount: 1, firstDelays: [0],
            checksums: [0: 0x2144_DF1C]),
    ]

    @Test(arguments: samples)
    func decodesFramesDelaysLoopCountAndPixelsLikeAReferenceDecoder(_ expected: Expectation) throws {
        // Given a corpus sample
        let data = try Data(contentsOf: corpusURL("gif/samples").appendingPathComponent(expected.file))

        // When it is decoded
        let container = try GIFDecoder().decode(data, options: DecodingOptions())

        // Then the animation facts and the composited pixels match the reference (frames read through
        // frame(at:): the large samples exceed the animation memory budget and are decoded on demand)
        #expect(container.format == .gif)
        #expect(container.image.size == expected.size)
        #expect(container.frameCount == expected.frameCount)
        #expect(container.loopCount == expected.loopCount)
        let delays = try (0..<min(expected.firstDelays.count, container.frameCount)).map {
            milliseconds(try container.frame(at: $0).duration)
        }
        #expect(delays == expected.firstDelays)
        for (index, checksum) in expected.checksums.sorted(by: { $0.key < $1.key }) {
            try #require(index < container.frameCount)
            let frame = try container.frame(at: index).buffer
            #expect(frame.size == expected.size)
            #expect(crc32(transparentColourZeroed(frame.bytes)) == checksum, "frame \(index)")
        }
    }

    @Test func interlacedSampleHasReferencePixels() throws {
        // Given the interlaced sample (values read with Pillow)
        let data = try Data(contentsOf: corpusURL("gif/samples").appendingPathComponent("interlaced.gif"))

        // When decoded
        let image = try GIFDecoder().decode(data, options: DecodingOptions()).image

        // Then rows from different interlace passes hold the expected colours
        #expect(image[pixel: 0, 0] == RGBA(r: 255, g: 255, b: 255))
        #expect(image[pixel: 270, 165] == RGBA(r: 123, g: 0, b: 132))
        #expect(image[pixel: 539, 329] == RGBA(r: 255, g: 255, b: 255))
    }

    @Test func transparentSampleKeepsTransparency() throws {
        let data = try Data(contentsOf: corpusURL("gif/samples").appendingPathComponent("alpha_gif_a.gif"))
        let image = try GIFDecoder().decode(data, options: DecodingOptions()).image
        #expect(image[pixel: 0, 0] == RGBA(r: 0, g: 0, b: 255, a: 255))
        #expect(image[pixel: 128, 128].a == 0)
        #expect(image[pixel: 255, 255].a == 0)
    }

    @Test func firstFrameOnlyStopsAfterOneFrame() throws {
        let data = try Data(
            contentsOf: corpusURL("gif/samples").appendingPathComponent("gifplayer-muybridge.gif"))
        let container = try GIFDecoder().decode(data, options: DecodingOptions(decodesFirstFrameOnly: true))
        #expect(container.frames.count == 1)
        #expect(crc32(transparentColourZeroed(container.image.bytes)) == 0xBB40_CE88)
        #expect(container.loopCount == 0)
    }

    @Test func downsamplesEveryFrameToTheTargetSize() throws {
        let data = try Data(contentsOf: corpusURL("gif/samples").appendingPathComponent("moon_impact.gif"))
        let container = try GIFDecoder().decode(
            data, options: DecodingOptions(targetSize: PixelSize(width: 58, height: 58)))
        #expect(container.frames.count == 14)
        #expect(container.frames.allSatisfy { $0.buffer.size == PixelSize(width: 58, height: 50) })
        #expect(container.originalSize == PixelSize(width: 116, height: 100))
    }
}

/// RGBA bytes with the colour of fully transparent pixels set to zero (invisible, and decoders disagree on it).
func transparentColourZeroed(_ bytes: [UInt8]) -> [UInt8] {
    var copy = bytes
    for i in stride(from: 0, to: copy.count, by: 4) where copy[i + 3] == 0 {
        copy[i] = 0
        copy[i + 1] = 0
        copy[i + 2] = 0
    }
    return copy
}

/// A duration in whole milliseconds.
func milliseconds(_ duration: Duration) -> Int { Int((duration / .milliseconds(1)).rounded()) }
