import Foundation
import ImagoCore

/// The items of an AVIF or HEIF file's `meta` box, read directly: the primary item, each item's type, references,
/// properties and byte extents. For what libavif 0.11 does not assemble itself (see `AVIFTileAlpha`).
///
/// Every field is checked against the file as it is read: an offset or length outside the file, a count larger
/// than the box holds or an unknown version makes the reader stop (``init(_:)`` returns `nil`, or the item is
/// left out), never reads past the buffer, and allocates nothing larger than the file.
struct ISOBMFFItems {
    /// A reference of `type` (`dimg`, `auxl`, `prem` …) from one item to others, in the file's order.
    struct Reference: Equatable {
        let type: String
        let from: UInt32
        let to: [UInt32]
    }

    /// Where an item's bytes are: extents in the file (construction method 0) or in `idat` (method 1).
    struct Location: Equatable {
        let isInItemData: Bool
        let extents: [Range<Int>]
    }

    /// The `pitm` item, or `nil` when the file names none.
    private(set) var primaryID: UInt32?
    /// `iinf`'s item types by item ID.
    private(set) var types: [UInt32: String] = [:]
    /// `iref`'s references.
    private(set) var references: [Reference] = []
    /// The whole boxes (header included) of `ipco`'s properties; associations index them from 1.
    private(set) var properties: [Range<Int>] = []
    /// `ipma`'s associations: the 1-based property indices of each item.
    private(set) var associations: [UInt32: [Int]] = [:]
    /// `iloc`'s locations by item ID.
    private(set) var locations: [UInt32: Location] = [:]
    /// The body of `idat`, when there is one.
    private(set) var itemData: Range<Int>?

    private let bytes: UnsafeRawBufferPointer

    /// The size of the file the items were read from.
    var fileLength: Int { bytes.count }

    /// Reads the top-level `meta` box of `bytes`; `nil` when there is none or it is not readable.
    init?(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
        var top = ISOBMFFBoxes.BoxReader(bytes: bytes, start: 0, end: bytes.count)
        guard let meta = top.first("meta"), meta.count >= 4 else { return nil }
        var boxes = ISOBMFFBoxes.BoxReader(bytes: bytes, start: meta.lowerBound + 4, end: meta.upperBound)
        while let (type, body) = boxes.next() {
            var field = FieldReader(bytes: bytes, range: body)
            switch type {
            case "pitm":
                guard let version = field.fullBoxVersion() else { return nil }
                primaryID = field.unsigned(version == 0 ? 2 : 4).map(UInt32.init(truncatingIfNeeded:))
            case "iinf": types = ISOBMFFBoxes.itemTypes(iinf: body, in: bytes)
            case "iref": guard readReferences(&field) else { return nil }
            case "iprp": guard readProperties(body) else { return nil }
            case "iloc": guard readLocations(&field) else { return nil }
            case "idat": itemData = body
            default: continue
            }
        }
    }

    /// The items that `from` references with `type`, in order (empty when none).
    func referenced(_ type: String, from: UInt32) -> [UInt32] {
        references.first { $0.type == type && $0.from == from }?.to ?? []
    }

    /// For each item referenced with `type`, the items that reference it (one pass over the references).
    func referrers(_ type: String) -> [UInt32: [UInt32]] {
        var result: [UInt32: [UInt32]] = [:]
        for reference in references where reference.type == type {
            for target in reference.to { result[target, default: []].append(reference.from) }
        }
        return result
    }

    /// The first property box of `type` associated with `item` (header included), or `nil`.
    func property(_ type: String, of item: UInt32) -> Range<Int>? {
        for index in associations[item] ?? [] where index >= 1 && index <= properties.count {
            let box = properties[index - 1]
            if String(decoding: bytes[(box.lowerBound + 4)..<(box.lowerBound + 8)], as: UTF8.self) == type {
                return box
            }
        }
        return nil
    }

    /// The bytes of `range` of the file (a box from ``property(_:of:)``, to copy).
    func bytes(of range: Range<Int>) -> [UInt8] { Array(bytes[range]) }

    /// The body of `property(type, of: item)`, after its header.
    func propertyBody(_ type: String, of item: UInt32) -> Range<Int>? {
        guard let box = property(type, of: item) else { return nil }
        let header = ISOBMFFBoxes.read(bytes, box.lowerBound, 4, as: UInt32.self) == 1 ? 16 : 8
        return (box.lowerBound + header)..<box.upperBound
    }

    /// `ispe` of `item` as (width, height), or `nil`.
    func spatialExtent(of item: UInt32) -> (width: Int, height: Int)? {
        guard let body = propertyBody("ispe", of: item), body.count >= 12 else { return nil }
        let read = { Int(ISOBMFFBoxes.read(bytes, $0, 4, as: UInt32.self)) }
        return (read(body.lowerBound + 4), read(body.lowerBound + 8))
    }

    /// Checks every size `bytes` (an AVIF or HEIF file) declares against `options`' pixel limit before a library
    /// reads it: each item's `ispe` (``ISOBMFFBoxes/largestSpatialExtent(in:)``), then each grid's and overlay's
    /// canvas as its bytes declare it (``largestDerivedCanvas()``). Returns the items it read, `nil` when the `meta`
    /// box is not readable as items.
    @discardableResult
    static func checkDeclaredSizes(
        in bytes: UnsafeRawBufferPointer, options: DecodingOptions, format: ImageFormat
    ) throws(CodecError) -> ISOBMFFItems? {
        if let extent = ISOBMFFBoxes.largestSpatialExtent(in: bytes) {
            try options.checkDimensions(width: extent.width, height: extent.height, format: format)
        }
        let items = ISOBMFFItems(bytes)
        if let canvas = items?.largestDerivedCanvas() {
            try options.checkDimensions(width: canvas.width, height: canvas.height, format: format)
        }
        return items
    }

    /// The largest canvas a derived image declares in its own bytes, as (width, height) with the most pixels: a
    /// `grid`'s output size or an `iovl`'s canvas size (ISO/IEC 23008-12 §6.6.2.3, §6.6.2.2), whatever its `ispe`
    /// says. libheif 1.15 allocates a derived image at that size, checking each side against its maximum but not
    /// the area against anything, nor the size against the `ispe` (a fuzzed 22 KB HEIC with a 64 × 64 `ispe`
    /// made it allocate 3.4 GB). `nil` when no such item's bytes are readable (libheif cannot read them either) or
    /// declare a size with no pixels.
    func largestDerivedCanvas() -> (width: Int, height: Int)? {
        var largest: (width: Int, height: Int)?
        var largestPixels = -1
        for (item, type) in types where type == "grid" || type == "iovl" {
            // The first 20 bytes hold the size; the rest (an overlay's offsets) is not copied, so a file of many
            // items all spanning the whole file costs a read of each item's start, not of the file each time.
            guard let payload = data(of: item, prefix: 20), payload.count >= 2 else { continue }
            let fieldSize = payload[1] & 1 == 1 ? 4 : 2
            // grid: version, flags, rows − 1, columns − 1, then the size; iovl: version, flags, four 16-bit fill
            // values, then the size.
            let at = type == "grid" ? 4 : 10
            guard payload.count >= at + 2 * fieldSize else { continue }
            let field = { (start: Int) in payload[start..<(start + fieldSize)].reduce(0) { $0 << 8 | Int($1) } }
            let (width, height) = (field(at), field(at + fieldSize))
            // Each side is below 2³², the product not always below 2⁶³: an overflow counts as the most pixels.
            let (product, overflow) = width.multipliedReportingOverflow(by: height)
            let pixels = overflow ? Int.max : product
            if pixels > 0, pixels > largestPixels { (largest, largestPixels) = ((width, height), pixels) }
        }
        return largest
    }

    /// `auxC`'s auxiliary type URN of `item`, or `nil`.
    func auxiliaryType(of item: UInt32) -> String? {
        guard let body = propertyBody("auxC", of: item), body.count > 4 else { return nil }
        let urn = bytes[(body.lowerBound + 4)..<body.upperBound].prefix { $0 != 0 }
        return String(decoding: urn, as: UTF8.self)
    }

    /// The bytes of `item` (its extents joined), at most `limit` of them (default all), or `nil` when
    /// ``length(of:)`` is `nil`. Only what is returned is copied.
    func data(of item: UInt32, prefix limit: Int = .max) -> [UInt8]? {
        guard length(of: item) != nil, let location = locations[item] else { return nil }
        let container = self.container(of: location)
        var result: [UInt8] = []
        for extent in location.extents where result.count < limit {
            let start = container.lowerBound + extent.lowerBound
            result.append(contentsOf: bytes[start..<(start + min(extent.count, limit - result.count))])
        }
        return result
    }

    /// The number of bytes of `item` (its extents added up), or `nil` when it has no location, uses a construction
    /// method other than 0 or 1, an extent lies outside the file or `idat`, or the extents add up to more than
    /// that. Nothing is copied.
    func length(of item: UInt32) -> Int? {
        guard let location = locations[item] else { return nil }
        let container = self.container(of: location)
        var total = 0
        for extent in location.extents {
            // Extents may overlap: the item as a whole is bounded by its container too.
            guard extent.lowerBound <= container.count, extent.count <= container.count - extent.lowerBound,
                extent.count <= container.count - total
            else { return nil }
            total += extent.count
        }
        return total
    }

    /// The bytes `location`'s extents are offsets into: the file, or `idat`'s body (empty without one).
    private func container(of location: Location) -> Range<Int> {
        location.isInItemData ? (itemData ?? 0..<0) : 0..<bytes.count
    }

    // MARK: - Boxes

    private mutating func readReferences(_ field: inout FieldReader) -> Bool {
        guard let version = field.fullBoxVersion(), version <= 1 else { return false }
        let idSize = version == 0 ? 2 : 4
        var boxes = ISOBMFFBoxes.BoxReader(bytes: bytes, start: field.position, end: field.end)
        while let (type, body) = boxes.next() {
            var entry = FieldReader(bytes: bytes, range: body)
            guard let from = entry.unsigned(idSize), let count = entry.unsigned(2),
                count * idSize <= entry.remaining
            else { return false }
            let to = (0..<count).compactMap { _ in entry.unsigned(idSize).map(UInt32.init(truncatingIfNeeded:)) }
            references.append(Reference(type: type, from: UInt32(truncatingIfNeeded: from), to: to))
        }
        return true
    }

    private mutating func readProperties(_ iprp: Range<Int>) -> Bool {
        var boxes = ISOBMFFBoxes.BoxReader(bytes: bytes, start: iprp.lowerBound, end: iprp.upperBound)
        while let (type, body) = boxes.next() {
            if type == "ipco" {
                var inner = ISOBMFFBoxes.BoxReader(bytes: bytes, start: body.lowerBound, end: body.upperBound)
                var start = inner.position
                while inner.next() != nil {
                    properties.append(start..<inner.position)
                    start = inner.position
                }
            } else if type == "ipma" {
                var field = FieldReader(bytes: bytes, range: body)
                guard let version = field.fullBoxVersion(), version <= 1, let count = field.unsigned(4) else {
                    return false
                }
                let isWide = bytes[body.lowerBound + 3] & 1 != 0
                for _ in 0..<min(count, field.remaining) {
                    guard let item = field.unsigned(version == 0 ? 2 : 4), let n = field.unsigned(1) else {
                        return false
                    }
                    var indices: [Int] = []
                    for _ in 0..<n {
                        guard let value = field.unsigned(isWide ? 2 : 1) else { return false }
                        indices.append(value & (isWide ? 0x7FFF : 0x7F))
                    }
                    associations[UInt32(truncatingIfNeeded: item), default: []] += indices
                }
            }
        }
        return true
    }

    private mutating func readLocations(_ field: inout FieldReader) -> Bool {
        guard let version = field.fullBoxVersion(), version <= 2, let sizes = field.unsigned(2) else { return false }
        let offsetSize = sizes >> 12
        let lengthSize = (sizes >> 8) & 0xF
        let baseSize = (sizes >> 4) & 0xF
        let indexSize = version >= 1 ? sizes & 0xF : 0
        guard [offsetSize, lengthSize, baseSize, indexSize].allSatisfy({ [0, 4, 8].contains($0) }),
            let count = field.unsigned(version < 2 ? 2 : 4)
        else { return false }
        for _ in 0..<min(count, field.remaining) {
            guard let item = field.unsigned(version < 2 ? 2 : 4) else { return false }
            var method = 0
            if version >= 1 {
                guard let value = field.unsigned(2) else { return false }
                method = value & 0xF
            }
            guard field.unsigned(2) != nil, let base = field.unsigned(baseSize),
                let extentCount = field.unsigned(2)
            else { return false }
            var extents: [Range<Int>] = []
            for _ in 0..<min(extentCount, field.remaining) {
                guard field.unsigned(indexSize) != nil, let offset = field.unsigned(offsetSize),
                    let length = field.unsigned(lengthSize)
                else { return false }
                let (start, overflow) = base.addingReportingOverflow(offset)
                guard !overflow, start <= bytes.count, length <= bytes.count - start else { return false }
                extents.append(start..<(start + length))
            }
            guard method <= 1 else { continue }  // 2 (items from other items) is not read
            locations[UInt32(truncatingIfNeeded: item)] = Location(isInItemData: method == 1, extents: extents)
        }
        return true
    }

    /// Reads the fields of one box body in order, each checked against the body's end.
    struct FieldReader {
        let bytes: UnsafeRawBufferPointer
        var position: Int
        let end: Int

        init(bytes: UnsafeRawBufferPointer, range: Range<Int>) {
            self.bytes = bytes
            self.position = range.lowerBound
            self.end = min(range.upperBound, bytes.count)
        }

        /// Bytes left in the body.
        var remaining: Int { max(0, end - position) }

        /// The next `size` bytes (0, 1, 2, 4 or 8; a value over `Int.max` reads as `nil`) as an integer.
        mutating func unsigned(_ size: Int) -> Int? {
            guard size <= remaining else { return nil }
            if size == 8, bytes[position] & 0x80 != 0 { return nil }
            defer { position += size }
            return Int(ISOBMFFBoxes.read(bytes, position, size, as: UInt64.self))
        }

        /// A full box's version; its flags are skipped.
        mutating func fullBoxVersion() -> Int? {
            guard let word = unsigned(4) else { return nil }
            return word >> 24
        }
    }
}
