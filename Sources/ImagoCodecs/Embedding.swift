import CWebP
import Foundation
import ImagoCore
import ImagoZlib

/// Writes what an encoder's library does not into its encoded JPEG, PNG and WebP files: the ICC profile
/// (``EncodingOptions/colorProfile``, byte-identical) and the EXIF, XMP and IPTC blocks
/// (``EncodingOptions/metadata``, as given).
enum Embedding {
    /// `jpeg` with, after the SOI marker and the JFIF APP0 segment when there is one: the EXIF block as an APP1
    /// `Exif` segment, the XMP packet as an APP1 segment, the profile as APP2 `ICC_PROFILE` segments (65,519 bytes
    /// of profile each, numbered from 1), and the IPTC resources as an APP13 `Photoshop 3.0` segment.
    static func jpeg(_ jpeg: Data, profile: Data?, metadata: ImageMetadata?) throws -> Data {
        guard profile != nil || metadata != nil else { return jpeg }
        let bytes = [UInt8](jpeg)
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else {
            throw CodecError.encodingFailed(format: .jpeg, reason: "libjpeg's output does not start with SOI")
        }
        var insertAt = 2
        if bytes[2] == 0xFF, bytes[3] == 0xE0, bytes.count >= 6 {
            insertAt = min(bytes.count, 4 + (Int(bytes[4]) << 8 | Int(bytes[5])))
        }
        var output = Data(bytes[0..<insertAt])
        output.reserveCapacity(jpeg.count + (profile?.count ?? 0) + 4096)
        func segment(_ marker: UInt8, _ header: [UInt8], _ payload: some Collection<UInt8>) throws {
            let length = 2 + header.count + payload.count
            guard length <= 0xFFFF else {
                throw CodecError.encodingFailed(format: .jpeg, reason: "a block of \(payload.count) bytes does not fit")
            }
            output.append(contentsOf: [0xFF, marker, UInt8(length >> 8), UInt8(length & 0xFF)])
            output.append(contentsOf: header)
            output.append(contentsOf: payload)
        }
        if let exif = metadata?.exif { try segment(0xE1, Array("Exif".utf8) + [0, 0], exif) }
        if let xmp = metadata?.xmp { try segment(0xE1, Array("http://ns.adobe.com/xap/1.0/".utf8) + [0], xmp) }
        if let profile {
            let perSegment = 65_519
            let count = (profile.count + perSegment - 1) / perSegment
            guard !profile.isEmpty, count <= 255 else {
                throw CodecError.encodingFailed(
                    format: .jpeg, reason: "an ICC profile of \(profile.count) bytes does not fit")
            }
            let profileBytes = [UInt8](profile)
            for index in 0..<count {
                let chunk = profileBytes[(index * perSegment)..<min(profileBytes.count, (index + 1) * perSegment)]
                try segment(0xE2, Array("ICC_PROFILE".utf8) + [0, UInt8(index + 1), UInt8(count)], chunk)
            }
        }
        if let iptc = metadata?.iptc { try segment(0xED, Array("Photoshop 3.0".utf8) + [0], iptc) }
        output.append(contentsOf: bytes[insertAt...])
        return output
    }

    /// `png` with, after `IHDR`: an `iCCP` chunk for the profile (and without the `sRGB`, `gAMA` and `cHRM` chunks
    /// libpng wrote: the PNG specification allows no `sRGB` beside `iCCP`, and the profile supersedes the others),
    /// an `eXIf` chunk for the EXIF block and an `iTXt` chunk `XML:com.adobe.xmp` for the XMP packet. (PNG has no
    /// standard place for IPTC, which is left out.)
    static func png(_ png: Data, profile: Data?, metadata: ImageMetadata?) throws -> Data {
        guard profile != nil || metadata?.exif != nil || metadata?.xmp != nil else { return png }
        let bytes = [UInt8](png)
        let headerEnd = 8 + 8 + 13 + 4  // signature, IHDR
        guard bytes.count > headerEnd else {
            throw CodecError.encodingFailed(format: .png, reason: "libpng's output is too short")
        }
        var output = Data(bytes[0..<headerEnd])
        func chunk(_ type: StaticString, _ payload: [UInt8]) {
            payload.withUnsafeBytes { PNGChunks.append(type, $0, to: &output) }
        }
        if let profile {
            guard let compressed = Zlib.deflate(profile) else {
                throw CodecError.encodingFailed(format: .png, reason: "the ICC profile could not be compressed")
            }
            chunk("iCCP", Array("ICC profile".utf8) + [0, 0] + [UInt8](compressed))
        }
        if let exif = metadata?.exif { chunk("eXIf", [UInt8](exif)) }
        // keyword, NUL, uncompressed, method 0, empty language tag and translated keyword, text
        if let xmp = metadata?.xmp { chunk("iTXt", Array("XML:com.adobe.xmp".utf8) + [0, 0, 0, 0, 0] + [UInt8](xmp)) }
        var offset = headerEnd
        let dropped: Set<String> = profile == nil ? [] : ["sRGB", "gAMA", "cHRM"]
        while offset + 12 <= bytes.count {
            let length = Int(BigEndian.u32(bytes, at: offset))
            let end = min(bytes.count, offset + 12 + length)
            let type = String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self)
            if !dropped.contains(type) { output.append(contentsOf: bytes[offset..<end]) }
            offset = end
        }
        return output
    }

    /// `webp` with an `ICCP` chunk for the profile and `EXIF` and `XMP ` chunks for the metadata (libwebp's muxer
    /// turns a simple file into the extended VP8X form and sets its flags). (WebP has no place for IPTC.)
    static func webp(_ webp: Data, profile: Data?, metadata: ImageMetadata?) throws -> Data {
        let chunks = [("ICCP", profile), ("EXIF", metadata?.exif), ("XMP ", metadata?.xmp)].compactMap { name, data in
            data.map { (name, $0) }
        }
        guard !chunks.isEmpty else { return webp }
        return try webp.withUnsafeBytes { image in
            var imageData = WebPData(bytes: image.baseAddress?.assumingMemoryBound(to: UInt8.self), size: image.count)
            guard let mux = WebPMuxCreate(&imageData, 0) else {
                throw CodecError.encodingFailed(format: .webp, reason: "libwebp's muxer cannot read the image")
            }
            defer { WebPMuxDelete(mux) }
            for (name, data) in chunks {
                let status = data.withUnsafeBytes { raw in
                    var chunkData = WebPData(
                        bytes: raw.baseAddress?.assumingMemoryBound(to: UInt8.self), size: raw.count)
                    return WebPMuxSetChunk(mux, name, &chunkData, 1)  // copied: `raw` lives only in this closure
                }
                guard status == WEBP_MUX_OK else {
                    throw CodecError.encodingFailed(format: .webp, reason: "the \(name) chunk could not be added")
                }
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
