import Foundation

/// EXIF bytes for tests: a TIFF block whose IFD0 holds only the orientation tag, and JPEGs carrying it.
public enum ExifFixture {
    /// A TIFF/EXIF block whose IFD0 holds only the orientation tag (1…8), in either byte order (default big).
    public static func block(orientation: UInt16, bigEndian: Bool = true) -> [UInt8] {
        func u16(_ v: UInt16) -> [UInt8] {
            bigEndian ? [UInt8(v >> 8), UInt8(v & 0xFF)] : [UInt8(v & 0xFF), UInt8(v >> 8)]
        }
        func u32(_ v: UInt32) -> [UInt8] {
            let be = [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)]
            return bigEndian ? be : be.reversed()
        }
        var b: [UInt8] = bigEndian ? [0x4D, 0x4D] : [0x49, 0x49]
        b += u16(42) + u32(8)  // header, IFD0 at 8
        b += u16(1)  // one entry
        b += u16(0x0112) + u16(3) + u32(1) + u16(orientation) + [0, 0]  // SHORT, count 1, value inline
        b += u32(0)  // no next IFD
        return b
    }

    /// `jpeg` with an APP1 Exif segment carrying `orientation` inserted right after SOI.
    public static func jpeg(_ jpeg: Data, withOrientation orientation: UInt16) -> Data {
        let payload = Array("Exif".utf8) + [0, 0] + block(orientation: orientation)
        let length = payload.count + 2
        var out = Data(jpeg.prefix(2))
        out += [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
        out += jpeg.dropFirst(2)
        return out
    }
}
