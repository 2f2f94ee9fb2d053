import CJXL
import Foundation
import ImagoCore

/// JPEG XL's metadata boxes, read and written with libjxl's box API: `Exif` (a 4-byte big-endian offset, then the
/// TIFF structure) and `xml ` (XMP). Brotli-compressed boxes (`brob`) are decompressed by libjxl. A bare codestream
/// (no container) has none. JPEG XL has no place for IPTC.
enum JPEGXLMetadata {
    /// The `Exif` and `xml ` boxes of `data` (a JPEG XL file), each within ``ImageMetadata/maximumBlockLength``
    /// (a larger box is skipped as it is read: libjxl is given no more room), ``ImageMetadata/bounded``; `nil` when
    /// there are none or libjxl fails (metadata never costs the image). Only the boxes are read: with no codestream
    /// event asked for, libjxl skips the image.
    static func read(_ data: Data) -> ImageMetadata? {
        data.withUnsafeBytes { raw -> ImageMetadata? in
            guard let base = raw.baseAddress?.assumingMemoryBound(to: UInt8.self),
                JxlSignatureCheck(base, raw.count) == JXL_SIG_CONTAINER, let decoder = JxlDecoderCreate(nil)
            else { return nil }
            defer { JxlDecoderDestroy(decoder) }
            guard JxlDecoderSubscribeEvents(decoder, Int32(JXL_DEC_BOX.rawValue)) == JXL_DEC_SUCCESS,
                JxlDecoderSetDecompressBoxes(decoder, 1) == JXL_DEC_SUCCESS,
                JxlDecoderSetInput(decoder, base, raw.count) == JXL_DEC_SUCCESS
            else { return nil }
            JxlDecoderCloseInput(decoder)
            var metadata = ImageMetadata()
            // One box at a time: its buffer (one byte past the limit, to tell a box over it) and its type.
            let capacity = ImageMetadata.maximumBlockLength + 1
            let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
            defer { buffer.deallocate() }
            var reading: String?
            func finish() {
                guard let type = reading else { return }
                reading = nil
                let count = capacity - JxlDecoderReleaseBoxBuffer(decoder)
                guard count < capacity else { return }  // over the limit: left out
                let contents = Data(bytes: buffer, count: count)
                if type == "Exif" {
                    metadata.exif = ExifBox.block(in: contents)
                } else if metadata.xmp == nil {
                    metadata.xmp = contents
                }
            }
            loop: while true {
                switch JxlDecoderProcessInput(decoder) {
                case JXL_DEC_BOX:
                    finish()
                    var type: JxlBoxType = (0, 0, 0, 0)
                    guard JxlDecoderGetBoxType(decoder, &type, 1) == JXL_DEC_SUCCESS else { break loop }
                    let name = String(
                        decoding: [
                            UInt8(bitPattern: type.0), UInt8(bitPattern: type.1), UInt8(bitPattern: type.2),
                            UInt8(bitPattern: type.3),
                        ], as: UTF8.self)
                    if (name == "Exif" && metadata.exif == nil) || name == "xml " {
                        guard JxlDecoderSetBoxBuffer(decoder, buffer, capacity) == JXL_DEC_SUCCESS else { break loop }
                        reading = name
                    }
                case JXL_DEC_BOX_NEED_MORE_OUTPUT:
                    // Over the limit: drop this box and go on to the next.
                    _ = JxlDecoderReleaseBoxBuffer(decoder)
                    reading = nil
                case JXL_DEC_SUCCESS:
                    finish()
                    break loop
                default:
                    break loop  // an error or the end of the input: keep what was read
                }
            }
            return metadata.bounded
        }
    }

    /// Adds `metadata`'s EXIF (with a zero offset in front) and XMP as boxes of the file `encoder` makes, which
    /// must not have started its frames; closes the boxes. Nothing for `nil` or IPTC only.
    static func add(_ metadata: ImageMetadata?, to encoder: OpaquePointer) throws {
        guard let metadata, metadata.exif != nil || metadata.xmp != nil else { return }
        func check(_ status: JxlEncoderStatus, _ what: String) throws {
            guard status == JXL_ENC_SUCCESS else {
                throw CodecError.encodingFailed(format: .jpegXL, reason: "libjxl could not \(what)")
            }
        }
        try check(JxlEncoderUseContainer(encoder, 1), "write a container")
        try check(JxlEncoderUseBoxes(encoder), "start metadata boxes")
        func box(_ type: String, _ contents: Data) throws {
            try contents.withUnsafeBytes { raw in
                try check(
                    JxlEncoderAddBox(encoder, type, raw.baseAddress?.assumingMemoryBound(to: UInt8.self), raw.count, 0),
                    "add the \(type) box")
            }
        }
        if let exif = metadata.exif { try box("Exif", Data([0, 0, 0, 0]) + exif) }
        if let xmp = metadata.xmp { try box("xml ", xmp) }
        JxlEncoderCloseBoxes(encoder)
    }
}
