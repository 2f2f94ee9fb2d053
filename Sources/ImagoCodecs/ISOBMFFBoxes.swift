import Foundation
import ImagoCore

/// What libavif 0.11 and libheif 1.15 do not tell (or tell only as a parse failure or a huge allocation), read
/// from the ISO-BMFF boxes of an AVIF or HEIF file directly.
enum ISOBMFFBoxes {
    /// The largest `ispe` (image spatial extents) of any item in `meta/iprp/ipco`, as (width, height) with the
    /// largest pixel count, or `nil` when there is none. libavif 0.11 rejects a huge `ispe` with "BMFF parsing
    /// failed"; libheif 1.15 checks only the primary image's size and allocates an auxiliary (alpha) image at the
    /// size its `ispe` declares (1.2 GB for a fuzzed 384×256 file). Checking every item first gives
    /// ``CodecError/tooManyPixels(width:height:limit:)`` before either library allocates.
    static func largestSpatialExtent(in data: UnsafeRawBufferPointer) -> (width: Int, height: Int)? {
        var reader = BoxReader(bytes: data, start: 0, end: data.count)
        guard let meta = reader.first("meta"), meta.count >= 4 else { return nil }
        var inMeta = BoxReader(bytes: data, start: meta.lowerBound + 4, end: meta.upperBound)  // full box
        guard let iprp = inMeta.first("iprp") else { return nil }
        var inIprp = BoxReader(bytes: data, start: iprp.lowerBound, end: iprp.upperBound)
        guard let ipco = inIprp.first("ipco") else { return nil }
        var properties = BoxReader(bytes: data, start: ipco.lowerBound, end: ipco.upperBound)
        var largest: (width: Int, height: Int)?
        var largestPixels = -1
        while let (type, body) = properties.next() {
            guard type == "ispe", body.count >= 12 else { continue }
            let width = Int(BigEndian.u32(data, at: body.lowerBound + 4))
            let height = Int(BigEndian.u32(data, at: body.lowerBound + 8))
            let (product, overflow) = width.multipliedReportingOverflow(by: height)
            let pixels = overflow ? Int.max : product
            if pixels > largestPixels { (largest, largestPixels) = ((width, height), pixels) }
        }
        return largest
    }

    /// The item types by item ID of the `iinf` box whose body is `iinf`; of two entries for one ID, the last.
    static func itemTypes(iinf: Range<Int>, in data: UnsafeRawBufferPointer) -> [UInt32: String] {
        var types: [UInt32: String] = [:]
        for entry in itemEntries(iinf: iinf, in: data) where types.count < 65_536 || types[entry.id] != nil {
            types[entry.id] = entry.type
        }
        return types
    }

    /// Every item info entry (version 2 and 3: an item ID and its type, `hvc1`, `av01`, `grid`, `iovl`, `Exif` …)
    /// of the `iinf` box whose body is `iinf`, in the file's order, duplicate IDs kept: libheif 1.15 takes an ID's
    /// first entry, libavif its last.
    static func itemEntries(iinf: Range<Int>, in data: UnsafeRawBufferPointer) -> [(id: UInt32, type: String)] {
        guard iinf.count >= 6 else { return [] }
        let countSize = data[iinf.lowerBound] == 0 ? 2 : 4
        var boxes = BoxReader(bytes: data, start: iinf.lowerBound + 4 + countSize, end: iinf.upperBound)
        var entries: [(id: UInt32, type: String)] = []
        while let (type, body) = boxes.next() {
            guard type == "infe", body.count >= 4 else { continue }
            let version = data[body.lowerBound]
            guard version >= 2 else { continue }
            let idSize = version == 2 ? 2 : 4
            let typeAt = body.lowerBound + 4 + idSize + 2
            guard typeAt + 4 <= body.upperBound else { continue }
            let id =
                idSize == 2
                ? UInt32(data[body.lowerBound + 4]) << 8 | UInt32(data[body.lowerBound + 5])
                : BigEndian.u32(data, at: body.lowerBound + 4)
            entries.append((id, String(decoding: data[typeAt..<(typeAt + 4)], as: UTF8.self)))
        }
        return entries
    }

    /// The loop count of an image sequence, from the colour track's edit list (`moov/trak/edts/elst`), which
    /// libavif 0.11 does not expose (its `repetitionCount` arrived in libavif 1.0): plays of the animation in the
    /// APNG/GIF convention (0 = forever), or `nil` when the file has no edit list.
    ///
    /// Follows libavif 1.x: an edit list without the repeat flag plays once; with it, a track of unknown duration
    /// (all ones) loops forever, otherwise it plays ⌈track duration ÷ segment duration⌉ times.
    static func playCount(in data: UnsafeRawBufferPointer) -> Int? {
        var reader = BoxReader(bytes: data, start: 0, end: data.count)
        guard let moov = reader.first("moov") else { return nil }
        var inMoov = BoxReader(bytes: data, start: moov.lowerBound, end: moov.upperBound)
        guard let trak = inMoov.first("trak") else { return nil }
        var inTrak = BoxReader(bytes: data, start: trak.lowerBound, end: trak.upperBound)
        var trackDuration: UInt64?
        var edits: Range<Int>?
        while let (type, body) = inTrak.next() {
            if type == "tkhd" { trackDuration = trackHeaderDuration(data, body) }
            if type == "edts" {
                var inEdts = BoxReader(bytes: data, start: body.lowerBound, end: body.upperBound)
                edits = inEdts.first("elst")
            }
        }
        guard let edits, edits.count >= 8 else { return nil }
        let version = data[edits.lowerBound]
        let isRepeating = data[edits.lowerBound + 3] & 1 != 0
        guard isRepeating else { return 1 }
        guard let trackDuration else { return 0 }
        let allOnes: UInt64 = version == 1 ? .max : UInt64(UInt32.max)
        if trackDuration == allOnes { return 0 }
        let entryCount = BigEndian.u32(data, at: edits.lowerBound + 4)
        let entrySize = version == 1 ? 20 : 12
        guard entryCount >= 1, edits.count >= 8 + entrySize else { return nil }
        let segment =
            version == 1
            ? BigEndian.read(data, at: edits.lowerBound + 8, as: UInt64.self)
            : UInt64(BigEndian.u32(data, at: edits.lowerBound + 8))
        guard segment > 0 else { return nil }
        let plays = trackDuration / segment + (trackDuration % segment == 0 ? 0 : 1)
        return Int(clamping: max(1, plays))
    }

    private static func trackHeaderDuration(_ data: UnsafeRawBufferPointer, _ body: Range<Int>) -> UInt64? {
        guard body.count >= 1 else { return nil }
        if data[body.lowerBound] == 1 {
            guard body.count >= 4 + 8 + 8 + 4 + 4 + 8 else { return nil }
            return BigEndian.read(data, at: body.lowerBound + 28, as: UInt64.self)
        }
        guard body.count >= 4 + 4 + 4 + 4 + 4 + 4 else { return nil }
        return UInt64(BigEndian.u32(data, at: body.lowerBound + 20))
    }

    /// Walks the boxes between `start` and `end`; stops at the first box whose size does not fit.
    struct BoxReader {
        let bytes: UnsafeRawBufferPointer
        var position: Int
        let end: Int

        init(bytes: UnsafeRawBufferPointer, start: Int, end: Int) {
            self.bytes = bytes
            self.position = start
            self.end = min(end, bytes.count)
        }

        /// The next box's four-character type and the range of its body.
        mutating func next() -> (String, Range<Int>)? {
            guard position + 8 <= end else { return nil }
            var size = Int(BigEndian.u32(bytes, at: position))
            var header = 8
            if size == 1 {
                guard position + 16 <= end else { return nil }
                let large = BigEndian.read(bytes, at: position + 8, as: UInt64.self)
                guard large <= UInt64(end - position) else { return nil }
                size = Int(large)
                header = 16
            } else if size == 0 {
                size = end - position
            }
            guard size >= header, size <= end - position else { return nil }
            let type = String(decoding: bytes[(position + 4)..<(position + 8)], as: UTF8.self)
            let body = (position + header)..<(position + size)
            position += size
            return (type, body)
        }

        /// The body of the first box of `type` from here on.
        mutating func first(_ type: String) -> Range<Int>? {
            while let (found, body) = next() {
                if found == type { return body }
            }
            return nil
        }
    }
}
