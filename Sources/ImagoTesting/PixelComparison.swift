import Foundation
import ImagoCore

extension ImagoTesting {
    /// The peak signal-to-noise ratio in dB of `a` against `b` over their R, G and B values (gray read as RGB):
    /// 10 log10(255² / mean squared difference), infinite for equal pixels. Both must be the same size.
    public static func psnr(_ a: PixelBuffer, _ b: PixelBuffer) -> Double {
        precondition(a.size == b.size, "psnr of \(a.size) against \(b.size)")
        var sum = 0.0
        for y in 0..<a.height {
            for x in 0..<a.width {
                let (p, q) = (a[pixel: x, y], b[pixel: x, y])
                for (u, v) in [(p.r, q.r), (p.g, q.g), (p.b, q.b)] {
                    let d = Double(u) - Double(v)
                    sum += d * d
                }
            }
        }
        let mse = sum / Double(a.width * a.height * 3)
        return mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
    }
}
