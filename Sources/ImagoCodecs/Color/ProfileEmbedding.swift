import CWebP
import Foundation
import ImagoCore

/// Writes an ICC profile, byte-identical, into encoded JPEG, PNG and WebP files (``EncodingOptions/colorProfile``).
enum ProfileEmbedding {
    /// `jpeg` with the profile as APP2 `ICC_PROFILE` segments (65,519 bytes of profile each, numbered from 1), after
    /// the SOI marker and the JFIF APP0 segment when there is one.
    static func jpeg(_ jpeg: Data, profile: Data) throws -> Data {
        let perSegment = 65_519
        let count = (profile.count + perSegment - 1) / perSegment
        guard !profile.isEmpty, count <= 255 else {
            throw CodecError.encodingFailed(
                format: .jpeg, reason: "an ICC profile of \(profile.count) bytes does not fit")
        }
        let bytes = [UInt8](jpeg)
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else {
            throw CodecError.encodingFailed(format: .jpeg, reason: "libjpeg's output does not start with SOI")
        }
        var insertAt = 2
        if bytes[2] == 0xFF, bytes[3] == 0xE0, bytes.count >= 6 {
            insertAt = min(bytes.count, 4 + (Int(bytes[4]) << 8 | Int(bytes[5])))
        }
        var output = Data(bytes[0..<insertAt])
        output.reserveCapacity(jpeg.count + profile.count + count * 18)
        let profileBytes = [UInt8](profile)
        for index in 0..<count {
            let chunk = profileBytes[(index * perSegment)..<min(profileBytes.count, (index + 1) * perSegment)]
            let length = 2 + 14 + chunk.count
            output.append(contentsOf: [0xFF, 0xE2, UInt8(length >> 8), UInt8(length & 0xFF)])
            output.append(contentsOf: Array("ICC_PROFILE".utf8) + [0, UInt8(index + 1), UInt8(count)])
            output.append(contentsOf: chunk)
        }
        output.append(contentsOf: bytes[insertAt...])
        return output
    }

    /// `png` with an `iCCP` chunk after `IHDR`, and without the `sRGB`, `gAMA` and `cHRM` chunks libpng wrote (the
    /// PNG specification allows no `sRGB` beside `iCCP`, and the profile supersedes the others).
    static func png(_ png: Data, profile: Data) throws -> Data {
        guard let compressed = PNGChunks.deflate(profile) else {
            throw CodecError.encodingFailed(format: .png, reason: "the ICC profile could not be compressed")
        }
        let bytes = [UInt8](png)
        let headerEnd = 8 + 8 + 13 + 4  // signature, IHDR
        guard bytes.count > headerEnd else {
            throw CodecError.encodingFailed(format: .png, reason: "libpng's output is too short")
        }
        var output = Data(bytes[0..<headerEnd])
        let payload = Array("ICC profile".utf8) + [0, 0] + [UInt8](compressed)
        let typeAndData = Array("iCCP".utf8) + payload
        output.append(contentsOf: bigEndian(UInt32(payload.count)))
        output.append(contentsOf: typeAndData)
        output.append(contentsOf: bigEndian(PNGChunks.crc32(typeAndData)))
        var offset = headerEnd
        let dropped: Set<String> = ["sRGB", "gAMA", "cHRM"]
        while offset + 12 <= bytes.count {
            let length =
                Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8
                | Int(bytes[offset + 3])
            let end = min(bytes.count, offset + 12 + length)
            let type = String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self)
            if !dropped.contains(type) { output.append(contentsOf: bytes[offset..<end]) }
            offset = end
        }
        return output
    }

    /// `webp` with an `ICCP` chunk (libwebp's muxer turns a simple file into the extended VP8X form).
    static func webp(_ webp: Data, profile: Data) throws -> Data {
        try webp.withUnsafeBytes { image in
            try profile.withUnsafeBytes { icc in
                var imageData = WebPData(
                    bytes: image.baseAddress?.assumingMemoryBound(to: UInt8.self), size: image.count)
                guard let mux = WebPMuxCreate(&imageData, 0) else {
                    throw CodecError.encodingFailed(format: .webp, reason: "libwebp's muxer cannot read the image")
                }
                defer { WebPMuxDelete(mux) }
                var iccData = WebPData(bytes: icc.baseAddress?.assumingMemoryBound(to: UInt8.self), size: icc.count)
                guard WebPMuxSetChunk(mux, "ICCP", &iccData, 1) == WEBP_MUX_OK else {
                    throw CodecError.encodingFailed(format: .webp, reason: "the ICC profile could not be added")
                }
                var assembled = WebPData()
                defer { WebPDataClear(&assembled) }
                guard WebPMuxAssemble(mux, &assembled) == WEBP_MUX_OK, let bytes = assembled.bytes else {
                    throw CodecError.encodingFailed(format: .webp, reason: "libwebp's muxer failed")
                }
                return Data(bytes: bytes, count: assembled.size)
            }
        }
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }
}
