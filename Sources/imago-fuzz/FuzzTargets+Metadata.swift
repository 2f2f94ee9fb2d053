import Foundation
import Imago
import ImagoCodecs

extension FuzzTargets {
    /// Metadata as `imago serve` handles it: a file's EXIF, XMP and IPTC blocks read by its decoder (any format),
    /// else the input split in three as the blocks themselves; filtered to the copyright (``ImageMetadata/
    /// copyrightOnly``), turned upright, resized (``ImageMetadata/sized(_:)``) and without its thumbnail
    /// (``ImageMetadata/withoutThumbnail``); then written with a small image as JPEG, PNG, WebP, AVIF, JPEG XL and
    /// TIFF. Every write must succeed (a failure would be a 500); JPEG, PNG, WebP and JPEG XL must give the blocks
    /// back unchanged, TIFF its XMP and IPTC.
    static func metadata(_ data: Data) {
        var options = DecodingOptions()
        options.readsMetadata = true
        options.pixelLimit = 4_000_000
        var found = (try? ImageDecoderRegistry.makeDefault().decode(data, options: options))?.metadata
        if found == nil {
            let third = data.count / 3
            found =
                ImageMetadata(
                    exif: data.prefix(third), xmp: data.dropFirst(third).prefix(third), iptc: data.dropFirst(2 * third)
                ).bounded
        }
        guard let metadata = found, let image = try? PixelBuffer(width: 8, height: 8) else { return }
        let candidates = [
            metadata, metadata.uprightened, metadata.copyrightOnly, metadata.sized(PixelSize(width: 70_000, height: 8)),
            metadata.withoutThumbnail,
        ]
        for candidate in candidates.compactMap({ $0 }) {
            let encoders: [any ImageEncoding] = [
                JPEGEncoder(), PNGEncoder(), WebPEncoder(), AVIFEncoder(), JPEGXLEncoder(effort: 1), TIFFEncoder(),
            ]
            for encoder in encoders {
                let encoded: Data
                do {
                    encoded = try encoder.encode(image, options: EncodingOptions(metadata: candidate))
                } catch {
                    preconditionFailure("\(encoder.format) could not be written with the metadata: \(error)")
                }
                guard encoder.format != .avif else { continue }
                let back: ImageMetadata
                do {
                    back = try ImageDecoderRegistry.makeDefault().decode(encoded, options: options).metadata ?? .init()
                } catch {
                    preconditionFailure("\(encoder.format) with metadata could not be read again: \(error)")
                }
                let written = candidate.bounded
                // A TIFF keeps only EXIF's text tags, as its own
                precondition(encoder.format == .tiff || back.exif == written?.exif, "\(encoder.format): EXIF changed")
                precondition(back.xmp == written?.xmp, "\(encoder.format): XMP changed")
                precondition(
                    ![.jpeg, .tiff].contains(encoder.format) || back.iptc == written?.iptc,
                    "\(encoder.format): IPTC changed")
            }
        }
    }
}
