import CLCMS2
import Foundation

/// Builds lcms2 profiles for sources without an ICC profile: PNG `gAMA`/`cHRM` and CICP code points.
enum ProfileFactory {
    /// A matrix/TRC profile for `source` (gray when `isGray`); `nil` for ICC sources or code points without one.
    static func profile(for source: ColorSource, isGray: Bool) -> LCMSProfile? {
        switch source {
        case .icc, .sRGB, .unreadable: return nil
        case .gamma(let gamma, let chromaticities):
            guard gamma.isFinite, gamma > 0.01, gamma < 100 else { return nil }
            guard let curve = LCMSProfile.parametric(type: 1, [1 / gamma]) else { return nil }
            defer { cmsFreeToneCurve(curve) }
            let primaries = chromaticities ?? .sRGB
            guard Self.isPlausible(primaries) else { return nil }
            return LCMSProfile.make(white: primaries.white, primaries: primaries, curve: curve, isGray: isGray)
        case .cicp(let primariesCode, let transferCode):
            guard let primaries = Self.primaries(primariesCode), let curve = Self.transfer(transferCode) else {
                return nil
            }
            defer { cmsFreeToneCurve(curve) }
            return LCMSProfile.make(white: primaries.white, primaries: primaries, curve: curve, isGray: isGray)
        }
    }

    /// Chromaticities inside the unit triangle and a white with y > 0 (a `cHRM` of zeros is corrupt).
    private static func isPlausible(_ c: ColorSource.Chromaticities) -> Bool {
        [c.white, c.red, c.green, c.blue].allSatisfy { $0.x >= 0 && $0.y > 0 && $0.x + $0.y <= 1.0001 }
    }

    /// ITU-T H.273 colour primaries.
    static func primaries(_ code: Int) -> ColorSource.Chromaticities? {
        switch code {
        case 1, 2: .sRGB  // BT.709 (2: unspecified, taken as BT.709 as browsers do)
        case 4: .init(white: (0.310, 0.316), red: (0.67, 0.33), green: (0.21, 0.71), blue: (0.14, 0.08))
        case 5: .init(white: (0.3127, 0.3290), red: (0.64, 0.33), green: (0.29, 0.60), blue: (0.15, 0.06))
        case 6, 7: .init(white: (0.3127, 0.3290), red: (0.630, 0.340), green: (0.310, 0.595), blue: (0.155, 0.070))
        case 9: .init(white: (0.3127, 0.3290), red: (0.708, 0.292), green: (0.170, 0.797), blue: (0.131, 0.046))
        case 11: .init(white: (0.314, 0.351), red: (0.680, 0.320), green: (0.265, 0.690), blue: (0.150, 0.060))
        case 12: .init(white: (0.3127, 0.3290), red: (0.680, 0.320), green: (0.265, 0.690), blue: (0.150, 0.060))
        default: nil
        }
    }

    /// ITU-T H.273 transfer characteristics as an lcms2 decoding curve (caller frees it).
    static func transfer(_ code: Int) -> OpaquePointer? {
        switch code {
        case 1, 2, 6, 14, 15:  // BT.709 / BT.601 / BT.2020 (2: unspecified, taken as BT.709)
            LCMSProfile.parametric(type: 4, [1 / 0.45, 1 / 1.099, 0.099 / 1.099, 1 / 4.5, 0.081])
        case 4: LCMSProfile.parametric(type: 1, [2.2])
        case 5: LCMSProfile.parametric(type: 1, [2.8])
        case 8: LCMSProfile.parametric(type: 1, [1.0])
        case 13: LCMSProfile.sRGBCurve()
        default: nil  // PQ (16), HLG (18) and others: no SDR matrix/TRC profile
        }
    }
}
