import CImagoShims
import CPNG
import ImagoCore
import ImagoZlib

/// Turns one APNG frame into a standalone PNG that libpng's simplified API reads: the signature, an `IHDR` with
/// the frame's size, the shared `PLTE`/`tRNS` chunks, the frame's data as `IDAT` chunks (from `fdAT` without its
/// sequence number) and `IEND`, every CRC computed.
///
/// `gAMA` is left out, as ``PNGDecoder`` leaves it out (stored samples are taken as sRGB).
enum APNGFrameStream {
    static func make(
        _ frame: APNGStructure.Frame, structure: APNGStructure, bytes: UnsafeRawBufferPointer
    ) -> [UInt8] {
        var out: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        let dataBytes = frame.data.reduce(0) { $0 + $1.count + 12 }
        let sharedBytes = structure.sharedChunks.reduce(0) { $0 + $1.count }
        out.reserveCapacity(8 + 25 + sharedBytes + dataBytes + 12)
        var header = [UInt8](bytes[structure.header])
        header.replaceSubrange(
            0..<8,
            with: BigEndian.bytes(UInt32(frame.control.width)) + BigEndian.bytes(UInt32(frame.control.height)))
        header.withUnsafeBytes { PNGChunks.append("IHDR", $0, to: &out) }
        for range in structure.sharedChunks { out.append(contentsOf: bytes[range]) }
        for range in frame.data {
            PNGChunks.append("IDAT", UnsafeRawBufferPointer(rebasing: bytes[range]), to: &out)
        }
        PNGChunks.append("IEND", UnsafeRawBufferPointer(start: nil, count: 0), to: &out)
        return out
    }

    /// Decodes a stream from ``make(_:structure:bytes:)`` to RGBA8 (16-bit samples rounded to 8 bits) into
    /// `scratch`, rows of `width × 4` bytes, growing it when the frame is larger than any before: one buffer
    /// serves every frame of an animation (a fresh one per frame cost a page fault per 4 KB).
    static func decode(
        _ stream: [UInt8], into scratch: inout [UInt8], width: Int, height: Int, isInterlaced16Bit: Bool
    ) throws {
        try stream.withUnsafeBytes { bytes in
            guard let base = bytes.baseAddress else { throw CodecError.empty }
            let chunks = PNGChunks(scanning: bytes)
            var image = png_image()
            image.version = cimago_png_image_version
            defer { png_image_free(&image) }
            guard png_image_begin_read_from_memory(&image, base, bytes.count) != 0 else {
                throw PNGDecoder.failure(&image, chunks: chunks, format: .apng)
            }
            guard Int(image.width) == width, Int(image.height) == height else {
                throw CodecError.corrupt(format: .apng, reason: "frame size differs from its fcTL")
            }
            if isInterlaced16Bit {  // libpng's 8-bit reduction of these is broken: PNGDecoder's wide path
                let pixels = try PNGDecoder.finishRead(
                    &image, pixelFormat: .rgba8, isInterlaced16Bit: true, format: .apng, chunks: chunks)
                scratch = pixels.bytes
                return
            }
            let count = width * height * 4
            if scratch.count < count { scratch = [UInt8](repeating: 0, count: count) }
            image.format = cimago_png_format_rgba
            image.flags |= cimago_png_image_flag_16bit_srgb  // as PNGDecoder: 16-bit data is sRGB, not linear
            let ok = scratch.withUnsafeMutableBytes {
                png_image_finish_read(&image, nil, $0.baseAddress, Int32(width * 4), nil)
            }
            guard ok != 0 else { throw PNGDecoder.failure(&image, chunks: chunks, format: .apng) }
        }
    }
}
