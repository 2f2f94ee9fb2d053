import Foundation
import ImagoCodecs
import ImagoCore
import Testing

/// Every APNG in `../shared/corpus/apng` against its reference frames (`reference/NAME.frameNNN.png`) and
/// `NAME.json` (frame count, durations, loop count, size). The references agree exactly with ffmpeg and
/// apngdis, so 8-bit files must match exactly and 16-bit ones within one level; colour under alpha 0 is not
/// compared (it is undefined).
@Suite struct APNGDecoderCorpusTests {
    struct Reference: Decodable {
        var frames: Int
        var durations_ms: [Int]
        var loop: Int?
        var width: Int
        var height: Int
    }

    static let files: [String] = {
        let folder = corpusURL("apng")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { $0.hasSuffix(".png") }.sorted()
    }()

    @Test func corpusHasEveryAPNG() {
        #expect(Self.files.count == 39)
    }

    @Test(arguments: files)
    func framesMatchTheReference(_ name: String) throws {
        // Given a corpus APNG and its reference
        let data = try Data(contentsOf: corpusURL("apng").appendingPathComponent(name))
        let referenceURL = corpusURL("apng/reference")
        let reference = try JSONDecoder().decode(
            Reference.self, from: Data(contentsOf: referenceURL.appendingPathComponent("\(name).json")))

        // When decoded through the default codecs' registry
        let container = try ImageDecoderRegistry(ImagoCodecs.decoders).decode(data)

        // Then every displayed frame, duration and the loop count match
        #expect(container.format == .apng)
        #expect(container.frames.count == reference.frames, "\(name)")
        #expect(container.frames.map { milliseconds($0.duration) } == reference.durations_ms, "\(name)")
        #expect(container.loopCount == (reference.loop ?? 0), "\(name)")
        #expect(container.image.size == PixelSize(width: reference.width, height: reference.height))
        let tolerance = container.bitDepth == 16 ? 1 : 0
        for (index, frame) in container.frames.enumerated() {
            let path = String(format: "%@.frame%03d.png", name, index)
            let expected = try decodeReferencePNG(referenceURL.appendingPathComponent(path))
            let worst = largestDifference(frame.buffer, expected)
            #expect(worst <= tolerance, "\(name) frame \(index): largest difference \(worst)")
        }
    }

    @Test func bitDepthIsTheFilesSampleDepth() throws {
        let registry = ImageDecoderRegistry(ImagoCodecs.decoders)
        let folder = corpusURL("apng")
        #expect(
            try registry.decode(Data(contentsOf: folder.appendingPathComponent("pillow-mode_16bit.png"))).bitDepth == 16
        )
        #expect(
            try registry.decode(Data(contentsOf: folder.appendingPathComponent("pillow-mode_palette.png"))).bitDepth
                == 8)
    }

    @Test func firstFrameOnlyAndTargetSize() throws {
        let data = try Data(contentsOf: corpusURL("apng").appendingPathComponent("gen-dispose-none-blend-over.png"))
        let first = try APNGDecoder().decode(data, options: DecodingOptions(decodesFirstFrameOnly: true))
        #expect(first.frames.count == 1)
        let full = try APNGDecoder().decode(data, options: DecodingOptions())
        #expect(first.image == full.image)

        let small = try APNGDecoder().decode(
            data, options: DecodingOptions(targetSize: PixelSize(width: 48, height: 48)))
        #expect(small.frames.count == 4)
        #expect(small.image.size == PixelSize(width: 48, height: 32))
        #expect(small.originalSize == PixelSize(width: 96, height: 64))
        #expect(small.frames[3].buffer == (try full.frames[3].buffer.resampled(to: PixelSize(width: 48, height: 32))))
    }

    @Test func limitsAreCheckedBeforeDecoding() throws {
        let data = try Data(contentsOf: corpusURL("apng").appendingPathComponent("gen-dispose-none-blend-over.png"))
        #expect(throws: CodecError.tooManyFrames(limit: 3)) {
            try APNGDecoder().decode(data, options: DecodingOptions(frameLimit: 3))
        }
        #expect(throws: CodecError.tooManyPixels(width: 96, height: 64, limit: 1000)) {
            try APNGDecoder().decode(data, options: DecodingOptions(pixelLimit: 1000))
        }
        #expect(throws: CodecError.animationTooLarge(limit: 96 * 64 * 4 * 3)) {
            try APNGDecoder().decode(data, options: DecodingOptions(animationByteLimit: 96 * 64 * 4 * 3))
        }
        #expect(throws: CodecError.animationTooMuchWork(limit: 96 * 64 * 3)) {
            try APNGDecoder().decode(data, options: DecodingOptions(animationWorkLimit: 96 * 64 * 3))
        }
        // Only the first frame wanted: the frame limit does not apply to the rest
        #expect(
            try APNGDecoder().decode(data, options: DecodingOptions(frameLimit: 1, decodesFirstFrameOnly: true))
                .frames.count == 1)
    }

    /// The largest channel difference, counting colour only where the reference is not fully transparent.
    func largestDifference(_ a: PixelBuffer, _ b: PixelBuffer) -> Int {
        guard a.size == b.size, a.format == .rgba8, b.format == .rgba8 else { return 255 }
        var worst = 0
        a.withUnsafeBytes { x in
            b.withUnsafeBytes { y in
                var i = 0
                while i < x.count {
                    let channels = y[i + 3] == 0 ? 3...3 : 0...3
                    for c in channels { worst = max(worst, abs(Int(x[i + c]) - Int(y[i + c]))) }
                    i += 4
                }
            }
        }
        return worst
    }
}
