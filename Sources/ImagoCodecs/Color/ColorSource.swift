import Foundation
import ImagoCore

/// What a file says about the colour space of its samples, as read by a decoder before any conversion.
///
/// Decoders read it only when ``DecodingOptions/colorPolicy`` is not ``ColorPolicy/ignore``;
/// ``ColorManagement`` turns it into an lcms2 profile.
package enum ColorSource: Hashable, Sendable {
    /// An embedded ICC profile (JPEG APP2, PNG iCCP inflated, WebP ICCP, AVIF/HEIF `colr` of type `prof`/`rICC`,
    /// JPEG XL's ICC), at most ``ColorManagement/maximumProfileSize`` bytes.
    case icc(Data)
    /// PNG `sRGB` chunk: the samples are sRGB (nothing to convert).
    case sRGB
    /// PNG `gAMA` (and `cHRM`, when present) without `iCCP`/`sRGB`: samples encoded with `gamma` (the file's value,
    /// e.g. 0.45455), so decoding raises them to 1/`gamma`; primaries and white from `chromaticities`, else sRGB's
    /// and D65.
    case gamma(Double, chromaticities: Chromaticities?)
    /// Coding-independent code points (ITU-T H.273), as AVIF/HEIF `nclx` boxes and JPEG XL enumerated colour
    /// encodings give them: `primaries` (1 BT.709, 9 BT.2020, 12 Display P3, …) and `transfer` (13 sRGB, 1 BT.709,
    /// 8 linear, …). PQ (16) and HLG (18) are HDR encodings an 8-bit sRGB conversion cannot express: not converted.
    case cicp(primaries: Int, transfer: Int)
    /// A declaration the file makes but that could not be read (`reason` says why: ICC segments out of sequence,
    /// a chunk that does not inflate, one over the size limit): the pixels are taken as sRGB, and the reason is
    /// the container's ``ImageContainer/colorWarning``.
    case unreadable(String)

    /// CIE xy chromaticities of a white point and three primaries (PNG `cHRM`).
    package struct Chromaticities: Hashable, Sendable {
        package var white: (x: Double, y: Double)
        package var red: (x: Double, y: Double)
        package var green: (x: Double, y: Double)
        package var blue: (x: Double, y: Double)

        package init(
            white: (x: Double, y: Double), red: (x: Double, y: Double), green: (x: Double, y: Double),
            blue: (x: Double, y: Double)
        ) {
            self.white = white
            self.red = red
            self.green = green
            self.blue = blue
        }

        /// sRGB / BT.709 primaries with a D65 white.
        package static let sRGB = Chromaticities(
            white: (0.3127, 0.3290), red: (0.64, 0.33), green: (0.30, 0.60), blue: (0.15, 0.06))

        private var values: [Double] { [white.x, white.y, red.x, red.y, green.x, green.y, blue.x, blue.y] }

        package static func == (a: Chromaticities, b: Chromaticities) -> Bool { a.values == b.values }
        package func hash(into hasher: inout Hasher) { hasher.combine(values) }

        /// Whether every coordinate is within `tolerance` of `other`'s.
        func isClose(to other: Chromaticities, tolerance: Double = 0.0005) -> Bool {
            zip(values, other.values).allSatisfy { abs($0 - $1) <= tolerance }
        }
    }

    /// A short human-readable description: the ICC profile's own is read by ``ColorManagement``.
    var fallbackDescription: String {
        switch self {
        case .icc: "ICC profile"
        case .sRGB: "sRGB"
        case .gamma(let gamma, let chromaticities):
            "gAMA \(Self.format(gamma))" + (chromaticities == nil ? "" : " + cHRM")
        case .cicp(let primaries, let transfer): "CICP \(primaries)/\(transfer)"
        case .unreadable: "unreadable colour declaration"
        }
    }

    private static func format(_ value: Double) -> String {
        let rounded = (value * 100_000).rounded() / 100_000
        return String(rounded)
    }
}
