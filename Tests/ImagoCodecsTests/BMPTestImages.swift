import Foundation
import ImagoCore

/// A small BMP/ICO writer for tests: DIB headers of every kind, palettes, masks and pixel rows, so each bit depth
/// and compression the decoders read can be made with known pixels.
enum BMPTestImages {
    static func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
    static func le32(_ v: Int) -> [UInt8] { le16(v & 0xFFFF) + le16(v >> 16 & 0xFFFF) }

    /// A DIB: header of `headerSize` bytes (12, 40, 56, 108 or 124), then masks after a 40-byte header when
    /// bit fields are used, the palette and the pixel data.
    static func dib(
        headerSize: Int = 40, width: Int, height: Int, bitCount: Int, compression: Int = 0, masks: [UInt32] = [],
        palette: [RGBA] = [], pixelData: [UInt8]
    ) -> [UInt8] {
        var h: [UInt8]
        if headerSize == 12 {
            h = le32(12) + le16(width) + le16(height) + le16(1) + le16(bitCount)
        } else {
            h = le32(headerSize) + le32(width) + le32(height) + le16(1) + le16(bitCount) + le32(compression)
            h += le32(pixelData.count) + le32(2835) + le32(2835) + le32(palette.count) + le32(0)
            if headerSize >= 52 {
                let m = masks + [UInt32](repeating: 0, count: max(0, 4 - masks.count))
                h += le32(Int(m[0])) + le32(Int(m[1])) + le32(Int(m[2]))
                if headerSize >= 56 { h += le32(Int(m[3])) }
            }
            h += [UInt8](repeating: 0, count: headerSize - h.count)
            if headerSize == 40 && (compression == 3 || compression == 6) {
                for m in masks { h += le32(Int(m)) }
            }
        }
        for c in palette { h += headerSize == 12 ? [c.b, c.g, c.r] : [c.b, c.g, c.r, 0] }
        return h + pixelData
    }

    /// A BMP file around `dib`, whose pixel data is its last `pixelBytes` bytes.
    static func file(_ dib: [UInt8], pixelBytes: Int) -> Data {
        let offset = 14 + dib.count - pixelBytes
        return Data(Array("BM".utf8) + le32(14 + dib.count) + le32(0) + le32(offset) + dib)
    }

    /// Stored rows (padded to 4 bytes, bottom-up unless `topDown`) from `row(y)`, the bytes of output row `y`.
    static func rows(height: Int, topDown: Bool = false, _ row: (Int) -> [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        for i in 0..<height {
            var bytes = row(topDown ? i : height - 1 - i)
            while bytes.count % 4 != 0 { bytes.append(0) }
            out += bytes
        }
        return out
    }

    /// Packs indices of `bits` bits each, most significant first.
    static func pack(_ indices: [Int], bits: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: (indices.count * bits + 7) / 8)
        for (x, index) in indices.enumerated() {
            let bit = x * bits
            out[bit / 8] |= UInt8(index << (8 - bits - bit % 8) & 0xFF)
        }
        return out
    }

    /// A palette of `count` distinct opaque colours.
    static func palette(_ count: Int) -> [RGBA] {
        (0..<count).map { (i: Int) -> RGBA in
            let r = UInt8(truncatingIfNeeded: i * 37)
            let g = UInt8(truncatingIfNeeded: i * 91 + 7)
            return RGBA(r: r, g: g, b: UInt8(truncatingIfNeeded: 255 - i))
        }
    }

    /// An ICO (or CUR, `type` 2) directory around entries given as (declared width, height, bit count, bytes).
    static func icon(type: Int = 1, _ entries: [(width: Int, height: Int, bitCount: Int, bytes: [UInt8])]) -> Data {
        var out = le16(0) + le16(type) + le16(entries.count)
        var offset = 6 + 16 * entries.count
        for e in entries {
            out += [UInt8(e.width & 0xFF), UInt8(e.height & 0xFF), 0, 0] + le16(1) + le16(e.bitCount)
            out += le32(e.bytes.count) + le32(offset)
            offset += e.bytes.count
        }
        for e in entries { out += e.bytes }
        return Data(out)
    }
}
