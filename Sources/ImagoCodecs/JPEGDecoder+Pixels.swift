import CJPEGTurbo
import ImagoCore

extension JPEGDecoder {
    /// How a file's colour space is decoded: which TurboJPEG pixel format, and what it becomes.
    enum Layout: Equatable {
        /// YCbCr or RGB files: TurboJPEG converts to RGBA (alpha 255).
        case rgba
        /// Grayscale files: one byte a pixel, kept as `gray8`.
        case gray
        /// CMYK or YCCK files: decoded as CMYK, converted to RGBA in place. Adobe files store inverted inks.
        case cmyk(isInverted: Bool)

        init(colorspace: Int32, isAdobe: Bool) {
            switch colorspace {
            case Int32(TJCS_GRAY.rawValue): self = .gray
            case Int32(TJCS_CMYK.rawValue), Int32(TJCS_YCCK.rawValue): self = .cmyk(isInverted: isAdobe)
            default: self = .rgba
            }
        }

        var turboFormat: TJPF {
            switch self {
            case .rgba: TJPF_RGBA
            case .gray: TJPF_GRAY
            case .cmyk: TJPF_CMYK
            }
        }

        var pixelFormat: PixelBuffer.PixelFormat { self == .gray ? .gray8 : .rgba8 }
        var bytesPerPixel: Int { pixelFormat.bytesPerPixel }
    }

    /// TurboJPEG's scaling factors no larger than 1 (1/8, 1/4, 3/8, … 7/8, 1 in 2.1), largest first.
    static let scalingFactors: [(num: Int, denom: Int)] = {
        var count: Int32 = 0
        guard let factors = tjGetScalingFactors(&count), count > 0 else { return [(1, 1)] }
        let all = (0..<Int(count)).map { (num: Int(factors[$0].num), denom: Int(factors[$0].denom)) }
        let usable = all.filter { $0.num > 0 && $0.denom > 0 && $0.num <= $0.denom }
        return usable.isEmpty ? [(1, 1)] : usable
    }()

    /// The DCT-scaled size of `full` to decode for `target`: the smallest power-of-two scale (1/8, 1/4, 1/2, 1)
    /// that still covers `target` in both dimensions (so that the final resample only ever shrinks), as Pillow's
    /// `draft` and libvips's shrink-on-load choose. libjpeg-turbo has SIMD inverse DCTs for those scales only; its
    /// 3/8, 5/8, 3/4 and 7/8 run in plain C and cost more than the next larger power of two although they write
    /// fewer pixels (768×512 4:2:0: 3/8 1.83 ms vs 1/2 1.66 ms; 384×256: 3/4 0.77 ms vs 1/1 0.55 ms), more than
    /// the larger resample gives back. When that size is refused by `isAllowed` (over the pixel limit) the
    /// smallest covering scale of any kind is taken. `target` no larger than `full` is assumed; equal returns
    /// `full`.
    static func scaledSize(
        of full: PixelSize, covering target: PixelSize, isAllowed: (PixelSize) -> Bool = { _ in true }
    ) -> PixelSize {
        guard target != full else { return full }
        func covers(_ size: PixelSize) -> Bool { size.width >= target.width && size.height >= target.height }
        var best = full
        var smallest = full
        for (num, denom) in scalingFactors {
            let size = scaled(full, num: num, denom: denom)
            guard covers(size) else { continue }
            if size.pixelCount < smallest.pixelCount { smallest = size }
            if (num * 8) % denom == 0, (8 * num / denom).nonzeroBitCount == 1, size.pixelCount < best.pixelCount {
                best = size
            }
        }
        return isAllowed(best) ? best : smallest
    }

    /// Whether TurboJPEG, asked for `scaled`, decodes `full` at 1/8 scale: `scaled` is the 1/8 size and no larger
    /// factor fits in it (tjDecompress2 takes the largest factor whose size fits; a 4×4 image asked for 1×1 is
    /// decoded at 1/4, a 1×1 image at 1/1).
    static func decodesAtOneEighth(_ full: PixelSize, scaled: PixelSize) -> Bool {
        guard scaled == Self.scaled(full, num: 1, denom: 8) else { return false }
        return !scalingFactors.contains { num, denom in
            let size = Self.scaled(full, num: num, denom: denom)
            return num * 8 > denom && size.width <= scaled.width && size.height <= scaled.height
        }
    }

    /// `full` at the DCT scale `num`/`denom`, as TurboJPEG sizes it: TJSCALED(dim, factor), a function-like macro
    /// Swift cannot import, is ceil(dim × num / denom).
    static func scaled(_ full: PixelSize, num: Int, denom: Int) -> PixelSize {
        PixelSize(width: (full.width * num + denom - 1) / denom, height: (full.height * num + denom - 1) / denom)
    }

    /// Converts CMYK bytes to RGBA in place (4 bytes in, 4 bytes out). Plain CMYK: R = (255 − C)(255 − K)/255;
    /// inverted (Adobe) CMYK: R = C·K/255, and likewise for G (M) and B (Y).
    static func convertCMYKToRGBA(_ pixels: UnsafeMutableRawBufferPointer, isInverted: Bool) {
        let p = pixels.bindMemory(to: UInt8.self)
        var i = 0
        let n = p.count & ~3
        @inline(__always) func mul(_ a: UInt8, _ b: UInt8) -> UInt8 {
            // Exact rounding of a·b/255.
            let t = UInt32(a) * UInt32(b) + 128
            return UInt8((t + (t >> 8)) >> 8)
        }
        if isInverted {
            while i < n {
                let k = p[i + 3]
                p[i] = mul(p[i], k)
                p[i + 1] = mul(p[i + 1], k)
                p[i + 2] = mul(p[i + 2], k)
                p[i + 3] = 255
                i += 4
            }
        } else {
            while i < n {
                let k = 255 - p[i + 3]
                p[i] = mul(255 - p[i], k)
                p[i + 1] = mul(255 - p[i + 1], k)
                p[i + 2] = mul(255 - p[i + 2], k)
                p[i + 3] = 255
                i += 4
            }
        }
    }
}
