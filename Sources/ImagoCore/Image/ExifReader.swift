import Foundation

/// Reads the EXIF fields Imago needs (the orientation, tag 0x0112 of IFD0; and IFD0's entries, for the metadata
/// filters of ImagoCodecs) from an EXIF block.
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

    /// One entry of IFD0: its tag, type and value count, and where its 4-byte value field starts in the block given
    /// (after any `Exif\0\0` prefix).
    package struct Entry: Sendable, Equatable {
        package var tag: UInt16
        package var type: UInt16
        package var count: UInt32
        package var valueField: Int
    }

    /// Whether `bytes` starts (after an optional `Exif\0\0`) with a TIFF header: `II*\0` or `MM\0*`.
    package static func hasTIFFHeader(inRawBytes bytes: UnsafeRawBufferPointer) -> Bool { TIFFView(exif: bytes) != nil }

    /// The byte order and IFD0's entries, in order, of the EXIF block at `bytes`; `nil` when it has no TIFF header or
    /// its IFD0 lies outside it. Entries past the end of the data are left out, whatever the declared count says.
    package static func ifd0(inRawBytes bytes: UnsafeRawBufferPointer) -> (isBigEndian: Bool, entries: [Entry])? {
        guard let tiff = TIFFView(exif: bytes), let ifd0 = tiff.u32(at: 4),
            let entries = tiff.entries(ofIFDAt: Int(ifd0))
        else { return nil }
        return (tiff.isBigEndian, entries)
    }

    /// The entries, in order, of the EXIF sub-IFD (the one IFD0's `ExifIFDPointer`, 0x8769, points to: exposure,
    /// dates, `PixelXDimension`…) of the block at `bytes`; `nil` when there is none or it lies outside the block.
    package static func exifIFD(inRawBytes bytes: UnsafeRawBufferPointer) -> [Entry]? {
        guard let tiff = TIFFView(exif: bytes) else { return nil }
        var pointer: UInt32?
        tiff.forEachIFD0Entry { entry in
            guard entry.tag == 0x8769 else { return true }
            if entry.type == 4 || entry.type == 13, entry.count == 1 {
                pointer = tiff.u32(at: entry.valueField - tiff.start)
            }
            return false
        }
        guard let pointer else { return nil }
        return tiff.entries(ofIFDAt: Int(pointer))
    }

    /// Where the TIFF header starts in the block at `bytes` (6 after an `Exif\0\0` prefix, else 0), which the
    /// structure's offsets count from; `nil` when it has none.
    package static func tiffStart(inRawBytes bytes: UnsafeRawBufferPointer) -> Int? { TIFFView(exif: bytes)?.start }

    /// IFD1 of the block at `bytes`, the embedded thumbnail's directory: the bytes of IFD0's directory (its count,
    /// entries and 4-byte link, the link last), the bytes of IFD1's, and IFD1's entries, all as offsets in the block
    /// given; `nil` when IFD0 links to none or either directory lies outside the block.
    package static func ifd1(
        inRawBytes bytes: UnsafeRawBufferPointer
    ) -> (ifd0: Range<Int>, ifd1: Range<Int>, entries: [Entry])? {
        guard let tiff = TIFFView(exif: bytes), let ifd0 = tiff.u32(at: 4), let count = tiff.u16(at: Int(ifd0)) else {
            return nil
        }
        let link = Int(ifd0) + 2 + Int(count) * 12
        guard let next = tiff.u32(at: link), next != 0, let entries = tiff.entries(ofIFDAt: Int(next)) else {
            return nil
        }
        let length = min(2 + entries.count * 12 + 4, tiff.bytes.count - Int(next))
        return (
            (tiff.start + Int(ifd0))..<(tiff.start + link + 4),
            (tiff.start + Int(next))..<(tiff.start + Int(next) + length),
            entries
        )
    }

    /// The value of a LONG (or SHORT) `entry` held in its value field, in the block at `bytes`; `nil` for another
    /// type, a count other than 1, or a field outside the block.
    package static func integerValue(of entry: Entry, inRawBytes bytes: UnsafeRawBufferPointer) -> Int? {
        guard entry.count == 1, let tiff = TIFFView(exif: bytes) else { return nil }
        switch entry.type {
        case 3: return tiff.u16(at: entry.valueField - tiff.start).map(Int.init)
        case 4: return tiff.u32(at: entry.valueField - tiff.start).map(Int.init)
        default: return nil
        }
    }

    /// The bytes of `entry`'s value in the EXIF block at `bytes` (inline, or at the offset its field holds) for the
    /// byte-sized types (BYTE, ASCII, UNDEFINED); `nil` for other types or a value outside the block.
    package static func byteValue(of entry: Entry, inRawBytes bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer?
    {
        guard [1, 2, 7].contains(entry.type), let tiff = TIFFView(exif: bytes) else { return nil }
        let count = Int(entry.count)
        var start = entry.valueField
        if count > 4 {
            guard let offset = tiff.u32(at: entry.valueField - tiff.start) else { return nil }
            start = tiff.start + Int(offset)
        }
        guard start >= 0, count <= bytes.count - start else { return nil }
        return UnsafeRawBufferPointer(rebasing: bytes[start..<(start + count)])
    }
}

/// A bounds-checked view of a TIFF structure in memory.
private struct TIFFView {
    let bytes: UnsafeRawBufferPointer
    let isBigEndian: Bool
    /// Where the TIFF header starts in the block given (6 after an `Exif\0?` prefix, else 0).
    let start: Int

    /// Recognises the `Exif\0?` prefix (optional) and the TIFF byte-order header.
    init?(exif: UnsafeRawBufferPointer) {
        var start = 0
        // "Exif" followed by two bytes (normally 0, 0) precedes the TIFF header in JPEG APP1 segments.
        if exif.count >= 6, exif[0] == 0x45, exif[1] == 0x78, exif[2] == 0x69, exif[3] == 0x66, exif[4] == 0 {
            start = 6
        }
        self.start = start
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

    /// Calls `visit` with IFD0's entries in order (their value fields as offsets in the block given) until it
    /// returns `false`; `false` when IFD0 lies outside the data. Never walks past the data, whatever the declared
    /// count says.
    @discardableResult
    func forEachIFD0Entry(_ visit: (ExifReader.Entry) -> Bool) -> Bool {
        guard let ifdOffset = u32(at: 4) else { return false }
        return forEachEntry(ofIFDAt: Int(ifdOffset), visit)
    }

    /// Calls `visit` with the entries of the IFD at `ifdOffset` (from the TIFF header) as ``forEachIFD0Entry(_:)``
    /// does; `false` when that IFD lies outside the data.
    @discardableResult
    func forEachEntry(ofIFDAt ifdOffset: Int, _ visit: (ExifReader.Entry) -> Bool) -> Bool {
        guard ifdOffset >= 8, let entryCount = u16(at: ifdOffset) else { return false }
        let available = (bytes.count - ifdOffset - 2) / 12
        let count = min(Int(entryCount), max(0, available))
        for index in 0..<count {
            let entry = ifdOffset + 2 + index * 12
            guard let tag = u16(at: entry), let type = u16(at: entry + 2), let valueCount = u32(at: entry + 4),
                visit(ExifReader.Entry(tag: tag, type: type, count: valueCount, valueField: start + entry + 8))
            else { break }
        }
        return true
    }

    /// The entries of the IFD at `ifdOffset`, in order (``forEachEntry(ofIFDAt:_:)``); `nil` when it lies outside
    /// the data.
    func entries(ofIFDAt ifdOffset: Int) -> [ExifReader.Entry]? {
        var entries: [ExifReader.Entry] = []
        guard
            forEachEntry(
                ofIFDAt: ifdOffset,
                {
                    entries.append($0); return true
                })
        else { return nil }
        return entries
    }

    /// The first value of `tag` in IFD0 when it is a SHORT (or, leniently, a LONG) stored inline.
    func ifd0Short(tag: UInt16) -> UInt16? {
        var value: UInt16?
        forEachIFD0Entry { entry in
            guard entry.tag == tag else { return true }
            let field = entry.valueField - start
            guard entry.count >= 1 else { return false }
            switch entry.type {
            case 3: value = u16(at: field)  // SHORT: the first two bytes of the value field
            case 4: value = u32(at: field).flatMap { $0 <= UInt32(UInt16.max) ? UInt16($0) : nil }  // LONG
            default: break
            }
            return false
        }
        return value
    }
}
