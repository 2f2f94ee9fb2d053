import Foundation
import Imago

extension FuzzTargets {
    /// ExifReader on raw bytes (the EXIF block of a JPEG APP1 segment or a PNG eXIf chunk).
    static func exif(_ data: Data) {
        _ = ExifReader.orientation(in: data)
    }

    /// JPEGDecoder at full size, downsampled, and with partial data allowed, under a 4 MP limit so that the
    /// fuzzer spends its time on parsing rather than on filling large valid images.
    static func jpeg(_ data: Data) {
        decodeEveryWay(JPEGDecoder(), data)
    }

    /// PNGDecoder, as `jpeg`.
    static func png(_ data: Data) {
        decodeEveryWay(PNGDecoder(), data)
    }

    private static func decodeEveryWay(_ decoder: some ImageDecoding, _ data: Data) {
        let limit = 4_000_000
        for options in [
            DecodingOptions(pixelLimit: limit),
            DecodingOptions(targetSize: PixelSize(width: 37, height: 23), pixelLimit: limit),
            DecodingOptions(pixelLimit: limit, appliesOrientation: false, allowsPartialData: true),
        ] {
            _ = try? decoder.decode(data, options: options)
        }
    }
}
