import ImagoTesting
import Testing

@testable import ImagoCore

/// The fixed-point resampler against the Float one it replaced (`ImagoTesting.floatResampled`), on noise (the
/// worst case for quantised weights) and gradients, for every kind of input and many size pairs.
@Suite struct ResamplingAccuracyTests {
    static let sizePairs: [(PixelSize, PixelSize)] = [
        (PixelSize(width: 768, height: 512), PixelSize(width: 256, height: 171)),  // Kodak → fit 256
        (PixelSize(width: 288, height: 192), PixelSize(width: 256, height: 171)),  // DCT-scaled Kodak → fit 256
        (PixelSize(width: 97, height: 61), PixelSize(width: 13, height: 7)),  // odd ratios
        (PixelSize(width: 64, height: 48), PixelSize(width: 32, height: 16)),  // exact 2x and 3x
        (PixelSize(width: 50, height: 40), PixelSize(width: 1, height: 1)),  // one pixel
        (PixelSize(width: 33, height: 17), PixelSize(width: 1, height: 5)),  // one column
        (PixelSize(width: 20, height: 10), PixelSize(width: 47, height: 23)),  // enlarging
        (PixelSize(width: 40, height: 30), PixelSize(width: 60, height: 11)),  // one axis up, the other down
        (PixelSize(width: 31, height: 29), PixelSize(width: 31, height: 13)),  // one axis unchanged
        (PixelSize(width: 1, height: 1), PixelSize(width: 3, height: 2)),  // from one pixel
        (PixelSize(width: 2000, height: 3), PixelSize(width: 3, height: 2)),  // 667 horizontal taps
        (PixelSize(width: 5, height: 640), PixelSize(width: 3, height: 10)),  // 64 vertical taps: 16/32-bit sums
        (PixelSize(width: 3, height: 2000), PixelSize(width: 2, height: 3)),  // 667 vertical taps: 32/64-bit sums
    ]

    enum Content: String, CaseIterable, CustomTestStringConvertible {
        case opaqueNoise, opaqueGradient, grayNoise, transparentNoise, transparentEdges, premultipliedNoise
        var testDescription: String { rawValue }
    }

    @Test(arguments: Content.allCases)
    func staysWithinOneOfTheFloatReference(_ content: Content) throws {
        for (source, target) in Self.sizePairs {
            // Given an image of this content
            let image = try Self.make(content, size: source)
            // When it is resampled by both implementations
            let fast = try image.resampled(to: target)
            let reference = try ImagoTesting.floatResampled(image, to: target)
            // Then every channel of every pixel differs by at most 1
            #expect(fast.size == target && fast.format == reference.format && fast.alphaMode == .straight)
            let worst = Self.maximumDifference(fast, reference)
            #expect(worst <= 1, "\(content) \(source) → \(target): max difference \(worst)")
        }
    }

    @Test func opaqueMarkSkipsNothingButTheScan() throws {
        // Given an opaque image, once marked and once not
        let plain = try Self.make(.opaqueNoise, size: PixelSize(width: 97, height: 61))
        let marked = plain.assumingOpaque()
        // When both are resampled
        let a = try plain.resampled(to: PixelSize(width: 40, height: 25))
        let b = try marked.resampled(to: PixelSize(width: 40, height: 25))
        // Then the pixels are identical and both results are known to be opaque
        #expect(a == b)
        #expect(a.isKnownOpaque && b.isKnownOpaque)
    }

    @Test func transparentInputGivesAnUnmarkedResult() throws {
        let image = try Self.make(.transparentNoise, size: PixelSize(width: 30, height: 20))
        #expect(!image.isKnownOpaque)
        #expect(try !image.resampled(to: PixelSize(width: 7, height: 5)).isKnownOpaque)
    }

    /// The largest difference of any channel of any pixel, except the colour of pixels where one side is
    /// transparent black and the other has alpha 1: an averaged alpha within rounding error of 0.5 lands on either
    /// side of the cut-off for transparent black in any arithmetic, and the colour is then all or nothing.
    static func maximumDifference(_ a: PixelBuffer, _ b: PixelBuffer) -> Int {
        let channels = a.format.bytesPerPixel
        var worst = 0
        for i in stride(from: 0, to: a.bytes.count, by: channels) {
            let alphas = channels == 4 ? (Int(a.bytes[i + 3]), Int(b.bytes[i + 3])) : (255, 255)
            let isAtTheCutOff = min(alphas.0, alphas.1) == 0 && max(alphas.0, alphas.1) == 1
            for c in 0..<channels where !(isAtTheCutOff && c < 3) {
                worst = max(worst, abs(Int(a.bytes[i + c]) - Int(b.bytes[i + c])))
            }
        }
        return worst
    }

    // MARK: - Images

    /// Deterministic content: xorshift noise, a smooth gradient, or noise with alpha (uniform, or mostly 0/255
    /// with a few low values, where un-premultiplying magnifies any error most).
    static func make(_ content: Content, size: PixelSize) throws -> PixelBuffer {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(size.width * 7919 + size.height)
        func next() -> UInt8 {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return UInt8(truncatingIfNeeded: state >> 24)
        }
        let (w, h) = (size.width, size.height)
        switch content {
        case .grayNoise:
            return try PixelBuffer(width: w, height: h, format: .gray8, bytes: (0..<(w * h)).map { _ in next() })
        case .opaqueGradient:
            return try PixelBuffer(width: w, height: h, format: .rgba8) { out in
                for y in 0..<h {
                    for x in 0..<w {
                        let i = (y * w + x) * 4
                        out[i] = UInt8(x * 255 / max(1, w - 1))
                        out[i + 1] = UInt8(y * 255 / max(1, h - 1))
                        out[i + 2] = UInt8((x + y) * 255 / max(1, w + h - 2))
                        out[i + 3] = 255
                    }
                }
            }
        case .opaqueNoise, .transparentNoise, .transparentEdges, .premultipliedNoise:
            var bytes = (0..<(w * h * 4)).map { _ in next() }
            for i in stride(from: 3, to: bytes.count, by: 4) {
                switch content {
                case .opaqueNoise: bytes[i] = 255
                case .transparentEdges: bytes[i] = [0, 0, 255, 255, 255, 1, 2, 7][Int(bytes[i] % 8)]
                default: break
                }
            }
            let image = try PixelBuffer(width: w, height: h, format: .rgba8, bytes: bytes)
            return content == .premultipliedNoise ? image.premultiplied() : image
        }
    }
}
