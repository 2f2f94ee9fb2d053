import Foundation
import Imago
import ImagoCodecs

extension FuzzTargets {
    /// ExifReader on raw bytes (the EXIF block of a JPEG APP1 segment or a PNG eXIf chunk), and the edits that
    /// patch it in place (orientation, image size), which must keep its length.
    static func exif(_ data: Data) {
        _ = ExifReader.orientation(in: data)
        let metadata = ImageMetadata(exif: data)
        precondition(metadata.uprightened.exif?.count == data.count, "uprightened changed the length")
        precondition(
            metadata.sized(PixelSize(width: 70_000, height: 3)).exif?.count == data.count, "sized changed the length")
        let stripped = metadata.withoutThumbnail.exif ?? Data()
        precondition(stripped.count == data.count, "withoutThumbnail changed the length")
        precondition(
            stripped.withUnsafeBytes { ExifReader.ifd1(inRawBytes: $0) } == nil, "a thumbnail's directory is left")
        precondition(
            ExifReader.orientation(in: stripped) == ExifReader.orientation(in: data), "IFD0 changed with the thumbnail")
    }

    /// JPEGDecoder at full size, downsampled, and with partial data allowed, under a 4 MP limit so that the
    /// fuzzer spends its time on parsing rather than on filling large valid images; then its YCbCr planes fitted
    /// into 64 × 64 and into 7 × 5, under the same limit, each encoded as WebP and as JPEG when they decode.
    static func jpeg(_ data: Data) {
        decodeEveryWay(JPEGDecoder(), data)
        for box in [PixelSize(width: 64, height: 64), PixelSize(width: 7, height: 5)] {
            let options = DecodingOptions(targetSize: box, pixelLimit: 4_000_000)
            guard let planes = try? JPEGDecoder().decodeYCbCr(data, options: options) else { continue }
            precondition(planes.image.size.width <= box.width && planes.image.size.height <= box.height, "over the box")
            _ = try? WebPEncoder().encode(planes.image, options: EncodingOptions(quality: 0.5))
            _ = try? JPEGEncoder().encode(planes.image, options: EncodingOptions(quality: 0.5))
        }
    }

    /// The progressive JPEG DC-scan reader on its own (under a 4 MP limit), then JPEGDecoder at a target small
    /// enough for 1/8 scale, where it tries the reader first and falls back to libjpeg.
    static func jpegDC(_ data: Data) {
        let limit = 4_000_000
        _ = JPEGProgressiveDC.decode(data, pixelLimit: limit)
        _ = try? JPEGDecoder().decode(
            data, options: DecodingOptions(targetSize: PixelSize(width: 8, height: 8), pixelLimit: limit))
    }

    /// PNGDecoder every way `decodeEveryWay` does and at a target small enough for the row reader, on the input
    /// and again on the input with its chunk CRCs recomputed (``PNGCRCs``).
    static func png(_ data: Data) {
        for bytes in PNGCRCs.asIsAndResealed(data) {
            decodeEveryWay(PNGDecoder(), bytes)
            // A target small enough that PngSuite's 32 × 32 files take the row reader (a quarter of the size or less).
            _ = try? PNGDecoder().decode(
                bytes, options: DecodingOptions(targetSize: PixelSize(width: 7, height: 5), pixelLimit: 4_000_000))
        }
    }

    /// `data` through `decoder` at full size, downsampled, and with partial data allowed and orientation returned,
    /// under a 4 MP limit; each image decoded goes to `check` (default: none) with the options it was decoded with.
    static func decodeEveryWay(
        _ decoder: some ImageDecoding, _ data: Data,
        check: (ImageContainer, DecodingOptions) -> Void = { _, _ in }
    ) {
        let limit = 4_000_000
        for options in [
            DecodingOptions(pixelLimit: limit),
            DecodingOptions(targetSize: PixelSize(width: 37, height: 23), pixelLimit: limit),
            DecodingOptions(pixelLimit: limit, appliesOrientation: false, allowsPartialData: true),
        ] {
            if let decoded = try? decoder.decode(data, options: options) { check(decoded, options) }
        }
    }
}
