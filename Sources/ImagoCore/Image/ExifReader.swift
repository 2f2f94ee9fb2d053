import Foundation

/// Reads the EXIF fields Imago needs (today: the orientation, tag 0x0112 of IFD0) from an EXIF block.
///
/// An EXIF block is a small TIFF structure: a byte-order header (`II*\0` little-endian or `MM\0*` big-endian),
/// the offset of the first IFD, then 12-byte entries. JPEG stores it in an APP1 segment after `Exif\0\0`; PNG
/// stores it bare in an `eXIf` chunk. Both forms are accepted.
///
/// The data comes from outside, so every offset is bounds-checked and anything malformed yields `nil` rather
/// than a crash. Pure Swift, no allocation, thread-safe (stateless).
///
/// ```swift
/// let orientation = ExifReader.orientation(in: app1Payload) ?? .up
/// ```
public enum ExifReader {
    /// The EXIF orientation tag.
    static let orientationTag: UInt16 = 0x0112

    /// The orientation declared in `exif` (a TIFF header, optionally preceded by `Exif\0\0`), or `nil` when the
    /// block is missing the tag, declares a value outside 1…8, or is malformed.
    public static func orientation(in exif: some ContiguousBytes) -> ExifOrientation? {
        exif.withUnsafeBytes { orientation(inRawBytes: $0) }
    }

    /// The orientation declared in the EXIF block at `bytes`; see ``orientation(in:)``.
    public static func orientation(inRawBytes bytes: UnsafeRawBufferPointer) -> ExifOrientation? {
        guard let tiff = TIFFView(exif: bytes) else { return nil }
        guard let value = tiff.ifd0Short(tag: orientationTag) else { return nil }
        return ExifOrientation(rawValue: Int(value))
    }
}

/// A bounds-checked view of a TIFF structure in memory.
private struct TIFFView {
    let bytes: UnsafeRawBufferPointer
    let isBigEndian: Bool

    /// Recognises the `Exif\0?` prefix (optional) and the TIFF byte-order header.
    init?(exif: UnsafeRawBufferPointer) {
        var start = 0
        // "Exif" followed by two bytes (normally 0, 0) precedes the TIFF header in JPEG APP1 segments.
        if exif.count >= 6, exif[0] == 0x45, exif[1] == 0x78, exif[2] == 0x69, exif[3] == 0x66, exif[4] == 0 {
            start = 6
        }
        let tiff = UnsafeRawBufferPointer(rebasing: exif[start...])
        guard tiff.count >= 8 else { return nil }
        switch (tiff[0], tiff[1]) {
        case (0x49, 0x49): isBigEndian = false
        case (0x4D, 0x4D): isBigEndian = true
        default: return nil
        }
        bytes = tiff
        guard u16(at: 2) == 42 else { return nil }
    }

    /// The 16-bit value at `offset` in the file's byte order, or `nil` when it does not fit.
    func u16(at offset: Int) -> UInt16? {
        guard offset >= 0, offset <= bytes.count - 2 else { return nil }
        let a = UInt16(bytes[offset])
        let b = UInt16(bytes[offset + 1])
        return isBigEndian ? (a << 8 | b) : (b << 8 | a)
    }

    /// The 32-bit value at `offset` in the file's byte order, or `nil` when it does not fit.
    func u32(at offset: Int) -> UInt32? {
        guard offset >= 0, offset <= bytes.count - 4 else { return nil }
        var v: UInt32 = 0
        for i in 0..<4 {
            let byte = UInt32(bytes[offset + (isBigEndian ? i : 3 - i)])
            v = v << 8 | byte
        }
        return v
    }

    /// The first value of `tag` in IFD0 when it is a SHORT (or, leniently, a LONG) stored inline.
    func ifd0Short(tag: UInt16) -> UInt16? {
        guard let ifdOffset32 = u32(at: 4) else { return nil }
        let ifdOffset = Int(ifdOffset32)
        guard ifdOffset >= 8, let entryCount = u16(at: ifdOffset) else { return nil }
        // Never walk past the data, whatever the declared count says.
        let available = (bytes.count - ifdOffset - 2) / 12
        let count = min(Int(entryCount), max(0, available))
        for index in 0..<count {
            let entry = ifdOffset + 2 + index * 12
            guard let entryTag = u16(at: entry), entryTag == tag else { continue }
            guard let type = u16(at: entry + 2), let valueCount = u32(at: entry + 4), valueCount >= 1 else {
                return nil
            }
            switch type {
            case 3: return u16(at: entry + 8)  // SHORT: the first two bytes of the value field
            case 4: return u32(at: entry + 8).flatMap { $0 <= UInt32(UInt16.max) ? UInt16($0) : nil }  // LONG
            default: return nil
            }
        }
        return nil
    }
}
