/// The per-row arithmetic of ``PixelBuffer/resampled(to:)``, in integers, for one kind of input.
///
/// Pass 1 (``resampleRow(_:_:shift:into:)``) turns one source row into one intermediate row of channel sums
/// (22-bit weights, then shifted right by `shift` with rounding). Pass 2 sums the intermediate rows of an output
/// row's vertical taps and ``finishRow(_:count:shift:into:)`` turns those sums into bytes. No value can overflow:
/// every weight is non-negative and each output's weights sum to exactly 1.0, so a sum never exceeds the largest
/// input times 1.0 (see ``PixelBuffer/resampled(to:)`` for the widths chosen).
enum ResamplingKernel: Equatable {
    /// One byte a pixel, averaged as it is.
    case gray
    /// RGBA whose alpha is 255 everywhere: colour averaged as it is, alpha written as 255.
    case opaque
    /// RGBA with some alpha below 255: colour is weighted by alpha (premultiplied) on the way in and divided by
    /// the averaged alpha on the way out. `isPremultipliedInput`: the colour bytes are premultiplied already.
    case transparent(isPremultipliedInput: Bool)

    /// Whether colour is weighted by alpha (`.transparent`): intermediate values then need 16 bits before any
    /// fraction.
    var isPremultiplying: Bool {
        if case .transparent = self { true } else { false }
    }

    /// Pass 1 for one row: `source` points at the row's first byte, `row` receives `channels × outputWidth`
    /// values. `table` must be padded (every output has `table.taps` taps) with 22-bit weights.
    func resampleRow<Row: FixedWidthInteger & UnsignedInteger>(
        _ source: UnsafeRawPointer, _ table: ResamplingWeights.Table, shift: Int, into row: UnsafeMutablePointer<Row>
    ) {
        // The common tap counts get their own copy of the loop with the count a constant, fully unrolled.
        switch table.taps {
        case 1: resampleRow(source, table, taps: 1, shift: shift, into: row)
        case 2: resampleRow(source, table, taps: 2, shift: shift, into: row)
        case 3: resampleRow(source, table, taps: 3, shift: shift, into: row)
        case 4: resampleRow(source, table, taps: 4, shift: shift, into: row)
        case 5: resampleRow(source, table, taps: 5, shift: shift, into: row)
        default: resampleRow(source, table, taps: table.taps, shift: shift, into: row)
        }
    }

    @inline(__always)
    private func resampleRow<Row: FixedWidthInteger & UnsignedInteger>(
        _ source: UnsafeRawPointer, _ table: ResamplingWeights.Table, taps: Int, shift: Int,
        into row: UnsafeMutablePointer<Row>
    ) {
        let starts = table.starts.baseAddress.unsafelyUnwrapped
        var w = table.weights.baseAddress.unsafelyUnwrapped
        let width = table.starts.count
        let half32: UInt32 = 1 &<< UInt32(shift &- 1)
        let half64 = UInt64(half32)
        switch self {
        case .gray:
            let bytes = source.assumingMemoryBound(to: UInt8.self)
            for x in 0..<width {
                let p = bytes + starts[x]
                var sum: UInt32 = 0  // ≤ 255 × 2²²
                for k in 0..<taps { sum &+= UInt32(p[k]) &* w[k] }
                row[x] = Row(truncatingIfNeeded: (sum &+ half32) &>> UInt32(shift))
                w += taps
            }
        case .opaque:
            // Two channels per 64-bit multiply: R and B in one word, G and A in the other, 32 bits apart. A
            // lane's sum stays below 2³⁰, so it never carries into its neighbour.
            let mask: UInt64 = 0x0000_00FF_0000_00FF
            let opaque = Row(truncatingIfNeeded: 255 &<< (22 &- shift))
            for x in 0..<width {
                let p = source + starts[x] &* 4
                var rb: UInt64 = 0
                var ga: UInt64 = 0
                for k in 0..<taps {
                    let v = UInt64(p.loadUnaligned(fromByteOffset: k &* 4, as: UInt32.self))
                    let spread = v | (v &<< 16)
                    let weight = UInt64(w[k])
                    rb &+= (spread & mask) &* weight
                    ga &+= ((spread &>> 8) & mask) &* weight
                }
                let o = row + x &* 4
                o[0] = Row(truncatingIfNeeded: ((rb & 0xFFFF_FFFF) &+ half64) &>> UInt64(shift))
                o[1] = Row(truncatingIfNeeded: ((ga & 0xFFFF_FFFF) &+ half64) &>> UInt64(shift))
                o[2] = Row(truncatingIfNeeded: ((rb &>> 32) &+ half64) &>> UInt64(shift))
                o[3] = opaque
                w += taps
            }
        case .transparent(let isPremultipliedInput):
            for x in 0..<width {
                let p = source + starts[x] &* 4
                var r: UInt64 = 0
                var g: UInt64 = 0
                var b: UInt64 = 0
                var a: UInt64 = 0
                for k in 0..<taps {
                    let v = p.loadUnaligned(fromByteOffset: k &* 4, as: UInt32.self)
                    let alpha = v &>> 24
                    // Straight colour × alpha, or premultiplied colour × 255: the same scale either way, so that
                    // colour ÷ alpha comes out as straight colour.
                    let m = isPremultipliedInput ? 255 : alpha
                    let weight = UInt64(w[k])
                    r &+= UInt64((v & 0xFF) &* m) &* weight
                    g &+= UInt64(((v &>> 8) & 0xFF) &* m) &* weight
                    b &+= UInt64(((v &>> 16) & 0xFF) &* m) &* weight
                    a &+= UInt64(alpha) &* weight
                }
                let o = row + x &* 4
                o[0] = Row(truncatingIfNeeded: (r &+ half64) &>> UInt64(shift))
                o[1] = Row(truncatingIfNeeded: (g &+ half64) &>> UInt64(shift))
                o[2] = Row(truncatingIfNeeded: (b &+ half64) &>> UInt64(shift))
                o[3] = Row(truncatingIfNeeded: (a &+ half64) &>> UInt64(shift))
                w += taps
            }
        }
    }

    /// Pass 2's last step: the vertical sums of one output row (`count` values, in units of `1 << shift` per
    /// input unit) to bytes, rounded to nearest.
    func finishRow<Sum: FixedWidthInteger & UnsignedInteger>(
        _ sums: UnsafeMutablePointer<Sum>, count: Int, shift: Int, into out: UnsafeMutablePointer<UInt8>
    ) {
        let half: Sum = 1 &<< Sum(shift &- 1)
        let shift = Sum(shift)
        guard case .transparent = self else {
            for i in 0..<count { out[i] = UInt8(truncatingIfNeeded: min((sums[i] &+ half) &>> shift, 255)) }
            return
        }
        var i = 0
        while i < count {
            let alpha = sums[i + 3]
            if alpha < half {  // under half a unit of alpha: transparent black, as rounding alpha would say
                out[i] = 0
                out[i + 1] = 0
                out[i + 2] = 0
                out[i + 3] = 0
            } else {
                // Colour sum ÷ alpha sum is the straight colour (see pass 1); one division a pixel.
                let scale = 1 / Double(alpha)
                out[i] = Self.roundedByte(Double(sums[i]) * scale)
                out[i + 1] = Self.roundedByte(Double(sums[i + 1]) * scale)
                out[i + 2] = Self.roundedByte(Double(sums[i + 2]) * scale)
                out[i + 3] = UInt8(truncatingIfNeeded: min((alpha &+ half) &>> shift, 255))
            }
            i += 4
        }
    }

    @inline(__always)
    private static func roundedByte(_ v: Double) -> UInt8 {
        // Truncating a non-negative value is floor; `rounded()` would be a libm call on baseline x86-64.
        let r = v + 0.5
        return r >= 255 ? 255 : UInt8(r)
    }
}
