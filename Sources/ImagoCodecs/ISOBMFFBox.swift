/// An ISO-BMFF box being written: its type and body; ``encoded`` puts the 32-bit size in front. For files that
/// Imago makes for a C library to read (`AVIFTileAlpha`'s one-item AVIFs) and for tests that build containers.
///
/// ```swift
/// var pitm = ISOBMFFBox("pitm", version: 0)
/// pitm.append(UInt16(1))
/// let bytes = pitm.encoded  // 00 00 00 0E 'pitm' 00 00 00 00 00 01
/// ```
struct ISOBMFFBox {
    /// The four-character type.
    let type: String
    /// The body written so far (a full box starts with its version and three flag bytes).
    var bytes: [UInt8] = []

    /// An empty box of `type`; with `version`, a full box (version, then flags 0).
    init(_ type: String, version: UInt8? = nil) {
        self.type = type
        if let version { bytes = [version, 0, 0, 0] }
    }

    /// Appends each value big-endian, in its own width.
    mutating func append(_ values: any FixedWidthInteger...) {
        for value in values { appendBigEndian(value) }
    }

    private mutating func appendBigEndian<T: FixedWidthInteger>(_ value: T) {
        for shift in stride(from: value.bitWidth - 8, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> shift))
        }
    }

    /// The box: size, type and body.
    var encoded: [UInt8] {
        withUnsafeBytes(of: UInt32(truncatingIfNeeded: bytes.count + 8).bigEndian, Array.init) + Array(type.utf8)
            + bytes
    }
}
