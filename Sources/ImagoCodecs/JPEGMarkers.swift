import Foundation
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
    /// Whether the data ends before the image is complete: no EOI marker follows the first scan (or the point
    /// where the segments could no longer be followed).
    var isTruncated = false
    /// The frame header (SOFn) as declared: width, height and component count. Used only when TurboJPEG's own
    /// header call rejects a file it can decode (2.1 refuses unusual CMYK sampling factors in the header call).
    var frame: (width: Int, height: Int, components: Int)?
    /// Whether the first frame header is progressive (SOF2, SOF6, SOF10, SOF14): libjpeg then keeps every DCT
    /// coefficient of the image in memory whatever the output scale.
    var isProgressive = false
    /// The APP2 `ICC_PROFILE` segments in file order: sequence number, declared count and the payload's byte range
    /// (after the 14-byte header). Reassembled by ``iccProfile(in:)``.
    var iccSegments: [(sequence: Int, count: Int, range: Range<Int>)] = []
    /// The byte ranges of the first APP1 `Exif` payload (after `Exif\0\0`), the first APP1 XMP packet (after its
    /// namespace header) and the first APP13 Photoshop resource block (after `Photoshop 3.0\0`).
    var exifRange: Range<Int>?
    var xmpRange: Range<Int>?
    var iptcRange: Range<Int>?

    init(scanning bytes: UnsafeRawBufferPointer) {
        let count = bytes.count
        guard count >= 2, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return }
        // Where the walk stopped: the first SOS, or the segment it could not follow. The data is complete when an
        // EOI comes after that point (a bogus length in a corrupt file then does not pass for truncation).
        let stop = walkSegments(bytes)
        isTruncated = !Self.hasEndOfImage(bytes, after: stop)
    }

    /// Reads the segments from SOI up to the first SOS, noting what they declare; returns where it stopped.
    private mutating func walkSegments(_ bytes: UnsafeRawBufferPointer) -> Int {
        let count = bytes.count
        var offset = 2
        var sawExif = false
        while true {
            // Garbage between segments is skipped up to the next 0xFF, as libjpeg does (it warns and carries on);
            // markers may be padded with any number of 0xFF fill bytes.
            while offset < count && bytes[offset] != 0xFF { offset += 1 }
            while offset < count && bytes[offset] == 0xFF { offset += 1 }
            guard offset < count else { return count }
            let segment = offset - 1
            let marker = bytes[offset]
            offset += 1
            switch marker {
            case 0x00, 0x01, 0xD0...0xD8: continue  // stuffed byte or stand-alone marker: no length
            case 0xD9: return segment  // EOI before any scan: libjpeg reports it
            default: break
            }
            guard offset + 2 <= count else { return segment }
            let length = Int(bytes[offset]) << 8 | Int(bytes[offset + 1])
            let payloadEnd = offset + length
            guard length >= 2, marker != 0xDA, payloadEnd <= count else { return segment }
            let payload = UnsafeRawBufferPointer(rebasing: bytes[(offset + 2)..<payloadEnd])
            if marker == 0xE1, !sawExif, Self.hasPrefix(payload, "Exif") {
                sawExif = true
                orientation = ExifReader.orientation(inRawBytes: payload) ?? .up
                if payload.count > 6 { exifRange = (offset + 2 + 6)..<payloadEnd }
            } else if marker == 0xE1, xmpRange == nil, Self.hasPrefix(payload, "http://ns.adobe.com/xap/1.0/\0") {
                xmpRange = (offset + 2 + 29)..<payloadEnd
            } else if marker == 0xED, iptcRange == nil, Self.hasPrefix(payload, "Photoshop 3.0\0") {
                iptcRange = (offset + 2 + 14)..<payloadEnd
            } else if marker == 0xE2, payload.count > 14, Self.hasPrefix(payload, "ICC_PROFILE\0") {
                let start = offset + 2 + 14
                iccSegments.append((Int(payload[12]), Int(payload[13]), start..<payloadEnd))
            } else if marker == 0xEE, Self.hasPrefix(payload, "Adobe") {
                hasAdobeMarker = true
            } else if Self.isStartOfFrame(marker), frame == nil, payload.count >= 6 {
                let height = Int(payload[1]) << 8 | Int(payload[2])
                let width = Int(payload[3]) << 8 | Int(payload[4])
                frame = (width, height, Int(payload[5]))
                isProgressive = marker & 0x03 == 0x02
            }
            offset = payloadEnd
        }
    }

    /// The EXIF, XMP and IPTC blocks found (``ImageMetadata/bounded``); `nil` when there are none.
    func metadata(in bytes: UnsafeRawBufferPointer) -> ImageMetadata? {
        func block(_ range: Range<Int>?) -> Data? { range.map { Data(UnsafeRawBufferPointer(rebasing: bytes[$0])) } }
        return ImageMetadata(exif: block(exifRange), xmp: block(xmpRange), iptc: block(iptcRange)).bounded
    }

    /// SOF0…SOF15 except DHT (C4), JPG (C8) and DAC (CC).
    private static func isStartOfFrame(_ marker: UInt8) -> Bool {
        (0xC0...0xCF).contains(marker) && marker != 0xC4 && marker != 0xC8 && marker != 0xCC
    }

    private static func hasPrefix(_ payload: UnsafeRawBufferPointer, _ prefix: StaticString) -> Bool {
        let n = prefix.utf8CodeUnitCount
        guard payload.count >= n else { return false }
        let p = prefix.utf8Start
        for i in 0..<n where payload[i] != p[i] { return false }
        return true
    }

    /// Whether `FF D9` starts at or after `start`. Searched from the end: complete files end with EOI, perhaps followed
    /// by some trailing bytes, so the search is short; entropy-coded data never contains `FF D9` (0xFF is stuffed
    /// as `FF 00`), so a match after the first scan is the real end of the image.
    private static func hasEndOfImage(_ bytes: UnsafeRawBufferPointer, after start: Int) -> Bool {
        var i = bytes.count - 2
        while i >= start {
            if bytes[i] == 0xFF && bytes[i + 1] == 0xD9 { return true }
            i -= 1
        }
        return false
    }

    /// The embedded ICC profile, its APP2 segments joined in sequence order (``ColorSource/icc(_:)``); `nil` when
    /// there is none, and ``ColorSource/unreadable(_:)`` when the sequence is broken (a number missing, repeated
    /// or out of range, counts that disagree) or the profile is over ``ColorManagement/maximumProfileSize``.
    func iccProfile(in bytes: UnsafeRawBufferPointer) -> ColorSource? {
        guard let first = iccSegments.first else { return nil }
        let count = first.count
        var ordered = [Range<Int>?](repeating: nil, count: max(count, 0))
        var total = 0
        for segment in iccSegments {
            guard segment.count == count, (1...max(count, 1)).contains(segment.sequence), count > 0,
                ordered[segment.sequence - 1] == nil
            else {
                return .unreadable("the JPEG's ICC_PROFILE segments are out of sequence")
            }
            ordered[segment.sequence - 1] = segment.range
            total += segment.range.count
        }
        guard total <= ColorManagement.maximumProfileSize else {
            return .unreadable("the JPEG's ICC profile of \(total) bytes is over the size limit")
        }
        var data = Data(capacity: total)
        for range in ordered {
            guard let range else {
                return .unreadable("the JPEG's ICC_PROFILE segments are incomplete")
            }
            data.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[range]))
        }
        return .icc(data)
    }
}
