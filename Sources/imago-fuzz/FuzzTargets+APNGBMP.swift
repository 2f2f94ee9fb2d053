import Foundation
import Imago
import ImagoCodecs

extension FuzzTargets {
    /// APNGDecoder (chunk walk, frame streams, compositing, the still fallback) at full size, downsampled, first
    /// frame with partial data; limits 4 MP / 100 frames / 64 MiB so the fuzzer parses rather than fills. Then the
    /// same on the input with its chunk CRCs recomputed (``PNGCRCs``), so that mutated chunks reach libpng.
    static func apng(_ data: Data) {
        let decoder = APNGDecoder()
        for bytes in PNGCRCs.asIsAndResealed(data) {
            for options in apngOptions { _ = try? decoder.decode(bytes, options: options) }
        }
    }

    private static let apngOptions: [DecodingOptions] = [
        DecodingOptions(pixelLimit: 4_000_000, frameLimit: 100, animationByteLimit: 64 << 20),
        DecodingOptions(
            targetSize: PixelSize(width: 37, height: 23), pixelLimit: 4_000_000, frameLimit: 100,
            animationByteLimit: 64 << 20),
        DecodingOptions(pixelLimit: 4_000_000, decodesFirstFrameOnly: true, allowsPartialData: true),
    ]

    /// BMPDecoder and ICODecoder on the same bytes (an ICO's entries are DIBs), each at full size, with a
    /// target size (which also picks ICO entries) and with partial data allowed, under a 4 MP limit.
    static func bmpICO(_ data: Data) {
        for options in [
            DecodingOptions(pixelLimit: 4_000_000),
            DecodingOptions(targetSize: PixelSize(width: 16, height: 16), pixelLimit: 4_000_000),
            DecodingOptions(pixelLimit: 4_000_000, allowsPartialData: true),
        ] {
            _ = try? BMPDecoder().decode(data, options: options)
            _ = try? ICODecoder().decode(data, options: options)
        }
    }
}
