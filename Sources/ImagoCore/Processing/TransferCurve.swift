import Foundation

/// A colour space's transfer curve, as resampling in linear light uses it
/// (``PixelBuffer/resampledInLinearLight(to:curve:)``): each 8-bit value's light, and its inverse. sRGB's is the
/// default; an image kept in another profile's space (``ColorPolicy/keep``) averages light through that
/// profile's curve (ProPhoto's gamma 1.8 differs from sRGB's; Display P3 shares sRGB's).
public struct TransferCurve: Sendable {
    /// Each 8-bit value's linear light, 0…1 (256 entries, never decreasing).
    public let toLinear: [Float]
    /// The 8-bit value of each of 16,384 steps of linear light: fine enough near black, where curves are steepest,
    /// to stay within 1 level.
    let fromLinear: [UInt8]

    /// sRGB's curve.
    public static let sRGB = TransferCurve(
        checked: (0..<256).map { value in
            let c = Double(value) / 255
            return Float(c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4))
        },
        fromLinear: (0..<16_384).map { step in
            let l = Double(step) / 16_383
            let c = l <= 0.003_130_8 ? l * 12.92 : 1.055 * pow(l, 1 / 2.4) - 0.055
            return UInt8((c * 255).rounded())
        })

    /// The curve whose decoding table is `toLinear`: 256 finite values from 0 to 1, never decreasing; `nil` for
    /// anything else. Its encoding is the table's inverse, each step of light to the nearest 8-bit value.
    public init?(toLinear: [Float]) {
        guard toLinear.count == 256, toLinear.allSatisfy({ $0.isFinite && $0 >= 0 && $0 <= 1 }),
            zip(toLinear, toLinear.dropFirst()).allSatisfy({ $0 <= $1 })
        else { return nil }
        let fromLinear = (0..<16_384).map { step -> UInt8 in
            let light = Float(step) / 16_383
            // The first value at or above `light`, then the nearer of it and the one below.
            var (low, high) = (0, 255)
            while low < high {
                let middle = (low + high) / 2
                if toLinear[middle] < light { low = middle + 1 } else { high = middle }
            }
            if low > 0, light - toLinear[low - 1] < toLinear[low] - light { low -= 1 }
            return UInt8(low)
        }
        self.init(checked: toLinear, fromLinear: fromLinear)
    }

    private init(checked toLinear: [Float], fromLinear: [UInt8]) {
        self.toLinear = toLinear
        self.fromLinear = fromLinear
    }
}
