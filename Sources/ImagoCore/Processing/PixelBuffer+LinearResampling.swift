import Foundation

extension PixelBuffer {
    /// Resamples to exactly `size` in linear light, as imgproxy's `IMGPROXY_USE_LINEAR_COLORSPACE` does: the
    /// values are decoded to light (`curve`, default sRGB's transfer curve), averaged with the same weights as
    /// ``resampled(to:)`` (box filter shrinking, bilinear enlarging), and encoded again. Fine light-and-dark
    /// detail then keeps its brightness (a black-and-white checkerboard halved is sRGB 188, the grey of half the
    /// light, not 128), at about 1.2 times the cost of ``resampled(to:)`` (BENCHMARKS.md, stop 37).
    ///
    /// Colour under alpha is weighted by alpha (premultiplied in linear light), so transparent pixels never bleed
    /// into opaque ones; the result has straight alpha. Gray images stay gray. Single-precision arithmetic; the
    /// result is within 1 level of exact arithmetic. Returns `self` when the size is unchanged.
    ///
    /// - Throws: ``PixelBuffer/Error/invalidDimensions(width:height:)`` for an empty or overflowing size.
    public func resampledInLinearLight(to size: PixelSize, curve: TransferCurve = .sRGB) throws -> PixelBuffer {
        if size == self.size && alphaMode == .straight { return self }
        let source = alphaMode == .premultiplied ? unpremultiplied() : self
        let channels = source.format.bytesPerPixel
        let hasAlpha = channels == 4 && !source.isKnownOpaque && source.hasTransparency
        let horizontal = ResamplingWeights.shared(source: width, destination: size.width)
        let vertical = ResamplingWeights.shared(source: height, destination: size.height)
        let (hScale, vScale) = (1 / Float(horizontal.one), 1 / Float(vertical.one))
        let rowCount = size.width * channels
        // Two horizontally resampled rows (slot = source row parity), as in the integer path, and the sums.
        var slots = [Float](repeating: 0, count: 2 * rowCount)
        var sums = [Float](repeating: 0, count: rowCount)
        var slotSource = (-1, -1)
        let toLinear = curve.toLinear
        let toSRGB = curve.fromLinear
        let steps = Float(toSRGB.count - 1)
        var result = try PixelBuffer(width: size.width, height: size.height, format: source.format) { out in
            let out = out.baseAddress!.assumingMemoryBound(to: UInt8.self)
            source.withUnsafeBytes { raw in
                let src = raw.baseAddress!.assumingMemoryBound(to: UInt8.self)
                horizontal.withUnsafeTable { h in
                    vertical.withUnsafeTable { v in
                        slots.withUnsafeMutableBufferPointer { slots in
                            sums.withUnsafeMutableBufferPointer { sums in
                                for y in 0..<size.height {
                                    for k in 0..<v.counts[y] {
                                        let sourceRow = v.starts[y] + k
                                        let isOdd = sourceRow & 1 == 1
                                        let row = slots.baseAddress! + (isOdd ? rowCount : 0)
                                        if (isOdd ? slotSource.1 : slotSource.0) != sourceRow {
                                            let line = src + sourceRow * source.bytesPerRow
                                            for x in 0..<size.width {
                                                var acc: (Float, Float, Float, Float) = (0, 0, 0, 0)
                                                for t in 0..<h.counts[x] {
                                                    let weight = Float(h.weights[h.offsets[x] + t]) * hScale
                                                    let p = line + (h.starts[x] + t) * channels
                                                    if channels == 1 {
                                                        acc.0 += toLinear[Int(p[0])] * weight
                                                    } else {
                                                        let a = hasAlpha ? Float(p[3]) / 255 * weight : weight
                                                        acc.0 += toLinear[Int(p[0])] * a
                                                        acc.1 += toLinear[Int(p[1])] * a
                                                        acc.2 += toLinear[Int(p[2])] * a
                                                        acc.3 += a
                                                    }
                                                }
                                                let o = row + x * channels
                                                o[0] = acc.0
                                                if channels == 4 { (o[1], o[2], o[3]) = (acc.1, acc.2, acc.3) }
                                            }
                                            if isOdd { slotSource.1 = sourceRow } else { slotSource.0 = sourceRow }
                                        }
                                        let weight = Float(v.weights[v.offsets[y] + k]) * vScale
                                        if k == 0 {
                                            for i in 0..<rowCount { sums[i] = row[i] * weight }
                                        } else {
                                            for i in 0..<rowCount { sums[i] += row[i] * weight }
                                        }
                                    }
                                    let target = out + y * rowCount
                                    func encoded(_ light: Float) -> UInt8 {
                                        toSRGB[Int((min(max(light, 0), 1) * steps).rounded())]
                                    }
                                    var i = 0
                                    while i < rowCount {
                                        if channels == 1 {
                                            target[i] = encoded(sums[i])
                                        } else {
                                            let alpha = sums[i + 3]
                                            let divisor = alpha > 0 ? alpha : 1
                                            target[i] = encoded(sums[i] / divisor)
                                            target[i + 1] = encoded(sums[i + 1] / divisor)
                                            target[i + 2] = encoded(sums[i + 2] / divisor)
                                            target[i + 3] = UInt8(min(max(alpha * 255, 0), 255).rounded())
                                        }
                                        i += channels
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        if !hasAlpha, channels == 4 { result.opaqueMark = true }
        return result
    }

    /// ``resampledInLinearLight(to:curve:)`` (through `curve`, default sRGB's) when `inLinearLight`, else
    /// ``resampled(to:)``: the one choice every resize that offers both makes.
    ///
    /// - Throws: ``PixelBuffer/Error/invalidDimensions(width:height:)`` for an empty or overflowing size.
    public func resampled(
        to size: PixelSize, inLinearLight: Bool, curve: TransferCurve = .sRGB
    ) throws -> PixelBuffer {
        inLinearLight ? try resampledInLinearLight(to: size, curve: curve) : try resampled(to: size)
    }
}
