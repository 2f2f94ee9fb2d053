extension PixelBuffer {
    /// The image after `passes` run horizontally then vertically, edges clamped, premultiplied for RGBA.
    func blurred(passes: [BlurPass]) throws -> PixelBuffer {
        let image = ImageProcessors.straight(self)
        let w = width
        let h = height
        switch format {
        case .rgba8:
            return try PixelBuffer(width: w, height: h, format: .rgba8) { out in
                image.bytes.withUnsafeBufferPointer { src in
                    SeparableBlur<SIMD4<Float>>.run(
                        width: w, height: h, passes: passes,
                        load: { y, row in
                            let s = y * w * 4
                            for x in 0..<w {
                                let a = Float(src[s + x * 4 + 3])
                                let m = a / 255
                                row[x] = SIMD4(
                                    Float(src[s + x * 4]) * m, Float(src[s + x * 4 + 1]) * m,
                                    Float(src[s + x * 4 + 2]) * m, a)
                            }
                        },
                        store: { x0, stripWidth, strip in
                            for y in 0..<h {
                                var o = (y * w + x0) * 4
                                for i in y * stripWidth..<(y + 1) * stripWidth {
                                    let v = strip[i]
                                    if v[3] < 0.5 {
                                        out[o] = 0
                                        out[o + 1] = 0
                                        out[o + 2] = 0
                                        out[o + 3] = 0
                                    } else {
                                        let c = v * (255 / v[3])
                                        out[o] = byte(c[0])
                                        out[o + 1] = byte(c[1])
                                        out[o + 2] = byte(c[2])
                                        out[o + 3] = byte(v[3])
                                    }
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
                        width: w, height: h, passes: passes,
                        load: { y, row in for x in 0..<w { row[x] = Float(src[y * w + x]) } },
                        store: { x0, stripWidth, strip in
                            for y in 0..<h {
                                for i in 0..<stripWidth { out[y * w + x0 + i] = byte(strip[y * stripWidth + i]) }
                            }
                        })
                }
            }
        }
    }
}

@inline(__always)
private func byte(_ v: Float) -> UInt8 {
    let r = (v + 0.5).rounded(.down)
    return r <= 0 ? 0 : (r >= 255 ? 255 : UInt8(r))
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

/// Separable blurs: horizontal passes row by row, then vertical passes strip by strip.
enum SeparableBlur<Lane: BlurLane> {
    // Vertical passes run on strips of this many columns so that a strip's working set (two strip copies of
    // `height` rows) stays in the L2 cache instead of streaming the whole image through memory once per pass.
    static var stripWidth: Int { 32 }

    /// Loads each row with `load(y, row)`, blurs it, then hands each finished vertical strip to
    /// `store(firstColumn, stripWidth, strip)` (row-major, `stripWidth` lanes a row).
    static func run(
        width w: Int, height h: Int, passes: [BlurPass],
        load: (Int, UnsafeMutablePointer<Lane>) -> Void,
        store: (Int, Int, UnsafePointer<Lane>) -> Void
    ) {
        let image = UnsafeMutablePointer<Lane>.allocate(capacity: w * h)
        defer { image.deallocate() }
        let rowA = UnsafeMutablePointer<Lane>.allocate(capacity: w)
        defer { rowA.deallocate() }
        let rowB = UnsafeMutablePointer<Lane>.allocate(capacity: w)
        defer { rowB.deallocate() }

        // Horizontal: each row is blurred in two scratch rows while it sits in L1, then stored once.
        for y in 0..<h {
            load(y, rowA)
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

        let maxStrip = min(stripWidth, w)
        let stripA = UnsafeMutablePointer<Lane>.allocate(capacity: maxStrip * h)
        defer { stripA.deallocate() }
        let stripB = UnsafeMutablePointer<Lane>.allocate(capacity: maxStrip * h)
        defer { stripB.deallocate() }
        let sums = UnsafeMutablePointer<Lane>.allocate(capacity: maxStrip)
        defer { sums.deallocate() }

        var x0 = 0
        while x0 < w {
            let sw = min(maxStrip, w - x0)
            var src = UnsafePointer(image + x0)
            var srcStride = w
            var dst = stripA
            for pass in passes {
                switch pass {
                case .box(let r): verticalBox(src, srcStride, dst, sw, width: sw, height: h, radius: r, sums: sums)
                case .kernel(let weights): verticalKernel(src, srcStride, dst, sw, width: sw, height: h, weights: weights)
                }
                src = UnsafePointer(dst)
                srcStride = sw
                dst = dst == stripA ? stripB : stripA
            }
            if srcStride != sw {  // no passes: copy the strip out
                for y in 0..<h { (stripA + y * sw).update(from: src + y * srcStride, count: sw) }
                src = UnsafePointer(stripA)
            }
            store(x0, sw, src)
            x0 += sw
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
        let r = weights.count / 2
        weights.withUnsafeBufferPointer { k in
            for x in 0..<n {
                var sum = Lane.zero
                if x >= r && x + r < n {
                    let base = src + (x - r)
                    for i in 0..<k.count { sum = sum + base[i] * k[i] }
                } else {
                    for i in 0..<k.count { sum = sum + src[min(max(x + i - r, 0), n - 1)] * k[i] }
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
                for x in 0..<width { out[x] = Lane.zero }
                for i in 0..<k.count {
                    let row = src + min(max(y + i - r, 0), h - 1) * srcStride
                    let weight = k[i]
                    for x in 0..<width { out[x] = out[x] + row[x] * weight }
                }
            }
        }
    }
}
