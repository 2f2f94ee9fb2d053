import ImagoCore

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

    /// `ftyp` of an AVIF still: major brand `avif`, compatible with `avif`, `mif1` and `miaf`.
    static var avifFileType: ISOBMFFBox {
        var box = ISOBMFFBox("ftyp")
        box.bytes = Array("avif".utf8) + [0, 0, 0, 0] + Array("avifmif1miaf".utf8)
        return box
    }

    /// `hdlr` of an image file's `meta`: handler `pict`, an empty name.
    static var pictureHandler: ISOBMFFBox {
        var box = ISOBMFFBox("hdlr", version: 0)
        box.append(UInt32(0))
        box.bytes += Array("pict".utf8) + [UInt8](repeating: 0, count: 13)
        return box
    }

    /// `pitm` (version 0) naming item `id`.
    static func primaryItem(_ id: UInt16) -> ISOBMFFBox {
        var box = ISOBMFFBox("pitm", version: 0)
        box.append(id)
        return box
    }

    /// Appends each value big-endian, in its own width.
    mutating func append(_ values: any FixedWidthInteger...) {
        for value in values { bytes += BigEndian.bytes(value) }
    }

    /// The box: size, type and body.
    var encoded: [UInt8] {
        withUnsafeBytes(of: UInt32(truncatingIfNeeded: bytes.count + 8).bigEndian, Array.init) + Array(type.utf8)
            + bytes
    }
}
