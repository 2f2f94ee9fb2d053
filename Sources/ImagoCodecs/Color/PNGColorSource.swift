import Foundation
import ImagoCore
import ImagoZlib

extension PNGChunks {
    /// The colour space the chunks declare, by the PNG specification's precedence: `iCCP` (inflated, at most
    /// ``ColorManagement/maximumProfileSize`` bytes), then `sRGB`, then `gAMA` with `cHRM` (without `cHRM`, sRGB's
    /// primaries and D65). `nil` when none is present or `iCCP` cannot be inflated (with a warning).
    ///
    /// A `gAMA` of 1/2.2 (45455 ± 50) with no `cHRM` or sRGB's is taken as sRGB, as libpng and browsers do: it is
    /// what most tools write for sRGB content, and converting it through a pure 2.2 power curve would only move
    /// the darkest levels.
    func colorSource(in bytes: UnsafeRawBufferPointer) -> ColorSource? {
        if let iccChunk {
            let payload = UnsafeRawBufferPointer(rebasing: bytes[iccChunk])
            // Profile name (1 to 79 bytes), NUL, compression method 0, then the zlib stream.
            guard let nul = payload.prefix(80).firstIndex(of: 0), nul + 2 <= payload.count, payload[nul + 1] == 0,
                let profile = Zlib.inflate(
                    UnsafeRawBufferPointer(rebasing: payload[(nul + 2)...]), limit: ColorManagement.maximumProfileSize)
            else {
                return .unreadable("the PNG's iCCP chunk cannot be inflated (corrupt or over the size limit)")
            }
            return .icc(profile)
        }
        if hasSRGBChunk { return .sRGB }
        guard let gamma, gamma > 0 else { return nil }
        let c = chromaticities.map { v in
            let d = v.map { Double($0) / 100_000 }
            return ColorSource.Chromaticities(
                white: (d[0], d[1]), red: (d[2], d[3]), green: (d[4], d[5]), blue: (d[6], d[7]))
        }
        if abs(Int(gamma) - 45455) <= 50, c == nil || c?.isClose(to: .sRGB, tolerance: 0.001) == true {
            return .sRGB
        }
        return .gamma(Double(gamma) / 100_000, chromaticities: c)
    }
}
