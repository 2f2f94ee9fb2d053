import Foundation
import ImagoCore
import ImagoZlib

/// PNG chunk CRCs recomputed after the fuzzer's mutations, so that a mutated chunk reaches the parser behind
/// libpng's CRC check (a critical chunk with a wrong CRC is refused before its data is read, and libpng is not
/// instrumented, so the fuzzer cannot learn the CRC from comparisons).
enum PNGCRCs {
    private static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// `data`, and `data` ``resealed(_:)`` when that differs: what the PNG targets decode.
    static func asIsAndResealed(_ data: Data) -> [Data] {
        guard let resealed = resealed(data) else { return [data] }
        return [data, resealed]
    }

    /// `data` with the CRC of every whole chunk after the PNG signature rewritten over its type and data; `nil`
    /// when `data` does not start with the signature or every CRC was already right. A chunk whose declared length
    /// runs past the end stops the walk (the decoder sees it truncated, as before).
    static func resealed(_ data: Data) -> Data? {
        var bytes = [UInt8](data)
        guard bytes.count >= 8, Array(bytes[0..<8]) == signature else { return nil }
        var offset = 8
        var changed = false
        while bytes.count - offset >= 12 {
            let length = Int(BigEndian.u32(bytes, at: offset))
            guard length <= bytes.count - offset - 12 else { break }
            let crcAt = offset + 8 + length
            let crc = bytes.withUnsafeBytes { Zlib.crc32(UnsafeRawBufferPointer(rebasing: $0[offset + 4..<crcAt])) }
            let sealed = BigEndian.bytes(crc)
            if !bytes[crcAt..<crcAt + 4].elementsEqual(sealed) {
                bytes.replaceSubrange(crcAt..<crcAt + 4, with: sealed)
                changed = true
            }
            offset = crcAt + 4
        }
        return changed ? Data(bytes) : nil
    }
}
