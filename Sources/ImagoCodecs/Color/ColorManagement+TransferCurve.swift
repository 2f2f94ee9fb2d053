import CLCMS2
import Foundation
import ImagoCore

extension ColorManagement {
    /// The transfer curve of the RGB matrix/TRC profile `iccProfile`, for resampling its pixels in linear light:
    /// `nil` when the profile does not parse, is not such a profile, has channels on different curves, or its curve
    /// is sRGB's within a thousandth (then ``TransferCurve/sRGB`` serves). Display P3 shares sRGB's curve; Adobe RGB
    /// (gamma 2.2) and ProPhoto (1.8) do not.
    ///
    /// Read once per profile and kept with the transforms' limits (``curveCache``): a resize in linear light asks
    /// for every image and every frame, and again for a result limit.
    package static func transferCurve(of iccProfile: Data) -> TransferCurve? {
        if let hit = curveCache.withLock({ $0.value(for: iccProfile, now: { .zero }) }) { return hit.curve }
        let curve = readTransferCurve(iccProfile)
        let dropped = curveCache.withLock {
            $0.setValue(CachedCurve(curve: curve), for: iccProfile, cost: 4096 + iccProfile.count)
        }
        _ = dropped  // released after the lock
        return curve
    }

    /// A curve read, or the absence of one (also kept, so a profile without its own curve is not read again).
    struct CachedCurve: Sendable {
        var curve: TransferCurve?
    }

    /// Curves read, by profile (its bytes compared in full), least recently used dropped first: at most 32 and
    /// 64 MiB of profile bytes, as the transforms' cache.
    static let curveCache = Locked(LRUCache<Data, CachedCurve>(costLimit: 64 << 20, countLimit: 32))

    private static func readTransferCurve(_ iccProfile: Data) -> TransferCurve? {
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
