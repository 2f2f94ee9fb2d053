import CColorKernel
import CLCMS2
import ImagoCore

/// The conversion of a matrix/TRC RGB profile (Display P3, Adobe RGB, ProPhoto, PNG gAMA/cHRM — most real
/// files) to sRGB: on CPUs with AVX-512 VBMI by a vector kernel of `CColorKernel` (in-register table look-ups,
/// arithmetic in half floats where the CPU has AVX-512 FP16, else in single precision), elsewhere in three table
/// look-ups and two vector adds a pixel; both are several times cheaper than lcms2's general pipeline for 8-bit
/// RGBA (figures in BENCHMARKS.md, issue 18's sections).
///
/// Exactly the relative colorimetric transform lcms2 computes for such a pair: decode each channel with its tone
/// curve (a 256-entry table), map to the PCS with the source's D50-adapted colorants, back to linear sRGB with
/// the inverse of lcms2's built-in sRGB colorants, then encode with the sRGB curve (a 4,096-entry table, which
/// with the tables fits the L1 cache; within one level of lcms2 everywhere, `MatrixShaperTransformTests`).
/// Perceptual and saturation intents equal relative colorimetric for matrix/TRC profiles; black-point
/// compensation is a no-op when the source's black is zero, the only case accepted. Absolute colorimetric is left
/// to lcms2.
struct MatrixShaperTransform: Sendable {
    /// For each channel, the linearised value of each 8-bit level already multiplied by the matrix column of
    /// that channel, in fixed point (encode-table steps × 2^`fraction`): a pixel's linear sRGB is the integer sum
    /// of three loads, `red[r] &+ green[g] &+ blue[b]` (lane 3 unused). 3 × 256 × 16 bytes, in L1 cache.
    private let red: [SIMD4<Int32>]
    private let green: [SIMD4<Int32>]
    private let blue: [SIMD4<Int32>]
    /// Linear sRGB in `encodeSteps` steps → encoded 8-bit sRGB.
    private let encode: [UInt8]
    private static let encodeSteps = 4095
    /// Fraction bits of the table entries: each is within 1/512 of a step of the exact product.
    private static let fraction: Int32 = 10
    /// The tables of the vector kernel (`CColorKernel`, AVX-512 VBMI, with or without FP16), when this CPU has it
    /// and the source is close enough to sRGB for it (see ``kernelTables(curves:matrix:)``); `nil`: the scalar
    /// tables above.
    let kernel: cimago_color_tables?

    /// The fast transform for `source`, or `nil` when it is not a matrix/TRC RGB profile this covers.
    init?(source: LCMSProfile, destination: LCMSProfile, intent: RenderingIntent) {
        guard intent != .absoluteColorimetric, source.colorSpace == cmsSigRgbData,
            cmsIsMatrixShaper(source.handle) != 0,
            let sourceMatrix = Self.colorants(source), let sRGBMatrix = Self.colorants(destination),
            let inverse = Self.inverse(sRGBMatrix)
        else { return nil }
        // A non-zero black would make black-point compensation (and lcms2's result) differ.
        guard let curves = source.toneTables,
            curves.allSatisfy({ table in table[0].isFinite && abs(table[0]) < 1e-4 && table.allSatisfy(\.isFinite) })
        else { return nil }
        guard let sRGBCurve = LCMSProfile.sRGBCurve() else { return nil }
        defer { cmsFreeToneCurve(sRGBCurve) }
        guard let reversed = cmsReverseToneCurve(sRGBCurve) else { return nil }
        defer { cmsFreeToneCurve(reversed) }
        encode = (0...Self.encodeSteps).map { step in
            let value = cmsEvalToneCurveFloat(reversed, Float(step) / Float(Self.encodeSteps))
            return UInt8(max(0, min(255, (value * 255).rounded())))
        }
        let m = Self.multiply(inverse, sourceMatrix)
        let scale = Double(Self.encodeSteps) * Double(1 << Self.fraction)
        // Entries stay under 2^28 in magnitude, so the sum of three cannot overflow (real profiles: |m| and the
        // curves are a few units at most; anything larger is left to lcms2).
        let limit = Double(1 << 28)
        guard m.joined().allSatisfy({ $0.isFinite }),
            curves.joined().allSatisfy({ abs($0) <= 16 }), m.joined().allSatisfy({ abs($0) * 16 * scale < limit })
        else { return nil }
        func column(_ j: Int, _ curve: [Float]) -> [SIMD4<Int32>] {
            curve.map { value in
                func entry(_ i: Int) -> Int32 { Int32(clamping: Int((m[i][j] * Double(value) * scale).rounded())) }
                return SIMD4(entry(0), entry(1), entry(2), 0)
            }
        }
        (red, green, blue) = (column(0, curves[0]), column(1, curves[1]), column(2, curves[2]))
        kernel = Self.kernelTables(curves: curves, matrix: m)
    }

    /// The vector kernel's tables for these curves and matrix, or `nil` when the CPU lacks AVX-512 VBMI or the
    /// matrix is too far from the identity: both kernels linearise to half floats (and the FP16 one computes in
    /// them), and an off-identity entry over 0.5 (ProPhoto's are about 1) makes cancellations near black lose up to
    /// 2 levels. Display P3 (entries ≤ 0.23) and Adobe RGB (≤ 0.40) stay within one level of lcms2 over all 2^24
    /// colours with either kernel (`ColorKernelTests`). `CColorKernel` picks the kernel (`variant`).
    static func kernelTables(curves: [[Float]], matrix m: [[Double]]) -> cimago_color_tables? {
        guard cimago_color_kernel_available() != 0, curves.count == 3, curves.allSatisfy({ $0.count == 256 }),
            (0..<3).allSatisfy({ i in (0..<3).allSatisfy { j in abs(m[i][j] - (i == j ? 1 : 0)) <= 0.5 } })
        else { return nil }
        var tables = cimago_color_tables()
        let flatCurves = curves.joined().map { $0 }
        let flatMatrix = m.joined().map { $0 }
        let prepared = flatCurves.withUnsafeBufferPointer { c in
            flatMatrix.withUnsafeBufferPointer { cimago_color_kernel_prepare(&tables, c.baseAddress, $0.baseAddress) }
        }
        return prepared == 1 ? tables : nil
    }

    /// Converts RGBA8 `pixels` in place; alpha is left as it is. Through the vector kernel when there is one,
    /// else the scalar tables (``convertWithTables(_:)``).
    func convert(_ pixels: UnsafeMutableRawBufferPointer) {
        guard var tables = kernel else { return convertWithTables(pixels) }
        guard let base = pixels.baseAddress else { return }
        cimago_color_kernel_convert(&tables, base.assumingMemoryBound(to: UInt8.self), pixels.count / 4)
    }

    /// Converts RGBA8 `pixels` in place with the scalar tables (every CPU; the vector kernel's fallback).
    ///
    /// A pixel costs three 16-byte table loads and two vector integer adds (the linearisation and the 3×3 matrix
    /// folded into the tables), a clamp and shift per channel, three encode-table loads and one 4-byte store: no
    /// float conversion, no generic SIMD call.
    func convertWithTables(_ pixels: UnsafeMutableRawBufferPointer) {
        guard let base = pixels.baseAddress else { return }
        let count = pixels.count / 4
        red.withUnsafeBufferPointer { r in
            green.withUnsafeBufferPointer { g in
                blue.withUnsafeBufferPointer { b in
                    encode.withUnsafeBufferPointer { e in
                        guard let r = r.baseAddress, let g = g.baseAddress, let b = b.baseAddress,
                            let e = e.baseAddress
                        else { return }
                        Self.convert(base, count: count, red: r, green: g, blue: b, encode: e)
                    }
                }
            }
        }
    }

    @inline(__always)
    private static func convert(
        _ base: UnsafeMutableRawPointer, count: Int, red r: UnsafePointer<SIMD4<Int32>>,
        green g: UnsafePointer<SIMD4<Int32>>, blue b: UnsafePointer<SIMD4<Int32>>, encode e: UnsafePointer<UInt8>
    ) {
        let top = Int32(encodeSteps) << fraction
        let half = Int32(1) << (fraction - 1)
        // Clamped to 0…steps, then rounded to a step: every index is within the table.
        @inline(__always) func index(_ v: Int32) -> Int {
            Int(truncatingIfNeeded: (Swift.min(Swift.max(v, 0), top) &+ half) >> fraction)
        }
        var i = 0
        while i < count {
            // Little-endian RGBA (every platform Swift on Linux runs on): red is the low byte.
            let v = base.loadUnaligned(fromByteOffset: i &* 4, as: UInt32.self)
            let linear =
                r[Int(truncatingIfNeeded: v & 0xFF)] &+ g[Int(truncatingIfNeeded: (v >> 8) & 0xFF)]
                &+ b[Int(truncatingIfNeeded: (v >> 16) & 0xFF)]
            let out =
                UInt32(e[index(linear[0])]) | UInt32(e[index(linear[1])]) << 8 | UInt32(e[index(linear[2])]) << 16
                | (v & 0xFF00_0000)
            base.storeBytes(of: out, toByteOffset: i &* 4, as: UInt32.self)
            i &+= 1
        }
    }

    /// The colorant matrix (columns rXYZ, gXYZ, bXYZ), or `nil` when a tag is missing.
    private static func colorants(_ profile: LCMSProfile) -> [[Double]]? {
        var columns: [cmsCIEXYZ] = []
        for tag in [cmsSigRedColorantTag, cmsSigGreenColorantTag, cmsSigBlueColorantTag] {
            guard let raw = cmsReadTag(profile.handle, tag) else { return nil }
            columns.append(raw.assumingMemoryBound(to: cmsCIEXYZ.self).pointee)
        }
        return [
            [columns[0].X, columns[1].X, columns[2].X], [columns[0].Y, columns[1].Y, columns[2].Y],
            [columns[0].Z, columns[1].Z, columns[2].Z],
        ]
    }

    private static func multiply(_ a: [[Double]], _ b: [[Double]]) -> [[Double]] {
        (0..<3).map { i in (0..<3).map { j in (0..<3).reduce(0) { $0 + a[i][$1] * b[$1][j] } } }
    }

    private static func inverse(_ m: [[Double]]) -> [[Double]]? {
        let (a, b, c) = (m[0][0], m[0][1], m[0][2])
        let (d, e, f) = (m[1][0], m[1][1], m[1][2])
        let (g, h, k) = (m[2][0], m[2][1], m[2][2])
        let det = a * (e * k - f * h) - b * (d * k - f * g) + c * (d * h - e * g)
        guard abs(det) > 1e-12, det.isFinite else { return nil }
        return [
            [(e * k - f * h) / det, (c * h - b * k) / det, (b * f - c * e) / det],
            [(f * g - d * k) / det, (a * k - c * g) / det, (c * d - a * f) / det],
            [(d * h - e * g) / det, (b * g - a * h) / det, (a * e - b * d) / det],
        ]
    }
}
