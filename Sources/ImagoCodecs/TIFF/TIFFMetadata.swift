import CTIFF
import Foundation
import ImagoCore

/// A TIFF file's metadata as ``ImageMetadata`` holds it, read and written through libtiff's tags:
///
/// - XMP: the `XMLPacket` tag (700).
/// - IPTC: the `Photoshop` tag (34377), the same image resource block JPEG's APP13 holds; else the `RichTIFFIPTC`
///   tag (33723, bare IPTC-IIM), read as that block's resource 0x0404. Written to `Photoshop`.
/// - EXIF: a TIFF's own first directory holds the EXIF IFD0 tags, so its text tags (`ImageDescription`, `Make`,
///   `Model`, `Software`, `DateTime`, `Artist`, `Copyright`) are read as a minimal EXIF block of those, and an
///   EXIF block's are written there. The EXIF sub-directory (exposure, GPS…) is neither read nor written.
enum TIFFMetadata {
    /// The IFD0 text tags carried between EXIF and TIFF, in tag order.
    static let textTags: [UInt16] = [0x010E, 0x010F, 0x0110, 0x0131, 0x0132, 0x013B, 0x8298]

    /// The metadata of the open file `tiff` (``ImageMetadata/bounded``), `nil` when it has none.
    static func read(_ tiff: OpaquePointer) -> ImageMetadata? {
        let strings: [(tag: Int, value: [UInt8])] = textTags.compactMap { tag in
            var text: UnsafePointer<CChar>?
            guard imago_tiff_get_string(tiff, UInt32(tag), &text) != 0, let text else { return nil }
            let bytes = Array(UnsafeRawBufferPointer(start: text, count: strlen(text)))
            guard !bytes.isEmpty, bytes.count < ImageMetadata.maximumBlockLength else { return nil }
            return (Int(tag), bytes + [0])
        }
        var iptc = bytes(of: UInt32(TIFFTAG_PHOTOSHOP), in: tiff)
        if iptc == nil, let bare = bytes(of: UInt32(TIFFTAG_RICHTIFFIPTC), in: tiff) {
            iptc = photoshopBlock(iptc: bare)
        }
        return ImageMetadata(
            exif: ExifEditing.ifd0Block(strings), xmp: bytes(of: UInt32(TIFFTAG_XMLPACKET), in: tiff), iptc: iptc
        ).bounded
    }

    /// Sets `metadata`'s tags on the page being written to `tiff`.
    static func write(_ metadata: ImageMetadata, to tiff: OpaquePointer) {
        if let xmp = metadata.xmp {
            _ = xmp.withUnsafeBytes {
                imago_tiff_set_bytes(tiff, UInt32(TIFFTAG_XMLPACKET), UInt32($0.count), $0.baseAddress)
            }
        }
        if let iptc = metadata.iptc {
            _ = iptc.withUnsafeBytes {
                imago_tiff_set_bytes(tiff, UInt32(TIFFTAG_PHOTOSHOP), UInt32($0.count), $0.baseAddress)
            }
        }
        guard let exif = metadata.exif else { return }
        let strings: [(UInt16, [UInt8])] = exif.withUnsafeBytes { raw in
            guard let (_, entries) = ExifReader.ifd0(inRawBytes: raw) else { return [] }
            return entries.compactMap { entry in
                guard textTags.contains(entry.tag), entry.type == 2,
                    let value = ExifReader.byteValue(of: entry, inRawBytes: raw)
                else { return nil }
                // Up to the first NUL; a value with none is taken whole.
                let text = Array(value.prefix { $0 != 0 })
                return text.isEmpty ? nil : (entry.tag, text)
            }
        }
        for (tag, text) in strings {
            _ = (text + [0]).withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) { imago_tiff_set_string(tiff, UInt32(tag), $0.baseAddress) }
            }
        }
    }

    /// The bytes of an array tag with a 32-bit count, at most ``ImageMetadata/maximumBlockLength``; `nil` when
    /// absent, empty or larger. The count is of the tag's values as this libtiff defines them (`RichTIFFIPTC` is
    /// an array of LONGs in older versions, of bytes in newer ones).
    private static func bytes(of tag: UInt32, in tiff: OpaquePointer) -> Data? {
        var count: UInt32 = 0
        var pointer: UnsafeRawPointer?
        guard let field = TIFFFieldWithTag(tiff, tag), imago_tiff_get_bytes(tiff, tag, &count, &pointer) != 0,
            let pointer, count > 0
        else { return nil }
        let width = max(1, Int(TIFFDataWidth(TIFFFieldDataType(field))))
        let (length, overflow) = Int(count).multipliedReportingOverflow(by: width)
        guard !overflow, length <= ImageMetadata.maximumBlockLength else { return nil }
        return Data(bytes: pointer, count: length)
    }

    /// Bare IPTC-IIM `iptc` as a Photoshop image resource block: one `8BIM` resource 0x0404, an empty name, its
    /// size, the data padded to an even length.
    static func photoshopBlock(iptc: Data) -> Data {
        let size = iptc.count
        var block = Data("8BIM".utf8) + Data([0x04, 0x04, 0, 0])
        block += Data([UInt8(size >> 24 & 0xFF), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)])
        block += iptc
        if size % 2 == 1 { block.append(0) }
        return block
    }
}
