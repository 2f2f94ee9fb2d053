import Foundation
import Imago
import ImagoCodecs

extension FuzzTargets {
    /// GIFEncoder on whatever GIFDecoder reads from the input (256 K pixels, 16 frames: small, so the fuzzer
    /// spends its time on structure), written and read again, with
    /// the encoder's promises checked (a broken one traps, which the fuzzer reports): the same frame count,
    /// durations to the hundredth and loop count; every frame transparent exactly where alpha was below 128; and
    /// a frame of at most 255 opaque colours back pixel for pixel. The fuzzer's frames, with their disposals,
    /// transparency and local colour maps, drive the planner's keep/clear choices and the quantizer's two paths.
    static func gifRoundTrip(_ data: Data) {
        let options = DecodingOptions(pixelLimit: 262_144, frameLimit: 16, animationByteLimit: 16 << 20)
        guard let source = try? GIFDecoder().decode(data, options: options) else { return }
        let frames = (0..<source.frameCount).compactMap { try? source.frame(at: $0) }
        guard frames.count == source.frameCount else { return }
        let container = ImageContainer(frames: frames, format: .gif, loopCount: source.loopCount)
        let encoded: Data
        do {
            encoded = try GIFEncoder().encode(container, options: EncodingOptions())
        } catch {
            preconditionFailure("GIFEncoder refused a decoded GIF: \(error)")
        }
        guard let again = try? GIFDecoder().decode(encoded, options: options) else {
            preconditionFailure("GIFDecoder refused GIFEncoder's output")
        }
        precondition(again.frameCount == frames.count, "frame count \(again.frameCount) ≠ \(frames.count)")
        precondition(again.loopCount == container.loopCount || container.frameCount == 1, "loop count")
        for (index, frame) in frames.enumerated() {
            guard let written = try? again.frame(at: index) else { preconditionFailure("frame \(index) unreadable") }
            if frames.count > 1 {
                let hundredths = { (duration: Duration) in Int((duration / .milliseconds(10)).rounded()) }
                precondition(hundredths(written.duration) == min(65_535, hundredths(frame.duration)), "duration")
            }
            checkVisible(written.buffer, frame.buffer, index: index)
        }
    }

    /// Traps unless `written` is transparent exactly where `original` has alpha below 128, and, when `original`
    /// has at most 255 opaque colours, has its colours exactly.
    private static func checkVisible(_ written: PixelBuffer, _ original: PixelBuffer, index: Int) {
        precondition(written.size == original.size, "frame \(index) size")
        var colours = Set<UInt32>()
        var sameColours = true
        for y in 0..<original.height {
            for x in 0..<original.width {
                let a = original[pixel: x, y]
                let b = written[pixel: x, y]
                precondition((a.a < 128) == (b.a == 0), "frame \(index) alpha at \(x),\(y)")
                guard a.a >= 128 else { continue }
                if colours.count <= 255 { colours.insert(UInt32(a.r) << 16 | UInt32(a.g) << 8 | UInt32(a.b)) }
                if (a.r, a.g, a.b) != (b.r, b.g, b.b) { sameColours = false }
            }
        }
        precondition(colours.count > 255 || sameColours, "frame \(index): \(colours.count) colours changed")
    }
}
