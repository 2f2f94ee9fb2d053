import Foundation
import Imago
import ImagoCodecs

/// `progressive-dc`: 256-px thumbnails of progressive JPEGs through JPEGDecoder with the DC-scan reader (the
/// default for progressive files at 1/8 scale) against the same decoder with the reader turned off, i.e. libjpeg's
/// own 1/8-scale decode (which decodes every AC scan into a whole-image coefficient buffer first).
///
/// Files: TestImageLarge.jpg (5250×3450 progressive 4:4:4, 448 KB) and TestJFIF.jpg (4032×3024 baseline)
/// rewritten losslessly as progressive by TurboJPEG's tjTransform (same coefficients and subsampling).
enum ProgressiveDCBench {
    static func run() throws {
        let large = try DecodeBench.corpus("formats/TestImageLarge.jpg")
        let twelve = try JPEGEncoder.losslesslyProgressive(DecodeBench.corpus("formats/TestJFIF.jpg"))
        let thumbnail = DecodingOptions(targetSize: PixelSize(width: 256, height: 256))
        var libjpeg = JPEGDecoder()
        libjpeg.allowsProgressiveDC = false
        for (label, data, iterations) in [
            ("5250x3450 4:4:4 TestImageLarge.jpg", large, 2), ("12 MP TestJFIF.jpg made progressive", twelve, 2),
        ] {
            try compare(
                "decode: progressive JPEG \(label) to fit 256, DC scans vs libjpeg 1/8", unit: "ms CPU", goal: nil,
                peerName: "JPEGDecoder with allowsProgressiveDC = false", rounds: 9,
                imago: {
                    try DecodeBench.msPerOp(iterations) { _ = try JPEGDecoder().decode(data, options: thumbnail) }
                },
                peer: { try DecodeBench.msPerOp(iterations) { _ = try libjpeg.decode(data, options: thumbnail) } })
        }
    }
}
