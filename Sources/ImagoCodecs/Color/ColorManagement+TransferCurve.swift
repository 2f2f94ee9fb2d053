import CLCMS2
import Foundation
import ImagoCore

extension ColorManagement {
    /// The transfer curve of the RGB matrix/TRC profile `iccProfile`, for resampling its pixels in linear light:
    /// `nil` when the profile does not parse, is not such a profile, has channels on different curves, or its curve
    /// is sRGB's within a thousandth (then ``TransferCurve/sRGB`` serves). Display P3 shares sRGB's curve; Adobe RGB
    /// (gamma 2.2) and ProPhoto (1.8) do not.
    package static func transferCurve(of iccProfile: Data) -> TransferCurve? {
        guard iccProfile.count <= maximumProfileSize, let profile = LCMSProfile.open(iccProfile),
            profile.colorSpace == cmsSigRgbData, cmsIsMatrixShaper(profile.handle) != 0
        else { return nil }
        guard let tables = profile.toneTables else { return nil }
        let red = tables[0]
        guard tables.dropFirst().allSatisfy({ zip($0, red).allSatisfy { abs($0 - $1) < 1e-3 } }),
            !zip(red, TransferCurve.sRGB.toLinear).allSatisfy({ abs($0 - $1) < 1e-3 })
        else { return nil }
        return TransferCurve(toLinear: red.map { min(max($0, 0), 1) })
    }
}
