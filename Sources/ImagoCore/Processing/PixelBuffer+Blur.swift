extension PixelBuffer {
    /// The image after `passes` run horizontally then vertically, edges clamped, premultiplied for RGBA.
    ///
    /// The float working copy (16 bytes a pixel for RGBA) is kept to about `bandBudgetBytes` (default 16 MiB) by
    /// blurring tall images in bands; the result does not depend on it.
    func blurred(passes: [BlurPass], bandBudgetBytes: Int = 16 << 20) throws -> PixelBuffer {
        let image = ImageProcessors.straight(self)
        let w = width
        let h = height
        switch format {
        case .rgba8:
            return try PixelBuffer(width: w, height: h, format: .rgba8) { out in
                image.bytes.withUnsafeBytes { src in
                    SeparableBlur<SIMD4<Float>>.run(
                        width: w, height: h, passes: passes, bandBudgetBytes: bandBudgetBytes,
                        load: { y, row in
                            var o = y * w * 4
                            for x in 0..<w {
                                let f = floats(
                                    UInt32(littleEndian: src.loadUnaligned(fromByteOffset: o, as: UInt32.self)))
                                let m = f[3] * (1 / 255)
                                row[x] = f * SIMD4(m, m, m, 1)
                                o += 4
                            }
                        },
                        store: { y0, x0, stripWidth, rows, strip in
                            for y in 0..<rows {
                                var o = ((y0 + y) * w + x0) * 4
                                for i in y * stripWidth..<(y + 1) * stripWidth {
                                    let v = strip[i]
                                    var word: UInt32 = 0
                                    if v[3] >= 0.5 {
                                        let s = 255 / v[3]
                                        word = packed(v * SIMD4(s, s, s, 1))
                                    }
                                    out.storeBytes(of: word.littleEndian, toByteOffset: o, as: UInt32.self)
                                    o += 4
                                }
                            }
                        })
                }
            }
        case .gray8:
            return try PixelBuffer(width: w, height: h, format: .gray8) { out in
                image.bytes.withUnsafeBufferPointer { src in
                    SeparableBlur<Float>.run(
                        width: w, height: h, passes: passes, bandBudgetBytes: bandBudgetBytes,
                        load: { y, row in for x in 0..<w { row[x] = Float(src[y * w + x]) } },
                        store: { y0, x0, stripWidth, rows, strip in
                            for y in 0..<rows {
                                for i in 0..<stripWidth { out[(y0 + y) * w + x0 + i] = byte(strip[y * stripWidth + i]) }
                            }
                        })
                }
            }
        }
    }
}

// Bytes R G B A (little-endian word) to floats without per-lane conversions: an integer below 2²³ or'ed into
// the mantissa of 2²³ is that float plus 2²³.
@inline(__always)
private func floats(_ word: UInt32) -> SIMD4<Float> {
    let lanes = SIMD4<UInt32>(word & 0xFF, (word >> 8) & 0xFF, (word >> 16) & 0xFF, word >> 24)
    return unsafeBitCast(lanes | 0x4B00_0000, to: SIMD4<Float>.self) - 8_388_608
}

// Floats to bytes R G B A in a little-endian word, clamped to 0…255 and rounded to nearest (halves to even) by
// adding 1.5 × 2²³, which leaves the rounded integer in the low mantissa bits: all vector work, no libm calls.
@inline(__always)
private func packed(_ v: SIMD4<Float>) -> UInt32 {
    let c = pointwiseMin(pointwiseMax(v, .zero), SIMD4(repeating: 255))
    let bits = unsafeBitCast(c + 12_582_912, to: SIMD4<UInt32>.self) & 0xFF
    return bits[0] | bits[1] << 8 | bits[2] << 16 | bits[3] << 24
}

// Clamp first, then truncate v + 0.5 (rounds half up): `rounded()` would be a libm call per channel without
// SSE4.1, which made this conversion cost as much as all the blur passes together. NaN maps to 0.
@inline(__always)
private func byte(_ v: Float) -> UInt8 {
    UInt8((v > 0 ? (v < 255 ? v : 255) : 0) + 0.5)
}

/// What one channel group of a pixel is while blurring: one Float (gray) or four (premultiplied RGBA).
protocol BlurLane {
    static var zero: Self { get }
    static func + (lhs: Self, rhs: Self) -> Self
    static func - (lhs: Self, rhs: Self) -> Self
    static func * (lhs: Self, rhs: Float) -> Self
}

extension Float: BlurLane {}
extension SIMD4: BlurLane where Scalar == Float {}

/// One 1-D filter applied along both axes.
enum BlurPass: Equatable {
    /// A box of 2 × radius + 1 pixels, by running sums: O(1) per pixel whatever the radius.
    case box(radius: Int)
    /// A symmetric kernel of odd length (weights summing to 1), by direct convolution: O(length) per pixel.
    case kernel([Float])
}

/// Separable blurs: horizontal passes row by row, then vertical passes strip by strip, over horizontal bands.
enum SeparableBlur<Lane: BlurLane> {
    // Vertical passes run on strips of this many columns so that a strip's working set (two strip copies of
    // the band's rows) stays in cache instead of streaming the whole band through memory once per pass.
    static var stripWidth: Int { 32 }

    /// Loads rows with `load(y, row)`, blurs them, and hands each finished piece to
    /// `store(firstRow, firstColumn, stripWidth, rows, strip)` (row-major, `stripWidth` lanes a row).
    ///
    /// The float working copy is limited to about `bandBudgetBytes`: a taller image is blurred in bands of rows,
    /// each read with a margin of as many rows as the passes can carry a value (the sum of their radii), so that
    /// the rows kept are exactly those of a blur of the whole image.
    static func run(
        width w: Int, height h: Int, passes: [BlurPass], bandBudgetBytes: Int,
        load: (Int, UnsafeMutablePointer<Lane>) -> Void,
        store: (Int, Int, Int, Int, UnsafePointer<Lane>) -> Void
    ) {
        let reach = passes.reduce(0) { total, pass in
            switch pass {
            case .box(let r): total + r
            case .kernel(let weights): total + weights.count / 2
            }
        }
        let budgetRows = bandBudgetBytes / (w * MemoryLayout<Lane>.stride)
        let bandRows = max(budgetRows - 2 * reach, 4 * reach, 16)
        let bufferRows = min(h, bandRows + 2 * reach)

        let image = UnsafeMutablePointer<Lane>.allocate(capacity: w * bufferRows)
        defer { image.deallocate() }
        let rowA = UnsafeMutablePointer<Lane>.allocate(capacity: w)
        defer { rowA.deallocate() }
        let rowB = UnsafeMutablePointer<Lane>.allocate(capacity: w)
        defer { rowB.deallocate() }
        let maxStrip = min(stripWidth, w)
        let stripA = UnsafeMutablePointer<Lane>.allocate(capacity: maxStrip * bufferRows)
        defer { stripA.deallocate() }
        let stripB = UnsafeMutablePointer<Lane>.allocate(capacity: maxStrip * bufferRows)
        defer { stripB.deallocate() }
        let sums = UnsafeMutablePointer<Lane>.allocate(capacity: maxStrip)
        defer { sums.deallocate() }

        var b0 = 0
        while b0 < h {
            let b1 = min(b0 + bandRows, h)
            let top = max(b0 - reach, 0)
            let bh = min(b1 + reach, h) - top

            // Horizontal: each row is blurred in two scratch rows while it sits in L1, then stored once.
            for y in 0..<bh {
                load(top + y, rowA)
                var src = rowA
                var dst = rowB
                for (k, pass) in passes.enumerated() {
                    if k == passes.count - 1 { dst = image + y * w }
                    switch pass {
                    case .box(let r): horizontalBox(src, dst, count: w, radius: r)
                    case .kernel(let weights): horizontalKernel(src, dst, count: w, weights: weights)
                    }
                    swap(&src, &dst)
                }
                if passes.isEmpty { (image + y * w).update(from: rowA, count: w) }
            }

            // Vertical, strip by strip; rows past the band's edges are clamped, which only disturbs the margin.
            var x0 = 0
            while x0 < w {
                let sw = min(maxStrip, w - x0)
                var src = UnsafePointer(image + x0)
                var srcStride = w
                var dst = stripA
                for pass in passes {
                    switch pass {
                    case .box(let r):
                        verticalBox(src, srcStride, dst, sw, width: sw, height: bh, radius: r, sums: sums)
                    case .kernel(let weights):
                        verticalKernel(src, srcStride, dst, sw, width: sw, height: bh, weights: weights)
                    }
                    src = UnsafePointer(dst)
                    srcStride = sw
                    dst = dst == stripA ? stripB : stripA
                }
                if srcStride != sw {  // no passes: copy the strip out
                    for y in 0..<bh { (stripA + y * sw).update(from: src + y * srcStride, count: sw) }
                    src = UnsafePointer(stripA)
                }
                store(b0, x0, sw, b1 - b0, src + (b0 - top) * sw)
                x0 += sw
            }
            b0 = b1
        }
    }

    @inline(__always)
    static func horizontalBox(
        _ src: UnsafeMutablePointer<Lane>, _ dst: UnsafeMutablePointer<Lane>, count n: Int, radius r: Int
    ) {
        if r == 0 {
            if src != dst { dst.update(from: src, count: n) }
            return
        }
        let inv = 1 / Float(2 * r + 1)
        var sum = src[0] * Float(r + 1)
        for i in 1...r { sum = sum + src[min(i, n - 1)] }
        // Three stretches so the inner loop needs no clamping.
        let leftEnd = min(r, n)
        let rightStart = max(leftEnd, n - r - 1)
        for x in 0..<leftEnd {
            dst[x] = sum * inv
            sum = sum + (src[min(x + r + 1, n - 1)] - src[0])
        }
        for x in leftEnd..<rightStart {
            dst[x] = sum * inv
            sum = sum + (src[x + r + 1] - src[x - r])
        }
        for x in rightStart..<n {
            dst[x] = sum * inv
            sum = sum + (src[n - 1] - src[max(x - r, 0)])
        }
    }

    @inline(__always)
    static func horizontalKernel(
        _ src: UnsafeMutablePointer<Lane>, _ dst: UnsafeMutablePointer<Lane>, count n: Int, weights: [Float]
    ) {
        // The kernel is symmetric: pair the taps at ±i so each pair costs one multiply.
        let r = weights.count / 2
        weights.withUnsafeBufferPointer { k in
            for x in 0..<n {
                var sum = src[x] * k[r]
                if x >= r && x + r < n {
                    for i in 1..<(r + 1) { sum = sum + (src[x - i] + src[x + i]) * k[r + i] }
                } else {
                    for i in 1..<(r + 1) { sum = sum + (src[max(x - i, 0)] + src[min(x + i, n - 1)]) * k[r + i] }
                }
                dst[x] = sum
            }
        }
    }

    @inline(__always)
    static func verticalBox(
        _ src: UnsafePointer<Lane>, _ srcStride: Int, _ dst: UnsafeMutablePointer<Lane>, _ dstStride: Int,
        width: Int, height h: Int, radius r: Int, sums: UnsafeMutablePointer<Lane>
    ) {
        if r == 0 {
            for y in 0..<h { (dst + y * dstStride).update(from: src + y * srcStride, count: width) }
            return
        }
        let inv = 1 / Float(2 * r + 1)
        for x in 0..<width { sums[x] = src[x] * Float(r + 1) }
        for i in 1...r {
            let row = src + min(i, h - 1) * srcStride
            for x in 0..<width { sums[x] = sums[x] + row[x] }
        }
        for y in 0..<h {
            let add = src + min(y + r + 1, h - 1) * srcStride
            let sub = src + max(y - r, 0) * srcStride
            let out = dst + y * dstStride
            for x in 0..<width {
                out[x] = sums[x] * inv
                sums[x] = sums[x] + (add[x] - sub[x])
            }
        }
    }

    @inline(__always)
    static func verticalKernel(
        _ src: UnsafePointer<Lane>, _ srcStride: Int, _ dst: UnsafeMutablePointer<Lane>, _ dstStride: Int,
        width: Int, height h: Int, weights: [Float]
    ) {
        let r = weights.count / 2
        weights.withUnsafeBufferPointer { k in
            for y in 0..<h {
                let out = dst + y * dstStride
                let centre = src + y * srcStride
                let weight = k[r]
                for x in 0..<width { out[x] = centre[x] * weight }
                for i in 1..<(r + 1) {
                    let up = src + max(y - i, 0) * srcStride
                    let down = src + min(y + i, h - 1) * srcStride
                    let weight = k[r + i]
                    for x in 0..<width { out[x] = out[x] + (up[x] + down[x]) * weight }
                }
            }
        }
    }
}
