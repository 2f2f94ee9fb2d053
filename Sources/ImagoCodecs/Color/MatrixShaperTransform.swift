import CLCMS2
import ImagoCore

/// The conversion of a matrix/TRC RGB profile (Display P3, Adobe RGB, ProPhoto, PNG gAMA/cHRM — most real
/// files) to sRGB in three table look-ups and a 3×3 matrix a pixel, about five times faster than lcms2's
/// general pipeline for 8-bit RGBA (measured: ~190 ms of lcms2 for 12 MP; see BENCHMARKS.md).
///
/// Exactly the relative colorimetric transform lcms2 computes for such a pair: decode each channel with its tone
/// curve (a 256-entry table), map to the PCS with the source's D50-adapted colorants, back to linear sRGB with
/// the inverse of lcms2's built-in sRGB colorants, then encode with the sRGB curve (a 16,384-entry table, a fifth
/// of a level apart at the steepest). Perceptual and saturation intents equal relative colorimetric for
/// matrix/TRC profiles; black-point compensation is a no-op when the source's black is zero, the only case
/// accepted. Absolute colorimetric is left to lcms2.
struct MatrixShaperTransform: Sendable {
    private let red: [Float]
    private let green: [Float]
    private let blue: [Float]
    /// Rows of linear-source-RGB → linear-sRGB.
    private let rows: (SIMD4<Float>, SIMD4<Float>, SIMD4<Float>)
    private let encode: [UInt8]
    private static let encodeSteps = 16_383

    /// The fast transform for `source`, or `nil` when it is not a matrix/TRC RGB profile this covers.
    init?(source: LCMSProfile, destination: LCMSProfile, intent: RenderingIntent) {
        guard intent != .absoluteColorimetric, source.colorSpace == cmsSigRgbData,
            cmsIsMatrixShaper(source.handle) != 0,
            let sourceMatrix = Self.colorants(source), let sRGBMatrix = Self.colorants(destination),
            let inverse = Self.inverse(sRGBMatrix)
        else { return nil }
        var curves: [[Float]] = []
        for tag in [cmsSigRedTRCTag, cmsSigGreenTRCTag, cmsSigBlueTRCTag] {
            guard let raw = cmsReadTag(source.handle, tag) else { return nil }
            let curve = OpaquePointer(raw)
            let table = (0..<256).map { cmsEvalToneCurveFloat(curve, Float($0) / 255) }
            // A non-zero black would make black-point compensation (and lcms2's result) differ.
            guard table[0].isFinite, abs(table[0]) < 1e-4, table.allSatisfy(\.isFinite) else { return nil }
            curves.append(table)
        }
        guard let sRGBCurve = LCMSProfile.sRGBCurve() else { return nil }
        defer { cmsFreeToneCurve(sRGBCurve) }
        guard let reversed = cmsReverseToneCurve(sRGBCurve) else { return nil }
        defer { cmsFreeToneCurve(reversed) }
        encode = (0...Self.encodeSteps).map { step in
            let value = cmsEvalToneCurveFloat(reversed, Float(step) / Float(Self.encodeSteps))
            return UInt8(max(0, min(255, (value * 255).rounded())))
        }
        let m = Self.multiply(inverse, sourceMatrix)
        rows = (
            SIMD4(Float(m[0][0]), Float(m[0][1]), Float(m[0][2]), 0),
            SIMD4(Float(m[1][0]), Float(m[1][1]), Float(m[1][2]), 0),
            SIMD4(Float(m[2][0]), Float(m[2][1]), Float(m[2][2]), 0)
        )
        (red, green, blue) = (curves[0], curves[1], curves[2])
    }

    /// Converts RGBA8 `pixels` in place; alpha is left as it is.
    func convert(_ pixels: UnsafeMutableRawBufferPointer) {
        guard let base = pixels.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        let count = pixels.count & ~3
        let scale = Float(Self.encodeSteps)
        let (m00, m01, m02) = (rows.0[0], rows.0[1], rows.0[2])
        let (m10, m11, m12) = (rows.1[0], rows.1[1], rows.1[2])
        let (m20, m21, m22) = (rows.2[0], rows.2[1], rows.2[2])
        red.withUnsafeBufferPointer { r in
            green.withUnsafeBufferPointer { g in
                blue.withUnsafeBufferPointer { b in
                    encode.withUnsafeBufferPointer { e in
                        guard let r = r.baseAddress, let g = g.baseAddress, let b = b.baseAddress,
                            let e = e.baseAddress
                        else { return }
                        // Clamped to 0…1 then scaled: the index is always within the table.
                        @inline(__always) func index(_ v: Float) -> Int {
                            Int(truncatingIfNeeded: Int32(min(max(v, 0), 1) * scale + 0.5))
                        }
                        var p = base
                        let end = base + count
                        while p < end {
                            let lr = r[Int(p[0])]
                            let lg = g[Int(p[1])]
                            let lb = b[Int(p[2])]
                            p[0] = e[index(m00 * lr + m01 * lg + m02 * lb)]
                            p[1] = e[index(m10 * lr + m11 * lg + m12 * lb)]
                            p[2] = e[index(m20 * lr + m21 * lg + m22 * lb)]
                            p += 4
                        }
                    }
                }
            }
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
