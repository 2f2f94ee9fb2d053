import CLCMS2
import Foundation

/// An lcms2 profile handle, closed when the wrapper goes away. Used by one thread at a time (created, used to
/// build a transform, released); never shared.
final class LCMSProfile {
    let handle: cmsHPROFILE

    private init(_ handle: cmsHPROFILE) { self.handle = handle }
    deinit { cmsCloseProfile(handle) }

    /// Parses an ICC profile; `nil` when lcms2 cannot read it.
    static func open(_ data: Data) -> LCMSProfile? {
        guard !data.isEmpty, data.count <= Int(UInt32.max) else { return nil }
        let handle = data.withUnsafeBytes { raw in
            cmsOpenProfileFromMem(raw.baseAddress, cmsUInt32Number(raw.count))
        }
        return handle.map(LCMSProfile.init)
    }

    /// lcms2's built-in sRGB (the destination of every conversion).
    static func sRGB() -> LCMSProfile? { cmsCreate_sRGBProfile().map(LCMSProfile.init) }

    /// A gray profile with sRGB's tone curve and a D50 white: the destination for gray images, which stay gray.
    static func sRGBGray() -> LCMSProfile? {
        guard let curve = sRGBCurve() else { return nil }
        defer { cmsFreeToneCurve(curve) }
        return cmsCreateGrayProfile(cmsD50_xyY(), curve).map(LCMSProfile.init)
    }

    /// A matrix/TRC RGB profile, or a gray one when `isGray`, of `white`/`primaries` and a tone curve.
    static func make(
        white: (x: Double, y: Double), primaries: ColorSource.Chromaticities, curve: OpaquePointer, isGray: Bool
    ) -> LCMSProfile? {
        var whitePoint = cmsCIExyY(x: white.x, y: white.y, Y: 1)
        if isGray { return cmsCreateGrayProfile(&whitePoint, curve).map(LCMSProfile.init) }
        var triple = cmsCIExyYTRIPLE(
            Red: cmsCIExyY(x: primaries.red.x, y: primaries.red.y, Y: 1),
            Green: cmsCIExyY(x: primaries.green.x, y: primaries.green.y, Y: 1),
            Blue: cmsCIExyY(x: primaries.blue.x, y: primaries.blue.y, Y: 1))
        var curves: [OpaquePointer?] = [curve, curve, curve]
        return curves.withUnsafeMutableBufferPointer { curves in
            cmsCreateRGBProfile(&whitePoint, &triple, curves.baseAddress)
        }.map(LCMSProfile.init)
    }

    /// The IEC 61966-2-1 curve (parametric type 4), decoding direction.
    static func sRGBCurve() -> OpaquePointer? {
        parametric(type: 4, [2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045])
    }

    /// lcms2's parametric curve of `type` (1: y = x^g; 4: IEC 61966 style with a linear toe).
    static func parametric(type: Int32, _ parameters: [Double]) -> OpaquePointer? {
        parameters.withUnsafeBufferPointer { cmsBuildParametricToneCurve(nil, type, $0.baseAddress) }
    }

    /// The profile's colour space.
    var colorSpace: cmsColorSpaceSignature { cmsGetColorSpace(handle) }

    /// The red, green and blue tone curves (`rTRC`, `gTRC`, `bTRC`) of a matrix/TRC profile evaluated at the 256
    /// 8-bit levels, each value the light of that level; `nil` when a tag is missing.
    var toneTables: [[Float]]? {
        var tables: [[Float]] = []
        for tag in [cmsSigRedTRCTag, cmsSigGreenTRCTag, cmsSigBlueTRCTag] {
            guard let raw = cmsReadTag(handle, tag) else { return nil }
            let curve = OpaquePointer(raw)
            tables.append((0..<256).map { cmsEvalToneCurveFloat(curve, Float($0) / 255) })
        }
        return tables
    }

    /// Whether lcms2 can use the profile as the source of a conversion: an input, display, output or colour-space
    /// profile (device links, abstract and named-colour profiles are not image profiles).
    var isImageProfile: Bool {
        let deviceClass = cmsGetDeviceClass(handle)
        return deviceClass != cmsSigLinkClass && deviceClass != cmsSigAbstractClass
            && deviceClass != cmsSigNamedColorClass
    }

    /// The description tag in English, `nil` when empty or absent.
    var description: String? {
        var buffer = [CChar](repeating: 0, count: 256)
        let written = buffer.withUnsafeMutableBufferPointer { buffer in
            cmsGetProfileInfoASCII(handle, cmsInfoDescription, "en", "US", buffer.baseAddress, 256)
        }
        guard written > 0 else { return nil }
        let text = String(nulTerminated: buffer)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? nil : text
    }

    /// The profile serialised as ICC bytes (for profiles built here, so that ``ColorPolicy/keep`` can hand them on).
    func serialized() -> Data? {
        var size: cmsUInt32Number = 0
        guard cmsSaveProfileToMem(handle, nil, &size) != 0, size > 0, size < 1 << 24 else { return nil }
        var data = Data(count: Int(size))
        let ok = data.withUnsafeMutableBytes { cmsSaveProfileToMem(handle, $0.baseAddress, &size) }
        return ok != 0 ? data.prefix(Int(size)) : nil
    }
}
