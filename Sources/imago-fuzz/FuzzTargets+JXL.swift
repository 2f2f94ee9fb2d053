import Foundation
import ImagoCodecs
import ImagoCore

extension FuzzTargets {
    /// JPEGXLDecoder (single-threaded, so a finding replays deterministically) at full size, downsampled, and
    /// first frame + partial data with the orientation kept; limits 4 MP, 100 frames, 64 MiB of animation so the
    /// fuzzer spends its time on parsing rather than on filling large valid images.
    static func jxl(_ data: Data) {
        let decoder = JPEGXLDecoder(maximumThreads: 1)
        for options in [
            DecodingOptions(pixelLimit: 4_000_000, frameLimit: 100, animationByteLimit: 64 << 20),
            DecodingOptions(
                targetSize: PixelSize(width: 37, height: 23), pixelLimit: 4_000_000, frameLimit: 100,
                animationByteLimit: 64 << 20),
            DecodingOptions(
                pixelLimit: 4_000_000, frameLimit: 100, animationByteLimit: 64 << 20, appliesOrientation: false,
                decodesFirstFrameOnly: true, allowsPartialData: true),
        ] {
            _ = try? decoder.decode(data, options: options)
        }
    }
}
