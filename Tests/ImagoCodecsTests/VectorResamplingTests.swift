import ImagoCore
import Testing

@testable import ImagoCodecs

/// `CResampleKernel` computes the same integers as `PixelBuffer.resampled(to:)`'s Swift loops: every output byte is
/// compared, for opaque RGBA and for gray, for shrinks (two vertical taps, and more), enlargements, widths with a
/// scalar tail, and extremes, for the kernel the decoders use and for each kernel this CPU runs (AVX2, and AVX-512
/// where it has AVX-512 F/BW/VL).
@Suite struct VectorResamplingTests {
    /// `count` noise bytes (xorshift), reproducible from `seed`.
    static func noiseBytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        return (0..<count).map { _ in
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return UInt8(truncatingIfNeeded: state)
        }
    }

    /// Opaque RGBA noise (every alpha 255), reproducible from `seed`.
    static func noise(_ size: PixelSize, seed: UInt64) throws -> PixelBuffer {
        var bytes = noiseBytes(size.width * size.height * 4, seed: seed)
        for i in stride(from: 3, to: bytes.count, by: 4) { bytes[i] = 255 }
        return try PixelBuffer(width: size.width, height: size.height, bytes: bytes).assumingOpaque()
    }

    /// Gray noise, reproducible from `seed`.
    static func grayNoise(_ size: PixelSize, seed: UInt64) throws -> PixelBuffer {
        try PixelBuffer(
            width: size.width, height: size.height, format: .gray8,
            bytes: noiseBytes(size.width * size.height, seed: seed))
    }

    static let cases: [(from: PixelSize, to: PixelSize)] = [
        (PixelSize(width: 384, height: 256), PixelSize(width: 256, height: 171)),  // the gallery's 1/2 DCT scale
        (PixelSize(width: 1000, height: 750), PixelSize(width: 256, height: 192)),  // 4-5 vertical taps
        (PixelSize(width: 640, height: 480), PixelSize(width: 639, height: 479)),
        (PixelSize(width: 17, height: 9), PixelSize(width: 5, height: 3)),  // odd output width: the scalar tail
        (PixelSize(width: 3, height: 3), PixelSize(width: 7, height: 5)),  // enlarging: bilinear
        (PixelSize(width: 1, height: 1), PixelSize(width: 3, height: 2)),
        (PixelSize(width: 33, height: 2), PixelSize(width: 1, height: 1)),
        (PixelSize(width: 300, height: 200), PixelSize(width: 150, height: 100)),
    ]

    @Test(arguments: cases.indices)
    func matchesTheSwiftLoopsByteForByte(_ index: Int) throws {
        let (from, to) = Self.cases[index]
        for (seed, image) in try [
            (1, Self.noise(from, seed: UInt64(index + 1))),
            (
                2,
                PixelBuffer(
                    width: from.width, height: from.height,
                    bytes: .init(repeating: 255, count: from.width * from.height * 4)
                ).assumingOpaque()
            ),
            (3, Self.grayNoise(from, seed: UInt64(index + 1))),
        ] {
            // Given opaque RGBA or gray, when it is resampled by the Swift loops and by the vector kernel
            let reference = try image.resampled(to: to)
            var ran = false
            let vector = try image.resampled(
                to: to,
                vectorKernel: { job in
                    ran = PixelBuffer.vectorResample(job)
                    return ran
                })
            // Then the kernel ran (where the CPU has AVX2) and every byte is the same
            #expect(ran == PixelBuffer.isVectorResampleKernelAvailable, "case \(index) image \(seed)")
            #expect(vector.size == to && vector.format == image.format)
            #expect(vector.isKnownOpaque || image.format == .gray8)
            #expect(firstDifference(vector, reference) == nil, "case \(index) image \(seed)")
            #expect(firstDifference(try image.resampledWithVectorKernel(to: to), reference) == nil)
            for variant in PixelBuffer.vectorResampleVariants {
                let forced = try image.resampled(
                    to: to, vectorKernel: { PixelBuffer.vectorResample($0, variant: variant) })
                #expect(
                    firstDifference(forced, reference) == nil, "case \(index) image \(seed) variant \(variant)")
            }
        }
    }

    /// Output widths 1…19 and 31…33, 64 (every tail of pass 1's 8-, 4- and 2-pixel steps and of pass 2's 32- and
    /// 16-value steps), each from sources that give 1 to 6 horizontal taps (enlargements: bilinear, 1 or 2) and 1 to
    /// 5 vertical rows a row (more than 2: the accumulating path).
    static let raggedWidths = Array(1...19) + [31, 32, 33, 64]
    static let ratios = [0.45, 0.8, 1.3, 1.5, 1.9, 2.6, 3.7, 5.2]

    @Test(arguments: raggedWidths)
    func everyKernelMatchesTheSwiftLoopsOverRaggedWidthsAndTaps(_ width: Int) throws {
        let variants = PixelBuffer.vectorResampleVariants
        #expect(variants.isEmpty == !PixelBuffer.isVectorResampleKernelAvailable)
        for (r, ratio) in Self.ratios.enumerated() {
            let to = PixelSize(width: width, height: 3 + r % 3)
            let from = PixelSize(
                width: max(1, Int((Double(to.width) * ratio).rounded())),
                height: max(1, Int((Double(to.height) * ratio).rounded())))
            guard from != to else { continue }
            // Given opaque noise and gray noise, resampled by the Swift loops
            for image in [
                try Self.noise(from, seed: UInt64(width * 16 + r)), try Self.grayNoise(from, seed: UInt64(r)),
            ] {
                let reference = try image.resampled(to: to)
                for variant in variants {
                    // When each kernel the CPU runs does the same job
                    var ran = false
                    let vector = try image.resampled(
                        to: to,
                        vectorKernel: { job in
                            ran = PixelBuffer.vectorResample(job, variant: variant)
                            return ran
                        })
                    // Then it ran, and every byte is the Swift loops'
                    #expect(ran, "variant \(variant) \(image.format) \(from) → \(to)")
                    #expect(
                        firstDifference(vector, reference) == nil,
                        "variant \(variant) \(image.format) \(from) → \(to)")
                }
                #expect(
                    firstDifference(try image.resampledWithVectorKernel(to: to), reference) == nil,
                    "\(from) → \(to)")
            }
        }
    }

    @Test func aVariantTheCPULacksWritesNothing() throws {
        // Given a kernel number that is no kernel (and, on a CPU without AVX-512, the AVX-512 one)
        let image = try Self.noise(PixelSize(width: 40, height: 30), seed: 3)
        let missing: [Int32] = [0, 4] + (PixelBuffer.vectorResampleVariants.count < 2 ? [2] : [])
        for variant in missing {
            var ran = true
            let out = try image.resampled(
                to: PixelSize(width: 17, height: 11),
                vectorKernel: { job in
                    ran = PixelBuffer.vectorResample(job, variant: variant)
                    return ran
                })
            // Then it declines, and the Swift loops' result stands
            #expect(!ran, "variant \(variant)")
            #expect(out.bytes == (try image.resampled(to: PixelSize(width: 17, height: 11))).bytes)
        }
    }

    @Test func leavesTransparentInputToTheSwiftLoops() throws {
        // Given input the kernel does not take (some alpha below 255, straight or premultiplied)
        var transparent = try Self.noise(PixelSize(width: 40, height: 30), seed: 9).bytes
        transparent[3] = 0
        let rgba = try PixelBuffer(width: 40, height: 30, bytes: transparent)
        for image in [rgba, rgba.premultiplied()] {
            var called = false
            let out = try image.resampled(
                to: PixelSize(width: 13, height: 11),
                vectorKernel: { _ in
                    called = true
                    return false
                })
            // Then the kernel is never asked and the result is the Swift loops'
            #expect(!called)
            #expect(out.bytes == (try image.resampled(to: PixelSize(width: 13, height: 11))).bytes)
        }
    }
}
