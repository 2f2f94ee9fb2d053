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
        header.replaceSubrange(0..<8, with: be32(frame.control.width) + be32(frame.control.height))
        header.withUnsafeBytes { appendChunk(&out, type: "IHDR", payload: $0) }
        for range in structure.sharedChunks { out.append(contentsOf: bytes[range]) }
        for range in frame.data {
            appendChunk(&out, type: "IDAT", payload: UnsafeRawBufferPointer(rebasing: bytes[range]))
        }
        appendChunk(&out, type: "IEND", payload: UnsafeRawBufferPointer(start: nil, count: 0))
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

    private static func be32(_ v: Int) -> [UInt8] {
        [
            UInt8(truncatingIfNeeded: v >> 24), UInt8(truncatingIfNeeded: v >> 16), UInt8(truncatingIfNeeded: v >> 8),
            UInt8(truncatingIfNeeded: v),
        ]
    }

    private static func appendChunk(_ out: inout [UInt8], type: StaticString, payload: UnsafeRawBufferPointer) {
        out.append(contentsOf: be32(payload.count))
        let typeBytes = UnsafeRawBufferPointer(start: type.utf8Start, count: 4)
        out.append(contentsOf: typeBytes)
        out.append(contentsOf: payload)
        out.append(contentsOf: be32(Int(Zlib.crc32(payload, continuing: Zlib.crc32(typeBytes)))))
    }
}
