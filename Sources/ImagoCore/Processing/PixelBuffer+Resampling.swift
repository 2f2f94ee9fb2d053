extension PixelBuffer {
    /// Resamples to exactly `size` (no aspect-ratio handling; see `ImageProcessors.Resize` for that).
    ///
    /// Shrinking averages areas: each output pixel is the coverage-weighted mean of the source pixels under it
    /// (a box filter with exact fractional edges), which neither aliases nor blurs more than needed. Enlarging is
    /// bilinear. RGBA is resampled premultiplied, so transparent pixels never bleed their colour into opaque
    /// neighbours; the result has straight alpha again. Returns `self` when the size is unchanged.
    ///
    /// - Throws: ``PixelBuffer/Error/invalidDimensions(width:height:)`` for an empty or overflowing size.
    public func resampled(to size: PixelSize) throws -> PixelBuffer {
        if size == self.size && alphaMode == .straight { return self }
        _ = try Self.checkedByteCount(width: size.width, height: size.height, format: format)
        let channels = format.bytesPerPixel
        let horizontal = ResamplingWeights(source: width, destination: size.width)
        let vertical = ResamplingWeights(source: height, destination: size.height)
        let isRGBA = format == .rgba8
        let inputIsStraight = alphaMode == .straight
        // Every alpha 255 (all JPEGs, most photos): premultiplying is the identity, so both the multiply on the
        // way in and the divide on the way out are skipped. Checking costs one byte read in four.
        let isOpaque = isRGBA && inputIsStraight && !hasTransparency

        // Pass 1: every source row resampled horizontally into floats, premultiplied.
        let rowFloats = size.width * channels
        var intermediate = [Float](repeating: 0, count: rowFloats * height)
        bytes.withUnsafeBufferPointer { src in
            intermediate.withUnsafeMutableBufferPointer { tmp in
                horizontal.withUnsafeBuffers { starts, counts, offsets, weights in
                    for y in 0..<height {
                        let srcRow = y * bytesPerRow
                        let tmpRow = y * rowFloats
                        for x in 0..<size.width {
                            let start = starts[x]
                            let first = offsets[x]
                            let o = tmpRow + x * channels
                            if !isRGBA {
                                var acc: Float = 0
                                for k in 0..<counts[x] { acc += Float(src[srcRow + start + k]) * weights[first + k] }
                                tmp[o] = acc
                                continue
                            }
                            var acc: (Float, Float, Float, Float) = (0, 0, 0, 0)
                            var p = srcRow + start * 4
                            if isOpaque {
                                for k in 0..<counts[x] {
                                    let w = weights[first + k]
                                    acc.0 += Float(src[p]) * w
                                    acc.1 += Float(src[p + 1]) * w
                                    acc.2 += Float(src[p + 2]) * w
                                    p += 4
                                }
                            } else {
                                for k in 0..<counts[x] {
                                    let w = weights[first + k]
                                    let a = Float(src[p + 3])
                                    let m = inputIsStraight ? a / 255 : 1
                                    acc.0 += Float(src[p]) * m * w
                                    acc.1 += Float(src[p + 1]) * m * w
                                    acc.2 += Float(src[p + 2]) * m * w
                                    acc.3 += a * w
                                    p += 4
                                }
                            }
                            tmp[o] = acc.0
                            tmp[o + 1] = acc.1
                            tmp[o + 2] = acc.2
                            tmp[o + 3] = acc.3
                        }
                    }
                }
            }
        }

        // Pass 2: columns resampled vertically, then back to straight-alpha bytes.
        return try PixelBuffer(width: size.width, height: size.height, format: format) { out in
            intermediate.withUnsafeBufferPointer { tmp in
                vertical.withUnsafeBuffers { starts, counts, offsets, weights in
                    var row = [Float](repeating: 0, count: rowFloats)
                    row.withUnsafeMutableBufferPointer { acc in
                        for y in 0..<size.height {
                            for i in 0..<rowFloats { acc[i] = 0 }
                            let start = starts[y]
                            for k in 0..<counts[y] {
                                let w = weights[offsets[y] + k]
                                let base = (start + k) * rowFloats
                                for i in 0..<rowFloats { acc[i] += tmp[base + i] * w }
                            }
                            let outRow = y * rowFloats
                            if isOpaque {
                                var x = 0
                                while x < rowFloats {
                                    out[outRow + x] = clampToByte(acc[x])
                                    out[outRow + x + 1] = clampToByte(acc[x + 1])
                                    out[outRow + x + 2] = clampToByte(acc[x + 2])
                                    out[outRow + x + 3] = 255
                                    x += 4
                                }
                            } else if isRGBA {
                                var x = 0
                                while x < rowFloats {
                                    let a = acc[x + 3]
                                    if a < 0.5 {
                                        out[outRow + x] = 0
                                        out[outRow + x + 1] = 0
                                        out[outRow + x + 2] = 0
                                        out[outRow + x + 3] = 0
                                    } else {
                                        let scale = 255 / a
                                        out[outRow + x] = clampToByte(acc[x] * scale)
                                        out[outRow + x + 1] = clampToByte(acc[x + 1] * scale)
                                        out[outRow + x + 2] = clampToByte(acc[x + 2] * scale)
                                        out[outRow + x + 3] = clampToByte(a)
                                    }
                                    x += 4
                                }
                            } else {
                                for i in 0..<rowFloats { out[outRow + i] = clampToByte(acc[i]) }
                            }
                        }
                    }
                }
            }
        }
    }
}

@inline(__always)
private func clampToByte(_ v: Float) -> UInt8 {
    // Truncation of a positive value is floor; `rounded(.down)` would be a libm call per channel on baseline x86-64.
    let r = v + 0.5
    return r <= 0 ? 0 : (r >= 255 ? 255 : UInt8(r))
}

/// For each output index along one axis: the first source index, how many source indices contribute, and their
/// normalised weights (flattened, starting at `offsets[i]`).
struct ResamplingWeights {
    var starts: [Int] = []
    var counts: [Int] = []
    var offsets: [Int] = []
    var weights: [Float] = []

    init(source: Int, destination: Int) {
        starts.reserveCapacity(destination)
        counts.reserveCapacity(destination)
        offsets.reserveCapacity(destination)
        let scale = Double(source) / Double(destination)
        for i in 0..<destination {
            offsets.append(weights.count)
            if destination < source {
                // Box filter with fractional coverage at both edges.
                let lo = Double(i) * scale
                let hi = Double(i + 1) * scale
                let first = Int(lo.rounded(.down))
                let last = min(source - 1, Int(hi.rounded(.up)) - 1)
                starts.append(first)
                var n = 0
                for j in first...max(first, last) {
                    let w = min(hi, Double(j + 1)) - max(lo, Double(j))
                    weights.append(Float(max(0, w) / scale))
                    n += 1
                }
                counts.append(n)
            } else {
                // Bilinear between the two nearest source centres.
                let centre = (Double(i) + 0.5) * scale - 0.5
                let j0 = Int(centre.rounded(.down))
                let f = Float(centre - Double(j0))
                let a = min(max(j0, 0), source - 1)
                let b = min(max(j0 + 1, 0), source - 1)
                starts.append(a)
                if a == b || f == 0 {
                    weights.append(1)
                    counts.append(1)
                } else {
                    weights.append(1 - f)
                    weights.append(f)
                    counts.append(2)
                }
            }
        }
    }

    /// The four tables as unsafe buffers, so that the per-pixel loops read them without bounds checks.
    func withUnsafeBuffers<R>(
        _ body: (
            UnsafeBufferPointer<Int>, UnsafeBufferPointer<Int>, UnsafeBufferPointer<Int>, UnsafeBufferPointer<Float>
        ) throws -> R
    ) rethrows -> R {
        try starts.withUnsafeBufferPointer { s in
            try counts.withUnsafeBufferPointer { c in
                try offsets.withUnsafeBufferPointer { o in
                    try weights.withUnsafeBufferPointer { w in try body(s, c, o, w) }
                }
            }
        }
    }
}
