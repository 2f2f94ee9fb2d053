import ImagoCore

extension JPEGProgressiveDC {
    /// The 1/8-scale image, ceil(width / 8) × ceil(height / 8): `gray8` for one component, else YCbCr → `rgba8`.
    func image() -> PixelBuffer? {
        guard let frame else { return nil }
        let width = (frame.width + 7) / 8
        let height = (frame.height + 7) / 8
        let planes = frame.components.map { component in
            Plane(component: component, maxH: frame.maxH, maxV: frame.maxV, coefficients: frame.coefficients)
        }
        if planes.count == 1 {
            return try? PixelBuffer(width: width, height: height, format: .gray8) { out in
                let p = out.bindMemory(to: UInt8.self)
                var row = [UInt8](repeating: 0, count: width)
                for y in 0..<height {
                    planes[0].fill(&row, y: y)
                    for x in 0..<width { p[y * width + x] = row[x] }
                }
            }.assumingOpaque()
        }
        guard planes.count == 3 else { return nil }
        return try? PixelBuffer(width: width, height: height, format: .rgba8) { out in
            let p = out.bindMemory(to: UInt8.self)
            var luma = [UInt8](repeating: 0, count: width)
            var cb = [UInt8](repeating: 0, count: width)
            var cr = [UInt8](repeating: 0, count: width)
            let t = ColorTables.shared
            for y in 0..<height {
                planes[0].fill(&luma, y: y)
                planes[1].fill(&cb, y: y)
                planes[2].fill(&cr, y: y)
                var o = y * width * 4
                for x in 0..<width {
                    // jdcolor.c ycc_rgb_convert: R = Y + Crr[Cr], G = Y + (Cbg[Cb] + Crg[Cr]) >> 16, B = Y + Cbb[Cb].
                    let l = Int32(luma[x])
                    let b = Int(cb[x])
                    let r = Int(cr[x])
                    p[o] = clamp(l + t.crToR[r])
                    p[o + 1] = clamp(l + ((t.cbToG[b] + t.crToG[r]) >> 16))
                    p[o + 2] = clamp(l + t.cbToB[b])
                    p[o + 3] = 255
                    o += 4
                }
            }
        }.assumingOpaque()
    }

    @inline(__always) private func clamp(_ v: Int32) -> UInt8 { UInt8(truncatingIfNeeded: min(max(v, 0), 255)) }

    /// One component's samples at 1/8 scale, upsampled to the output grid.
    struct Plane {
        let component: Component
        /// How many output pixels one block covers horizontally and vertically.
        let rh: Int
        let rv: Int
        /// Samples per block, as `jpeg_idct_1x1` computes them (range_limit wraps modulo 1024, as libjpeg's does).
        let samples: [UInt8]

        init(component: Component, maxH: Int, maxV: Int, coefficients: [Int16]) {
            self.component = component
            rh = maxH / component.h
            rv = maxV / component.v
            let q = component.quantDC ?? 0
            let range = component.offset..<(component.offset + component.stride * component.rows)
            samples = coefficients[range].map { coefficient in
                let dc = (Int32(coefficient) * q + 4) >> 3  // DEQUANTIZE, then DESCALE(…, 3)
                return Self.rangeLimit[Int(dc & 1023)]
            }
        }

        /// libjpeg's post-IDCT range limit table indexed by `x & 1023`: x + 128 for x in −128…127, 255 above,
        /// 0 below, wrapping beyond ±512 (libjpeg's mask, reproduced for corrupt coefficients).
        static let rangeLimit: [UInt8] = (0..<1024).map { i in
            switch i {
            case 0..<128: UInt8(i + 128)
            case 128..<512: 255
            case 512..<896: 0
            default: UInt8(i - 896)
            }
        }

        @inline(__always) private func sample(_ bx: Int, _ by: Int) -> Int {
            Int(samples[by * component.stride + bx])
        }

        /// Writes output row `y`. Replicated for ratios other than 2×2 (libjpeg's `int_upsample` and
        /// `h2v1_upsample`, since it turns fancy upsampling off at 1/8 scale); for 2×2 the DC samples are
        /// interpolated with libjpeg's triangle weights (9, 3, 3, 1)/16, the edges repeating the last block.
        func fill(_ row: inout [UInt8], y: Int) {
            if rh == 2 && rv == 2 {
                let by = y / 2
                let otherY = min(max(y % 2 == 0 ? by - 1 : by + 1, 0), component.blocksHigh - 1)
                for x in row.indices {
                    let bx = x / 2
                    let otherX = min(max(x % 2 == 0 ? bx - 1 : bx + 1, 0), component.blocksWide - 1)
                    let near = 3 * sample(bx, by) + sample(bx, otherY)
                    let far = 3 * sample(otherX, by) + sample(otherX, otherY)
                    row[x] = UInt8((3 * near + far + 8) >> 4)
                }
                return
            }
            let by = y / rv
            if rh == 1 {
                let start = by * component.stride
                for x in row.indices { row[x] = samples[start + x] }
            } else {
                for x in row.indices { row[x] = UInt8(sample(x / rh, by)) }
            }
        }
    }

    /// libjpeg-turbo's `jdcolor.c` tables (`build_ycc_rgb_table`, SCALEBITS 16).
    struct ColorTables: Sendable {
        let crToR: [Int32]
        let cbToB: [Int32]
        let crToG: [Int32]
        let cbToG: [Int32]

        static let shared = ColorTables()

        private init() {
            let half: Int32 = 1 << 15
            func fix(_ x: Double) -> Int32 { Int32(x * 65536 + 0.5) }
            let xs = (0..<256).map { Int32($0) - 128 }
            crToR = xs.map { (fix(1.40200) * $0 + half) >> 16 }
            cbToB = xs.map { (fix(1.77200) * $0 + half) >> 16 }
            crToG = xs.map { -fix(0.71414) * $0 }
            cbToG = xs.map { -fix(0.34414) * $0 + half }
        }
    }
}
