import Foundation
import ImagoCore

/// The `ICCP`, `EXIF` and `XMP ` chunks of a WebP file (RIFF container: `RIFF` size `WEBP`, then chunks of a
/// four-character type, a little-endian 32-bit size and the data padded to an even length). Every read is
/// bounds-checked.
enum WebPChunks {
    /// A chunk's type, as its four bytes.
    typealias FourCC = (UInt8, UInt8, UInt8, UInt8)

    /// Calls `visit` with each chunk's type, the range its data claims and whether that range is within `bytes`,
    /// in file order, until `visit` returns `false` or the chunks run out.
    static func forEachChunk(
        in bytes: UnsafeRawBufferPointer, _ visit: (FourCC, Range<Int>, _ isComplete: Bool) -> Bool
    ) {
        guard bytes.count >= 12 else { return }
        var offset = 12
        while offset + 8 <= bytes.count {
            let type = (bytes[offset], bytes[offset + 1], bytes[offset + 2], bytes[offset + 3])
            let size =
                Int(bytes[offset + 4]) | Int(bytes[offset + 5]) << 8 | Int(bytes[offset + 6]) << 16
                | Int(bytes[offset + 7]) << 24
            let start = offset + 8
            guard visit(type, start..<(start + size), start + size <= bytes.count) else { return }
            offset = start + size + (size & 1)
        }
    }

    /// The ICC profile of the first `ICCP` chunk (``ColorSource/icc(_:)``); `nil` when there is none, and
    /// ``ColorSource/unreadable(_:)`` when it runs past the data or is over ``ColorManagement/maximumProfileSize``.
    static func iccProfile(in bytes: UnsafeRawBufferPointer) -> ColorSource? {
        var profile: ColorSource?
        forEachChunk(in: bytes) { type, range, isComplete in
            if type == (0x49, 0x43, 0x43, 0x50) {  // "ICCP"
                guard range.count <= ColorManagement.maximumProfileSize, isComplete else {
                    profile = .unreadable("the WebP's ICCP chunk is truncated or over the size limit")
                    return false
                }
                profile = .icc(Data(UnsafeRawBufferPointer(rebasing: bytes[range])))
                return false
            }
            // Image data comes after ICCP (VP8X files put it first): stop there. "VP8 ", "VP8L", "ANMF"
            return
                !(type == (0x56, 0x50, 0x38, 0x20) || type == (0x56, 0x50, 0x38, 0x4C)
                || type == (0x41, 0x4E, 0x4D, 0x46))
        }
        return profile
    }

    /// The first `EXIF` and `XMP ` chunks (which extended files put after the image data), as
    /// ``ImageMetadata/bounded`` keeps them; `nil` when there are none. A chunk that runs past the data ends the
    /// walk.
    static func metadata(in bytes: UnsafeRawBufferPointer) -> ImageMetadata? {
        var metadata = ImageMetadata()
        forEachChunk(in: bytes) { type, range, isComplete in
            guard isComplete else { return false }
            if type == (0x45, 0x58, 0x49, 0x46), metadata.exif == nil {  // "EXIF"
                metadata.exif = Data(UnsafeRawBufferPointer(rebasing: bytes[range]))
            } else if type == (0x58, 0x4D, 0x50, 0x20), metadata.xmp == nil {  // "XMP "
                metadata.xmp = Data(UnsafeRawBufferPointer(rebasing: bytes[range]))
            }
            return true
        }
        return metadata.bounded
    }
}
