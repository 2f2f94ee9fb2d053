import Foundation
import ImagoCore

/// The `Exif` box of JPEG XL and the `Exif` item of HEIF: a 4-byte big-endian offset, then that many bytes, then
/// the EXIF block (a TIFF structure, in a well-made file).
enum ExifBox {
    /// The EXIF block of a box's or item's `contents`: what follows the offset and the bytes it skips (other bytes
    /// than a TIFF structure are handed on as they are, as the other formats' decoders do); `nil` when nothing
    /// follows.
    static func block(in contents: Data) -> Data? {
        guard contents.count > 4 else { return nil }
        let offset = Int(BigEndian.u32(contents, at: contents.startIndex))
        guard offset < contents.count - 4 else { return nil }
        return Data(contents.dropFirst(4 + offset))
    }
}
