import Foundation
import ImagoCore

/// The `ICCP` chunk of a WebP file (RIFF container: `RIFF` size `WEBP`, then chunks of a four-character type,
/// a little-endian 32-bit size and the data padded to an even length). Every read is bounds-checked.
enum WebPChunks {
    /// The ICC profile of the first `ICCP` chunk; `nil` when there is none, and `nil` with a warning when it runs
    /// past the data or is over ``ColorManagement/maximumProfileSize``.
    static func iccProfile(in bytes: UnsafeRawBufferPointer) -> Data? {
        guard bytes.count >= 12 else { return nil }
        var offset = 12
        while offset + 8 <= bytes.count {
            let type = (bytes[offset], bytes[offset + 1], bytes[offset + 2], bytes[offset + 3])
            let size =
                Int(bytes[offset + 4]) | Int(bytes[offset + 5]) << 8 | Int(bytes[offset + 6]) << 16
                | Int(bytes[offset + 7]) << 24
            let start = offset + 8
            if type == (0x49, 0x43, 0x43, 0x50) {  // "ICCP"
                guard size <= ColorManagement.maximumProfileSize, start + size <= bytes.count else {
                    ColorManagement.warn("the WebP's ICCP chunk is truncated or over the size limit")
                    return nil
                }
                return Data(UnsafeRawBufferPointer(rebasing: bytes[start..<start + size]))
            }
            // Image data comes after ICCP (VP8X files put it first): stop there.
            if type == (0x56, 0x50, 0x38, 0x20) || type == (0x56, 0x50, 0x38, 0x4C) || type == (0x41, 0x4E, 0x4D, 0x46)
            {
                return nil  // "VP8 ", "VP8L", "ANMF"
            }
            offset = start + size + (size & 1)
        }
        return nil
    }

    /// The first `EXIF` and `XMP ` chunks (which extended files put after the image data), as
    /// ``ImageMetadata/bounded`` keeps them; `nil` when there are none. A chunk that runs past the data ends the
    /// walk.
    static func metadata(in bytes: UnsafeRawBufferPointer) -> ImageMetadata? {
        guard bytes.count >= 12 else { return nil }
        var metadata = ImageMetadata()
        var offset = 12
        while offset + 8 <= bytes.count {
            let type = (bytes[offset], bytes[offset + 1], bytes[offset + 2], bytes[offset + 3])
            let size =
                Int(bytes[offset + 4]) | Int(bytes[offset + 5]) << 8 | Int(bytes[offset + 6]) << 16
                | Int(bytes[offset + 7]) << 24
            let start = offset + 8
            guard start + size <= bytes.count else { break }
            let data = { Data(UnsafeRawBufferPointer(rebasing: bytes[start..<start + size])) }
            if type == (0x45, 0x58, 0x49, 0x46), metadata.exif == nil {  // "EXIF"
                metadata.exif = data()
            } else if type == (0x58, 0x4D, 0x50, 0x20), metadata.xmp == nil {  // "XMP "
                metadata.xmp = data()
            }
            offset = start + size + (size & 1)
        }
        return metadata.bounded
    }
}
