import ImagoCore

/// What JPEGDecoder needs from the marker segments that TurboJPEG does not report: the EXIF orientation, the
/// Adobe APP14 marker (Adobe CMYK files store inverted ink values), and whether the data is complete (an EOI
/// marker after the first scan), which tells a truncated download apart from a harmless libjpeg warning.
///
/// Walks the segment headers from SOI to the first SOS (a few dozen bytes of reads), then looks for EOI
/// backwards from the end. Never trusts a length: every read is bounds-checked.
struct JPEGMarkers {
    /// The orientation from the first APP1 `Exif` segment, `.up` when there is none or it is unreadable.
    var orientation: ExifOrientation = .up
    /// Whether an APP14 `Adobe` segment is present.
    var hasAdobeMarker = false
    /// Whether the data ends before the image is complete: the segments run past the end before a scan starts,
    /// or no EOI marker follows the first scan.
    var isTruncated = false

    init(scanning bytes: UnsafeRawBufferPointer) {
        let count = bytes.count
        guard count >= 2, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return }
        var offset = 2
        var startOfScan: Int?
        var sawExif = false
        walk: while true {
            // Markers may be padded with any number of 0xFF fill bytes.
            guard offset < count else {
                isTruncated = true
                return
            }
            guard bytes[offset] == 0xFF else { break walk }  // garbage: libjpeg will report it
            while offset < count && bytes[offset] == 0xFF { offset += 1 }
            guard offset < count else {
                isTruncated = true
                return
            }
            let marker = bytes[offset]
            let segment = offset - 1
            offset += 1
            switch marker {
            case 0x01, 0xD0...0xD8:
                continue walk  // stand-alone markers without a length
            case 0xD9:
                break walk  // EOI before any scan: libjpeg will report it
            default:
                break
            }
            guard offset + 2 <= count else {
                isTruncated = true
                return
            }
            let length = Int(bytes[offset]) << 8 | Int(bytes[offset + 1])
            guard length >= 2 else { break walk }
            let payloadStart = offset + 2
            let payloadEnd = offset + length
            if marker == 0xDA {
                startOfScan = segment
                break walk
            }
            guard payloadEnd <= count else {
                isTruncated = true
                return
            }
            let payload = UnsafeRawBufferPointer(rebasing: bytes[payloadStart..<payloadEnd])
            if marker == 0xE1, !sawExif, Self.hasPrefix(payload, "Exif") {
                sawExif = true
                orientation = ExifReader.orientation(inRawBytes: payload) ?? .up
            } else if marker == 0xEE, Self.hasPrefix(payload, "Adobe") {
                hasAdobeMarker = true
            }
            offset = payloadEnd
        }
        if let startOfScan {
            isTruncated = !Self.hasEndOfImage(bytes, after: startOfScan)
        }
    }

    private static func hasPrefix(_ payload: UnsafeRawBufferPointer, _ prefix: StaticString) -> Bool {
        let n = prefix.utf8CodeUnitCount
        guard payload.count >= n else { return false }
        let p = prefix.utf8Start
        for i in 0..<n where payload[i] != p[i] { return false }
        return true
    }

    /// Whether `FF D9` occurs after `start`. Searched from the end: complete files end with EOI, perhaps followed
    /// by some trailing bytes, so the search is short; entropy-coded data never contains `FF D9` (0xFF is stuffed
    /// as `FF 00`), so a match after the first scan is the real end of the image.
    private static func hasEndOfImage(_ bytes: UnsafeRawBufferPointer, after start: Int) -> Bool {
        var i = bytes.count - 2
        while i > start {
            if bytes[i] == 0xFF && bytes[i + 1] == 0xD9 { return true }
            i -= 1
        }
        return false
    }
}
