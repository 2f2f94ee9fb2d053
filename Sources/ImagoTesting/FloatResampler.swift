import ImagoCore

// The resampler in Float arithmetic (scalar, streamed through a ring of rows): the baseline of imago-bench's
// `processors` resample rows and the accuracy reference of ImagoCoreTests' ResamplingAccuracyTests. It differs
// from ImagoCore's `ResamplingWeights` on purpose (Float weights, no fixed-point quantisation): a reference that
// shared the production code's arithmetic could not catch its rounding errors.

extension ImagoTesting {
    /// `image` resampled to `size` in Float arithmetic: area averaging when shrinking, bilinear when enlarging,
    /// premultiplied for RGBA with transparency.
    public static func floatResampled(_ image: PixelBuffer, to size: PixelSize) throws -> PixelBuffer {
        if size == image.size && image.alphaMode == .straight { return image }
        _ = try PixelBuffer.checkedByteCount(width: size.width, height: size.height, format: image.format)
        let channels = image.format.bytesPerPixel
        let horizontal = FloatResamplingWeights(source: image.width, destination: size.width)
        let vertical = FloatResamplingWeights(source: image.height, destination: size.height)
        let isRGBA = image.format == .rgba8
        let inputIsStraight = image.alphaMode == .straight
        // Every alpha 255 (all JPEGs, most photos): premultiplying is the identity, so both the multiply on the
        // way in and the divide on the way out are skipped. Checking costs one byte read in four.
        let isOpaque = isRGBA && inputIsStraight && !image.hasTransparency

        // Two separable passes, streamed: each source row is resampled horizontally (premultiplied, as floats)
        // once, into a ring that holds just the rows one output row's vertical taps need; output rows then sum
        // their taps from the ring. The window of source rows only moves forward, so a ring of `maxTaps` rows
        // never evicts a row still needed. (A whole-image float intermediate would be 16 bytes per pixel of
        // source height × output width: 145 MB for 4032x3024 → 3000x2250, most of the cost in page faults.)
        let rowFloats = size.width * channels
        let ringRows = max(1, vertical.counts.max() ?? 1)
        var ring = [Float](repeating: 0, count: ringRows * rowFloats)
        var ringSource = [Int](repeating: -1, count: ringRows)  // which source row each ring slot holds
        var row = [Float](repeating: 0, count: rowFloats)

        return try PixelBuffer(width: size.width, height: size.height, format: image.format) { out in
            image.bytes.withUnsafeBufferPointer { src in
                ring.withUnsafeMutableBufferPointer { ring in
                    ringSource.withUnsafeMutableBufferPointer { ringSource in
                        row.withUnsafeMutableBufferPointer { acc in
                            horizontal.withUnsafeBuffers { hStarts, hCounts, hOffsets, hWeights in
                                vertical.withUnsafeBuffers { vStarts, vCounts, vOffsets, vWeights in
                                    /// Pass 1 for source row `y`, into ring slot `y % ringRows`.
                                    func resampleRow(_ y: Int) -> Int {
                                        let slot = y % ringRows
                                        let tmpRow = slot * rowFloats
                                        if ringSource[slot] == y { return tmpRow }
                                        ringSource[slot] = y
                                        let srcRow = y * image.bytesPerRow
                                        for x in 0..<size.width {
                                            let start = hStarts[x]
                                            let first = hOffsets[x]
                                            let o = tmpRow + x * channels
                                            if !isRGBA {
                                                var sum: Float = 0
                                                for k in 0..<hCounts[x] {
                                                    sum += Float(src[srcRow + start + k]) * hWeights[first + k]
                                                }
                                                ring[o] = sum
                                                continue
                                            }
                                            var sum: (Float, Float, Float, Float) = (0, 0, 0, 0)
                                            var p = srcRow + start * 4
                                            if isOpaque {
                                                for k in 0..<hCounts[x] {
                                                    let w = hWeights[first + k]
                                                    sum.0 += Float(src[p]) * w
                                                    sum.1 += Float(src[p + 1]) * w
                                                    sum.2 += Float(src[p + 2]) * w
                                                    p += 4
                                                }
                                            } else {
                                                for k in 0..<hCounts[x] {
                                                    let w = hWeights[first + k]
                                                    let a = Float(src[p + 3])
                                                    let m = inputIsStraight ? a / 255 : 1
                                                    sum.0 += Float(src[p]) * m * w
                                                    sum.1 += Float(src[p + 1]) * m * w
                                                    sum.2 += Float(src[p + 2]) * m * w
                                                    sum.3 += a * w
                                                    p += 4
                                                }
                                            }
                                            ring[o] = sum.0
                                            ring[o + 1] = sum.1
                                            ring[o + 2] = sum.2
                                            ring[o + 3] = sum.3
                                        }
                                        return tmpRow
                                    }

                                    // Pass 2: each output row sums its source rows' vertical taps, then back to
                                    // straight-alpha bytes.
                                    for y in 0..<size.height {
                                        for i in 0..<rowFloats { acc[i] = 0 }
                                        for k in 0..<vCounts[y] {
                                            let w = vWeights[vOffsets[y] + k]
                                            let base = resampleRow(vStarts[y] + k)
                                            for i in 0..<rowFloats { acc[i] += ring[base + i] * w }
                                        }
                                        let outRow = y * rowFloats
                                        if isOpaque {
                                            var x = 0
                                            while x < rowFloats {
                                                out[outRow + x] = floatClampToByte(acc[x])
                                                out[outRow + x + 1] = floatClampToByte(acc[x + 1])
                                                out[outRow + x + 2] = floatClampToByte(acc[x + 2])
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
                                                    out[outRow + x] = floatClampToByte(acc[x] * scale)
                                                    out[outRow + x + 1] = floatClampToByte(acc[x + 1] * scale)
                                                    out[outRow + x + 2] = floatClampToByte(acc[x + 2] * scale)
                                                    out[outRow + x + 3] = floatClampToByte(a)
                                                }
                                                x += 4
                                            }
                                        } else {
                                            for i in 0..<rowFloats { out[outRow + i] = floatClampToByte(acc[i]) }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

@inline(__always)
private func floatClampToByte(_ v: Float) -> UInt8 {
    // Truncation of a positive value is floor; `rounded(.down)` would be a libm call per channel on baseline x86-64.
    let r = v + 0.5
    return r <= 0 ? 0 : (r >= 255 ? 255 : UInt8(r))
}

/// For each output index along one axis: the first source index, how many source indices contribute, and their
/// normalised weights (flattened, starting at `offsets[i]`).
struct FloatResamplingWeights {
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
