import Foundation
import Imago
import ImagoTesting

/// `imago-bench processors`: the built-in processors on a generated 768x512 RGBA image (the size of a Kodak test
/// image) against naive versions written here: nearest-neighbour resize, and a blur convolving a true Gaussian
/// kernel of ±3σ directly (O(σ) per pixel and pass). The `resample` rows hold `resampled(to:)` against the Float
/// resampler it replaced (issue 7), at the sizes of the thumbnail workload. Figures are thread-CPU ns per image.
enum ProcessorsBench {
    static func run() throws {
        let image = try makeImage(width: 768, height: 512)
        var sink = 0

        let resize = ImageProcessors.Resize(size: PixelSize(width: 256, height: 256))
        let target = try resize.process(image).size  // 256x171
        compare(
            "processors: resize 768x512 → 256 fit (area avg vs nearest)", unit: "cpu-ns/img", goal: nil,
            peerName: "naive nearest-neighbour",
            imago: {
                perImage(20) { sink &+= Int((try? resize.process(image))?.bytes[0] ?? 0) }
            },
            peer: {
                perImage(20) { sink &+= Int(nearestNeighbour(image, to: target).bytes[0]) }
            })

        // Linear light (`--use-linear-colorspace`) against the default sRGB-value averaging, same image and size.
        let linear = ImageProcessors.Resize(size: PixelSize(width: 256, height: 256), inLinearLight: true)
        compare(
            "processors: resize 768x512 → 256 fit, linear light vs sRGB values", unit: "cpu-ns/img", goal: nil,
            peerName: "the default resize (sRGB values)",
            imago: { perImage(20) { sink &+= Int((try? linear.process(image))?.bytes[0] ?? 0) } },
            peer: { perImage(20) { sink &+= Int((try? resize.process(image))?.bytes[0] ?? 0) } })

        try resampleRows(&sink)
        try vectorKernelRows(&sink)

        for sigma in [8.0, 2.0] {
            let blur = ImageProcessors.GaussianBlur(radius: sigma)
            compare(
                "processors: gaussian blur σ=\(Int(sigma)) 768x512", unit: "cpu-ns/img", goal: nil,
                peerName: "naive direct Gaussian ±3σ",
                imago: {
                    perImage(10) { sink &+= Int((try? blur.process(image))?.bytes[0] ?? 0) }
                },
                peer: {
                    perImage(3) { sink &+= Int(naiveGaussian(image, sigma: sigma).bytes[0]) }
                })
        }

        // The other processors, each against a plain copy of the pixels (the floor any processor pays).
        let others: [(String, any ImageProcessing)] = [
            ("circle", .circle()), ("rounded corners r=32", .roundedCorners(radius: 32)),
            ("rotate 90", .rotate(degrees: 90)),
            ("grayscale", .grayscale()), ("tint multiply", .tint(RGBA(r: 30, g: 144, b: 255), blend: .multiply)),
            ("crop 512x512", .crop(x: 128, y: 0, width: 512, height: 512)),
        ]
        for (name, processor) in others {
            compare(
                "processors: \(name) 768x512", unit: "cpu-ns/img", goal: nil, peerName: "copy of the bytes",
                imago: { perImage(20) { sink &+= Int((try? processor.process(image))?.bytes[0] ?? 0) } },
                peer: {
                    perImage(20) {
                        var copy = image
                        copy.withUnsafeMutableBytes { $0[0] &+= 1 }
                        sink &+= Int(copy.bytes[0])
                    }
                })
        }
        if sink == 42 { print("") }  // keeps the results alive
    }

    /// `PixelBuffer.resampled(to:)` (fixed point) against the Float resampler it replaced, kept in
    /// `ProcessorsBench+FloatResampler.swift`, on the sizes of the thumbnail workload: opaque photos as decoders
    /// deliver them (marked opaque; the Float baseline scans alpha as it always did), plus transparent and gray.
    /// What the resampled image holds (named in the row).
    enum ResampleInput { case opaque, transparent, gray }

    static func resampleRows(_ sink: inout Int) throws {
        let cases: [(label: String, source: PixelSize, input: ResampleInput, iterations: Int)] = [
            ("288x192 (DCT-scaled Kodak)", PixelSize(width: 288, height: 192), .opaque, 40),
            ("384x256", PixelSize(width: 384, height: 256), .opaque, 40),
            ("768x512", PixelSize(width: 768, height: 512), .opaque, 20),
            ("1152x768", PixelSize(width: 1152, height: 768), .opaque, 10),
            ("12 MP 4032x3024", PixelSize(width: 4032, height: 3024), .opaque, 2),
            ("768x512", PixelSize(width: 768, height: 512), .transparent, 20),
            ("768x512", PixelSize(width: 768, height: 512), .gray, 20),
        ]
        for c in cases {
            var image =
                c.input == .opaque
                ? try makeOpaqueImage(width: c.source.width, height: c.source.height)
                : try makeImage(width: c.source.width, height: c.source.height)
            if c.input == .gray { image = try makeGrayImage(width: c.source.width, height: c.source.height) }
            let decoded = c.input == .opaque ? image.assumingOpaque() : image
            let target = c.source.fitted(within: PixelSize(width: 256, height: 256))
            compare(
                "processors: resample \(c.label) \(c.input) → \(target) (fixed point vs Float)",
                unit: "cpu-ns/img", goal: nil, peerName: "the previous Float resampler",
                imago: { perImage(c.iterations) { sink &+= Int((try? decoded.resampled(to: target))?.bytes[0] ?? 0) } },
                peer: {
                    perImage(c.iterations) {
                        sink &+= Int((try? ImagoTesting.floatResampled(image, to: target))?.bytes[0] ?? 0)
                    }
                }
            )
        }
    }

    /// The decoders' step to their fitted size (`resampledWithVectorKernel`): `CResampleKernel`'s AVX-512 kernel
    /// against its AVX2 kernel, the same job (same bytes), on the sizes the gallery's JPEGs are DCT-scaled to.
    /// Skipped on a CPU without both kernels.
    static func vectorKernelRows(_ sink: inout Int) throws {
        let variants = PixelBuffer.vectorResampleVariants  // AVX2, then AVX-512
        if !variants.isEmpty { try grayPlaneRows(&sink) }
        guard variants.count == 2 else {
            print("  processors: vector resample rows skipped (this CPU lacks AVX2 or AVX-512 F/BW/VL)")
            return
        }
        for source in [
            PixelSize(width: 288, height: 192), .init(width: 384, height: 256), .init(width: 480, height: 320),
        ] {
            let opaque = try makeOpaqueImage(width: source.width, height: source.height).assumingOpaque()
            let target = source.fitted(within: PixelSize(width: 256, height: 256))
            func run(_ variant: Int32) {
                let out = try? opaque.resampled(
                    to: target, vectorKernel: { PixelBuffer.vectorResample($0, variant: variant) })
                sink &+= Int(out?.bytes[0] ?? 0)
            }
            compare(
                "processors: resample \(source) opaque → \(target), vector kernel (AVX-512 vs AVX2)",
                unit: "cpu-ns/img", goal: nil, peerName: "CResampleKernel's AVX2 kernel",
                imago: { perImage(200) { run(variants[1]) } }, peer: { perImage(200) { run(variants[0]) } })
        }
    }

    /// A JPEG's planes at the gallery's DCT scale to a 256-px thumbnail's (`imago serve`'s YCbCr path): the vector
    /// kernel's gray step against the Swift loops it replaced, the same bytes.
    static func grayPlaneRows(_ sink: inout Int) throws {
        for (plane, source, target) in [
            ("luma", PixelSize(width: 384, height: 256), PixelSize(width: 256, height: 171)),
            ("chroma", PixelSize(width: 192, height: 128), PixelSize(width: 128, height: 86)),
        ] {
            let gray = try makeGrayImage(width: source.width, height: source.height)
            compare(
                "processors: resample \(source) gray (\(plane) plane) → \(target), vector kernel vs Swift loops",
                unit: "cpu-ns/img", goal: nil, peerName: "PixelBuffer.resampled(to:), Swift loops",
                imago: {
                    perImage(400) { sink &+= Int((try? gray.resampledWithVectorKernel(to: target))?.bytes[0] ?? 0) }
                },
                peer: { perImage(400) { sink &+= Int((try? gray.resampled(to: target))?.bytes[0] ?? 0) } })
        }
    }

    /// Thread CPU nanoseconds per call of `body` over `n` calls: on a machine shared by many builds, CPU time
    /// stays close to what the code costs while wall time mostly measures the queue for a core.
    static func perImage(_ n: Int, _ body: () -> Void) -> Double {
        let t0 = threadCPUSeconds()
        for _ in 0..<n { body() }
        return (threadCPUSeconds() - t0) * 1e9 / Double(n)
    }

    static func threadCPUSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// ``makeImage(width:height:)`` with every alpha 255 (not marked opaque: callers mark it where they mean to).
    static func makeOpaqueImage(width: Int, height: Int) throws -> PixelBuffer {
        var image = try makeImage(width: width, height: height)
        image.withUnsafeMutableBytes { p in for i in stride(from: 3, to: p.count, by: 4) { p[i] = 255 } }
        return image
    }

    /// ``makeImage(width:height:)`` made gray (`gray8`, one byte a pixel).
    static func makeGrayImage(width: Int, height: Int) throws -> PixelBuffer {
        let image = try ImageProcessors.Grayscale().process(makeImage(width: width, height: height))
        return try PixelBuffer(
            width: width, height: height, format: .gray8,
            bytes: stride(from: 0, to: image.bytes.count, by: 4).map { image.bytes[$0] })
    }

    /// A smooth colour gradient with a diagonal stripe pattern and a soft alpha ramp at the bottom.
    static func makeImage(width: Int, height: Int) throws -> PixelBuffer {
        try PixelBuffer(width: width, height: height, format: .rgba8) { out in
            for y in 0..<height {
                for x in 0..<width {
                    let i = (y * width + x) * 4
                    out[i] = UInt8(x * 255 / (width - 1))
                    out[i + 1] = UInt8(y * 255 / (height - 1))
                    out[i + 2] = ((x + y) / 16) % 2 == 0 ? 220 : 40
                    out[i + 3] = y < height - 64 ? 255 : UInt8(255 - (y - (height - 64)) * 3)
                }
            }
        }
    }

    /// Nearest-neighbour resampling on raw bytes: the cheapest (and aliasing) baseline.
    static func nearestNeighbour(_ image: PixelBuffer, to size: PixelSize) -> PixelBuffer {
        let sw = image.width
        let sh = image.height
        let result = try? PixelBuffer(width: size.width, height: size.height, format: .rgba8) { out in
            image.withUnsafeBytes { src in
                let s = src.bindMemory(to: UInt32.self)
                let d = out.bindMemory(to: UInt32.self)
                for y in 0..<size.height {
                    let sy = (2 * y + 1) * sh / (2 * size.height)
                    for x in 0..<size.width {
                        let sx = (2 * x + 1) * sw / (2 * size.width)
                        d[y * size.width + x] = s[sy * sw + sx]
                    }
                }
            }
        }
        return result ?? image
    }

    /// Separable convolution with a sampled Gaussian of ±⌈3σ⌉ taps, premultiplied floats, clamped edges.
    static func naiveGaussian(_ image: PixelBuffer, sigma: Double) -> PixelBuffer {
        let w = image.width
        let h = image.height
        let r = Int((3 * sigma).rounded(.up))
        let raw = (-r...r).map { exp(-Double($0 * $0) / (2 * sigma * sigma)) }
        let total = raw.reduce(0, +)
        let k = raw.map { Float($0 / total) }
        var a = [SIMD4<Float>](repeating: .zero, count: w * h)
        image.withUnsafeBytes { src in
            for i in 0..<(w * h) {
                let alpha = Float(src[i * 4 + 3])
                let m = alpha / 255
                a[i] = SIMD4(Float(src[i * 4]) * m, Float(src[i * 4 + 1]) * m, Float(src[i * 4 + 2]) * m, alpha)
            }
        }
        var b = [SIMD4<Float>](repeating: .zero, count: w * h)
        for y in 0..<h {
            for x in 0..<w {
                var sum = SIMD4<Float>.zero
                for t in -r...r { sum += a[y * w + min(max(x + t, 0), w - 1)] * k[t + r] }
                b[y * w + x] = sum
            }
        }
        for y in 0..<h {
            for x in 0..<w {
                var sum = SIMD4<Float>.zero
                for t in -r...r { sum += b[min(max(y + t, 0), h - 1) * w + x] * k[t + r] }
                a[y * w + x] = sum
            }
        }
        let result = try? PixelBuffer(width: w, height: h, format: .rgba8) { out in
            for i in 0..<(w * h) {
                let v = a[i]
                guard v[3] >= 0.5 else {
                    for c in 0..<4 { out[i * 4 + c] = 0 }
                    continue
                }
                let s = v * (255 / v[3])
                for c in 0..<3 { out[i * 4 + c] = UInt8(min(max(s[c].rounded(), 0), 255)) }
                out[i * 4 + 3] = UInt8(min(max(v[3].rounded(), 0), 255))
            }
        }
        return result ?? image
    }
}
