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
            case "iref":
                guard let read = Self.references(in: body, of: bytes) else { return nil }
                references += read
            case "iprp": guard readProperties(body) else { return nil }
            case "iloc":
                guard let entries = Self.locationEntries(in: body, of: bytes, as: .specification) else { return nil }
                for entry in entries { locations[entry.item] = entry.location }
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
        let header = BigEndian.u32(bytes, at: box.lowerBound) == 1 ? 16 : 8
        return (box.lowerBound + header)..<box.upperBound
    }

    /// `ispe` of `item` as (width, height), or `nil`.
    func spatialExtent(of item: UInt32) -> (width: Int, height: Int)? {
        guard let body = propertyBody("ispe", of: item), body.count >= 12 else { return nil }
        let read = { Int(BigEndian.u32(bytes, at: $0)) }
        return (read(body.lowerBound + 4), read(body.lowerBound + 8))
    }

    /// Checks every size `bytes` (an AVIF or HEIF file) declares against `options`' pixel limit before a library
    /// reads it: each item's `ispe` (``ISOBMFFBoxes/largestSpatialExtent(in:)``), then each grid's and overlay's
    /// canvas as its bytes declare it, however the boxes are read (``DeclaredItems/largestDerivedCanvas()``), then
    /// what the `meta` names (``DeclaredItems/checkCounts(format:)``), each overlay's offsets
    /// (``DeclaredItems/checkOverlayOffsets(format:)``) and what overlays and `iden` items are made of
    /// (``DeclaredItems/checkDerivedImageReferences(format:)``), and, for HEIF, grids and `iden` items with alpha
    /// made of images with alpha (``DeclaredItems/checkNestedAlpha(format:)``). Returns every item info entry of
    /// every `iinf` (``DeclaredItems/entries``), empty without a `meta`.
    @discardableResult
    static func checkDeclaredSizes(
        in bytes: UnsafeRawBufferPointer, options: DecodingOptions, format: ImageFormat
    ) throws(CodecError) -> [(id: UInt32, type: String)] {
        if let extent = ISOBMFFBoxes.largestSpatialExtent(in: bytes) {
            try options.checkDimensions(width: extent.width, height: extent.height, format: format)
        }
        guard let declared = DeclaredItems(bytes) else { return [] }
        if let canvas = declared.largestDerivedCanvas() {
            try options.checkDimensions(width: canvas.width, height: canvas.height, format: format)
        }
        try declared.checkCounts(format: format)
        try declared.checkOverlayOffsets(format: format)
        try declared.checkDerivedImageReferences(format: format)
        // (libheif's fault: libavif reads such a file without it)
        if format != .avif { try declared.checkNestedAlpha(format: format) }
        return declared.entries
    }

    /// The most items a file may name (libheif 1.15's own limit for `iloc`), and the most times its `iinf`, `iloc`,
    /// `ipma` and `iref` boxes may name them together.
    static let itemLimit = 20_000
    static let itemMentionLimit = 100_000

    /// An `iloc` entry as ``locationEntries(in:of:as:)`` reads it.
    typealias LocationEntry = (item: UInt32, location: Location, declaredExtents: Int)

    /// A file's `meta` box as the size and count checks read it, walked once: every entry of every `iinf`, each
    /// `iloc` in the dialects a library might read it in, every `idat`, and the items `iinf`, `iloc`, `ipma` and
    /// `iref` name, in the file's order. Not ``ISOBMFFItems``' one reading of the box: a file written to be read
    /// two ways must not hide a size from the checks.
    struct DeclaredItems {
        /// What the count check reads, in the file's order: an item named, or an `iloc` entry that declares more
        /// extents than it has bytes for.
        private enum Event {
            case named(UInt32)
            case emptyExtents(item: UInt32, declared: Int)
        }

        private let bytes: UnsafeRawBufferPointer
        /// Every item info entry of every `iinf`, duplicate IDs kept (libheif 1.15 takes an ID's first, libavif
        /// and ``ISOBMFFItems/init(_:)`` its last).
        private(set) var entries: [(id: UInt32, type: String)] = []
        /// Each `iloc` box's entries as the specification reads them (`nil`: unreadable so) and as libheif 1.15
        /// does (read for the first box, which is the one libheif reads, and for any box the specification cannot
        /// read).
        private var locationBoxes: [(specification: [LocationEntry]?, libheif: [LocationEntry]?)] = []
        /// The bodies of every `idat` box.
        private var itemDataBoxes: [Range<Int>] = []
        /// Every `dimg` reference of every `iref` (a derived image's inputs), in the file's order.
        private var derivedImageReferences: [Reference] = []
        /// Every item an `auxl` reference of any `iref` names: the images that have an auxiliary image (an alpha
        /// plane or a depth map) of their own.
        private var auxiliaryImageOwners: Set<UInt32> = []
        /// The count check's events, up to the one that makes ``itemMentionLimit`` exceeded (none after it
        /// matters).
        private var events: [Event] = []

        /// Walks the top-level `meta` of `bytes`; `nil` when there is none.
        init?(_ bytes: UnsafeRawBufferPointer) {
            self.bytes = bytes
            var top = ISOBMFFBoxes.BoxReader(bytes: bytes, start: 0, end: bytes.count)
            guard let meta = top.first("meta"), meta.count >= 4 else { return nil }
            var boxes = ISOBMFFBoxes.BoxReader(bytes: bytes, start: meta.lowerBound + 4, end: meta.upperBound)
            var mentions = 0
            func name(_ item: UInt32) {
                guard mentions <= ISOBMFFItems.itemMentionLimit else { return }
                mentions += 1
                events.append(.named(item))
            }
            while let (type, body) = boxes.next() {
                switch type {
                case "iinf":
                    let read = ISOBMFFBoxes.itemEntries(iinf: body, in: bytes)
                    entries += read
                    for entry in read { name(entry.id) }
                case "iloc":
                    let specification = ISOBMFFItems.locationEntries(in: body, of: bytes, as: .specification)
                    let libheif =
                        locationBoxes.isEmpty || specification == nil
                        ? ISOBMFFItems.locationEntries(in: body, of: bytes, as: .libheif115) : nil
                    locationBoxes.append((specification, libheif))
                    for entry in specification ?? libheif ?? [] {
                        name(entry.item)
                        // Fewer extents kept than declared: they were all the same empty one.
                        if entry.declaredExtents > entry.location.extents.count,
                            mentions <= ISOBMFFItems.itemMentionLimit
                        {
                            events.append(.emptyExtents(item: entry.item, declared: entry.declaredExtents))
                        }
                    }
                case "idat": itemDataBoxes.append(body)
                case "iprp":
                    var properties = ISOBMFFBoxes.BoxReader(
                        bytes: bytes, start: body.lowerBound, end: body.upperBound)
                    while let (type, body) = properties.next() {
                        guard type == "ipma" else { continue }
                        for entry in ISOBMFFItems.associations(in: body, of: bytes) ?? [] { name(entry.item) }
                    }
                case "iref":
                    let read = ISOBMFFItems.references(in: body, of: bytes) ?? []
                    for reference in read {
                        name(reference.from)
                        for item in reference.to { name(item) }
                    }
                    // What derived images are made of, and which images have alpha: as the specification reads
                    // the box and as libheif does, which a reference of the wrong size does not stop.
                    for reference in read + ISOBMFFItems.referencesAsLibheif(in: body, of: bytes) {
                        if reference.type == "dimg" { derivedImageReferences.append(reference) }
                        if reference.type == "auxl" { auxiliaryImageOwners.formUnion(reference.to) }
                    }
                default: continue
                }
            }
        }

        /// Refuses a `meta` box that would cost a library more than its file's size suggests: libavif 0.11 finds
        /// each item by a linear search, once for every time a box names it, and creates the items it does not
        /// find with about a kilobyte each (a 7.6 MB file naming a million items held a decode for minutes), and
        /// it keeps every extent an item declares, however few bytes they take (with offset and length fields of
        /// size 0, a 120 KB file declared 1.3 billion extents: 21 GB). So: at most ``itemLimit`` items, named at
        /// most ``itemMentionLimit`` times, and no item of more than one extent of no bytes.
        func checkCounts(format: ImageFormat) throws(CodecError) {
            var items = Set<UInt32>()
            var mentions = 0
            for event in events {
                switch event {
                case .named(let item):
                    items.insert(item)
                    mentions += 1
                    guard items.count <= ISOBMFFItems.itemLimit, mentions <= ISOBMFFItems.itemMentionLimit else {
                        throw CodecError.corrupt(
                            format: format,
                            reason:
                                "the file names more than \(items.count > ISOBMFFItems.itemLimit ? ISOBMFFItems.itemLimit : ISOBMFFItems.itemMentionLimit) "
                                + (items.count > ISOBMFFItems.itemLimit ? "items" : "item references"))
                    }
                case .emptyExtents(let item, let declared):
                    throw CodecError.corrupt(
                        format: format, reason: "item \(item) declares \(declared) extents of no bytes")
                }
            }
        }

        /// The largest canvas a derived image declares in its own bytes, as (width, height) with the most pixels:
        /// a `grid`'s output size or an `iovl`'s canvas size (ISO/IEC 23008-12 §6.6.2.3, §6.6.2.2), whatever its
        /// `ispe` says. libheif 1.15 allocates a derived image at that size, checking each side against its
        /// maximum but not the area against anything, nor the size against the `ispe` (a fuzzed 22 KB HEIC with a
        /// 64 × 64 `ispe` made it allocate 3.4 GB). `nil` when no derived item's bytes are readable or declare a
        /// size with no pixels.
        ///
        /// Read the way any library might read the box: an item is derived if any `infe` says so; every `iloc`
        /// counts, and in each its first and its last entry for the item (libheif keeps an ID's first, the
        /// specification's reader its last), read as the specification says and, for the first `iloc` (the one
        /// libheif reads), as libheif 1.15 does (``LocationDialect``); an item in `idat` is read from the first
        /// `idat` (libheif's) and the last (``ISOBMFFItems/init(_:)``'s); extents may overlap or repeat, as libheif
        /// reads them. Only the first 20 bytes of each item are copied.
        func largestDerivedCanvas() -> (width: Int, height: Int)? {
            var largest: (width: Int, height: Int)?
            var largestPixels = -1
            forEachDerivedPayload(of: ["grid", "iovl"], limit: { _ in 20 }) { _, payload, type in
                guard let canvas = ISOBMFFItems.canvas(declaredBy: payload, type: type) else { return }
                // Each side is below 2³², the product not always below 2⁶³: an overflow counts as the most pixels.
                let (product, overflow) = canvas.width.multipliedReportingOverflow(by: canvas.height)
                let pixels = overflow ? Int.max : product
                if pixels > 0, pixels > largestPixels { (largest, largestPixels) = (canvas, pixels) }
            }
            return largest
        }

        /// Refuses an overlay (`iovl`) that places an image at a negative offset, read every way
        /// ``largestDerivedCanvas()`` reads the items. ISO/IEC 23008-12 allows one (the image is clipped), but
        /// Debian's libheif 1.15.1 (1.15.1-1+deb12u3) then copies rows or columns from past the end of the image's
        /// planes, into the output's pixels: heap bytes in the picture (found by the `isobmff` fuzz target under
        /// AddressSanitizer; a 64 × 64 image read at −1 rows, at −17 columns, on a 128 × 128 canvas at −1 column).
        /// No encoder in the corpus writes a negative offset.
        func checkOverlayOffsets(format: ImageFormat) throws(CodecError) {
            var refused: (item: UInt32, axis: String, offset: Int)?
            var imageCounts: [UInt32: Int] = [:]  // the most images one `dimg` reference of an item names
            for reference in derivedImageReferences {
                imageCounts[reference.from] = max(imageCounts[reference.from] ?? 0, reference.to.count)
            }
            // (libheif reads one offset pair, of at most 8 bytes, for each image the overlay's `dimg` names)
            forEachDerivedPayload(of: ["iovl"], limit: { 18 + 8 * (imageCounts[$0] ?? 0) }) { item, payload, _ in
                guard refused == nil else { return }
                for offset in ISOBMFFItems.overlayOffsets(declaredBy: payload) {
                    if offset.x < 0 { refused = (item, "horizontal", offset.x) }
                    if refused == nil, offset.y < 0 { refused = (item, "vertical", offset.y) }
                    if refused != nil { return }
                }
            }
            if let refused {
                throw CodecError.corrupt(
                    format: format,
                    reason:
                        "overlay \(refused.item) places an image at a negative \(refused.axis) offset (\(refused.offset)), which libheif 1.15 reads out of bounds"
                )
            }
        }

        /// Refuses an overlay (`iovl`) or identity transformation (`iden`) whose `dimg` reference names an item
        /// libheif 1.15 does not take as an image (its types are `hvc1`, `av01`, `vvc1`, `grid`, `iovl` and
        /// `iden`), or no item: libheif decodes an overlay's and an `iden`'s inputs without looking them up first,
        /// and Debian's build keeps its assertions, so such a file aborted the process (`Assertion 'imginfo'
        /// failed` in `HeifContext::decode_image_planar_tracked`, found by the `isobmff` fuzz target: an overlay
        /// naming an `hvt1` tile). A grid's tiles are looked up by libheif itself. An item typed by several `infe`
        /// entries must be an image by each (libheif keeps the first, ``ISOBMFFItems`` the last).
        func checkDerivedImageReferences(format: ImageFormat) throws(CodecError) {
            var types: [UInt32: Set<String>] = [:]
            for entry in entries { types[entry.id, default: []].insert(entry.type) }
            for reference in derivedImageReferences {
                guard let derived = types[reference.from]?.intersection(["iovl", "iden"]).sorted().first else {
                    continue
                }
                for item in reference.to {
                    let itemTypes = types[item] ?? []
                    guard itemTypes.isEmpty || !itemTypes.isSubset(of: ISOBMFFItems.libheifImageTypes) else { continue }
                    let kind = derived == "iovl" ? "overlay" : "identity transformation"
                    let named =
                        itemTypes.isEmpty
                        ? "item \(item), which the file does not describe"
                        : "item \(item) (\(itemTypes.sorted().joined(separator: ", "))), which is not an image"
                    throw CodecError.corrupt(format: format, reason: "\(kind) \(reference.from) names \(named)")
                }
            }
        }

        /// Refuses a grid or an identity transformation (`iden`) that has an alpha image of its own while an image
        /// it is made of has one too (or is, in turn, made of such an image). libheif 1.15 gives the derived image
        /// the alpha plane of what it is made of (a grid adds one as soon as a tile has alpha; an `iden` is its
        /// input's picture), then moves its own alpha plane in with a `std::map::insert` that does nothing when the
        /// channel is there ("TODO: check that dst_channel does not exist yet"): that plane's memory is never
        /// freed, a plane of the derived image's size every time it is decoded (found by the `isobmff` fuzz target
        /// under LeakSanitizer: RELIABILITY.md §48).
        /// Read conservatively: any `auxl` reference counts as an alpha image (a depth map's too, though libheif
        /// attaches none), and an item is a grid or an `iden` if any `infe` says so. Overlays are not refused:
        /// libheif draws on an overlay's canvas without giving it the inputs' alpha.
        func checkNestedAlpha(format: ImageFormat) throws(CodecError) {
            guard !auxiliaryImageOwners.isEmpty else { return }
            var derivedTypes: [UInt32: String] = [:]
            for entry in entries where entry.type == "grid" || entry.type == "iden" {
                derivedTypes[entry.id] = derivedTypes[entry.id] ?? entry.type
            }
            guard !derivedTypes.isEmpty else { return }
            // The images whose decoded picture carries an alpha plane: those with their own, then, following the
            // `dimg` references from inputs to their users (each item once), the grids and `iden`s made of them.
            var users: [UInt32: [UInt32]] = [:]
            for reference in derivedImageReferences where derivedTypes[reference.from] != nil {
                for input in reference.to { users[input, default: []].append(reference.from) }
            }
            var withAlpha = auxiliaryImageOwners
            var queue = Array(auxiliaryImageOwners)
            var refused: (item: UInt32, input: UInt32)?
            while let input = queue.popLast() {
                for user in users[input] ?? [] {
                    if auxiliaryImageOwners.contains(user) {
                        refused = refused ?? (user, input)
                    }
                    if withAlpha.insert(user).inserted { queue.append(user) }
                }
            }
            guard let refused else { return }
            let kind = derivedTypes[refused.item] == "grid" ? "grid" : "identity transformation"
            throw CodecError.corrupt(
                format: format,
                reason:
                    "\(kind) \(refused.item) has an alpha image of its own and is made of image \(refused.input), whose picture has alpha too: libheif 1.15 would lose one of the two planes' memory"
            )
        }

        /// Calls `body` with each item that any `infe` gives one of `types` (derived types: `grid`, `iovl`), its
        /// first `limit(item)` bytes and each of those types, as a library might read the item: the first and the
        /// last entry for it of each `iloc` (a library keeps one or the other), read in the specification's dialect
        /// and, for the first `iloc`, in libheif 1.15's too; an item in `idat` from the first and the last `idat`.
        /// At most 12 readings an item, so that the bytes copied stay within a small multiple of what the limits
        /// allow.
        private func forEachDerivedPayload(
            of types: Set<String>, limit: (UInt32) -> Int,
            _ body: (_ item: UInt32, _ payload: [UInt8], _ type: String) -> Void
        ) {
            var derivedTypes: [UInt32: Set<String>] = [:]
            for entry in entries where types.contains(entry.type) {
                derivedTypes[entry.id, default: []].insert(entry.type)
            }
            guard !derivedTypes.isEmpty else { return }
            let itemData = [itemDataBoxes.first, itemDataBoxes.last].compactMap { $0 }
            for (index, box) in locationBoxes.enumerated() {
                let readings = index == 0 ? [box.specification, box.libheif] : [box.specification]
                for reading in readings.compactMap({ $0 }) {
                    var firstAndLast: [UInt32: (first: Int, last: Int)] = [:]
                    for (position, entry) in reading.enumerated() where derivedTypes[entry.item] != nil {
                        firstAndLast[entry.item] = (firstAndLast[entry.item]?.first ?? position, position)
                    }
                    for (item, positions) in firstAndLast {
                        guard let types = derivedTypes[item] else { continue }
                        for position in Set([positions.first, positions.last]) {
                            let location = reading[position].location
                            for container in location.isInItemData ? itemData : [0..<bytes.count] {
                                guard
                                    let payload = ISOBMFFItems.prefix(
                                        of: location, in: container, limit: limit(item), of: bytes)
                                else { continue }
                                for type in types { body(item, payload, type) }
                            }
                        }
                    }
                }
            }
        }
    }

    /// The item types libheif 1.15 takes as images (`item_type_is_image`).
    static let libheifImageTypes: Set<String> = ["hvc1", "grid", "iden", "iovl", "av01", "vvc1"]

    /// The canvas that the first bytes of a derived item of `type` declare, or `nil` when too few are given.
    private static func canvas(declaredBy payload: [UInt8], type: String) -> (width: Int, height: Int)? {
        guard payload.count >= 2 else { return nil }
        let fieldSize = descriptorFieldSize(payload)
        // grid: version, flags, rows − 1, columns − 1, then the size; iovl: version, flags, four 16-bit fill
        // values, then the size.
        let at = type == "grid" ? 4 : 10
        guard payload.count >= at + 2 * fieldSize else { return nil }
        return (
            descriptorField(payload, at: at, size: fieldSize),
            descriptorField(payload, at: at + fieldSize, size: fieldSize)
        )
    }

    /// The offsets, as signed (x, y), that the first bytes of an overlay (`iovl`) declare after its canvas size,
    /// as many whole pairs as `payload` holds.
    private static func overlayOffsets(declaredBy payload: [UInt8]) -> [(x: Int, y: Int)] {
        guard payload.count >= 2 else { return [] }
        let fieldSize = descriptorFieldSize(payload)
        let sign = 1 << (8 * fieldSize - 1)
        let signed = { (start: Int) in
            let value = descriptorField(payload, at: start, size: fieldSize)
            return value & sign != 0 ? value - 2 * sign : value
        }
        return stride(from: 10 + 2 * fieldSize, through: payload.count - 2 * fieldSize, by: 2 * fieldSize).map {
            (signed($0), signed($0 + fieldSize))
        }
    }

    /// The size of a derived item's size and offset fields: 4 bytes when bit 0 of its flags (its second byte) is
    /// set, else 2 (ISO/IEC 23008-12 §6.6.2.2–3).
    private static func descriptorFieldSize(_ payload: [UInt8]) -> Int { payload[1] & 1 == 1 ? 4 : 2 }

    /// The unsigned big-endian field of `size` bytes at `start` of `payload`.
    private static func descriptorField(_ payload: [UInt8], at start: Int, size: Int) -> Int {
        payload[start..<(start + size)].reduce(0) { $0 << 8 | Int($1) }
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
        return Self.prefix(of: location, in: container(of: location), limit: limit, of: bytes)
    }

    /// The first `limit` bytes of the item at `location`, its extents read in order as offsets into `container`
    /// (overlapping or repeated extents read again, as libheif does), or `nil` when an extent lies outside the
    /// container. Only what is returned is copied.
    private static func prefix(
        of location: Location, in container: Range<Int>, limit: Int, of bytes: UnsafeRawBufferPointer
    ) -> [UInt8]? {
        var result: [UInt8] = []
        for extent in location.extents {
            guard extent.lowerBound <= container.count, extent.count <= container.count - extent.lowerBound else {
                return nil
            }
            guard result.count < limit else { continue }
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

    /// The references of the `iref` box whose body is `body` (versions 0 and 1), in the file's order; `nil` when
    /// the box is not readable.
    static func references(in body: Range<Int>, of bytes: UnsafeRawBufferPointer) -> [Reference]? {
        var field = FieldReader(bytes: bytes, range: body)
        guard let version = field.fullBoxVersion(), version <= 1 else { return nil }
        let idSize = version == 0 ? 2 : 4
        var boxes = ISOBMFFBoxes.BoxReader(bytes: bytes, start: field.position, end: field.end)
        var references: [Reference] = []
        while let (type, body) = boxes.next() {
            var entry = FieldReader(bytes: bytes, range: body)
            guard let from = entry.unsigned(idSize), let count = entry.unsigned(2),
                count * idSize <= entry.remaining
            else { return nil }
            let to = (0..<count).compactMap { _ in entry.unsigned(idSize).map(UInt32.init(truncatingIfNeeded:)) }
            references.append(Reference(type: type, from: UInt32(truncatingIfNeeded: from), to: to))
        }
        return references
    }

    /// The references of the `iref` box whose body is `body` as libheif 1.15 reads them (`Box_iref::parse`): each
    /// reference's header gives its type, but not its length: the IDs follow one after another to the end of the
    /// `iref`, whatever each reference's size says (a size of 1 or a `uuid` type still takes its extra header
    /// bytes). Version 0 reads 16-bit IDs, any other 32-bit; an ID or count past the end reads as 0, as libheif's
    /// reader returns it. A reference box whose size is wrong therefore hides nothing from libheif, while
    /// ``references(in:of:)`` finds the box unreadable. At most one reference per 8 bytes of the body.
    static func referencesAsLibheif(in body: Range<Int>, of bytes: UnsafeRawBufferPointer) -> [Reference] {
        var field = FieldReader(bytes: bytes, range: body)
        guard let version = field.fullBoxVersion() else { return [] }
        let idSize = version == 0 ? 2 : 4
        var references: [Reference] = []
        while field.remaining >= 8 {
            let size = field.unsigned(4)
            let typeStart = field.position
            _ = field.raw(4)
            let type = String(decoding: bytes[typeStart..<(typeStart + 4)], as: UTF8.self)
            if size == 1, field.raw(8) == nil { break }
            if type == "uuid", field.raw(16) == nil { break }
            let from = field.unsigned(idSize) ?? 0
            let count = field.unsigned(2) ?? 0
            var to: [UInt32] = []
            for _ in 0..<count {
                to.append(UInt32(truncatingIfNeeded: field.unsigned(idSize) ?? 0))
                if field.remaining == 0 { break }
            }
            references.append(Reference(type: type, from: UInt32(truncatingIfNeeded: from), to: to))
        }
        return references
    }

    /// The associations of the `ipma` box whose body is `body` (versions 0 and 1): each entry's item and its
    /// 1-based property indices, in the file's order; `nil` when the box is not readable.
    static func associations(in body: Range<Int>, of bytes: UnsafeRawBufferPointer) -> [(item: UInt32, indices: [Int])]?
    {
        var field = FieldReader(bytes: bytes, range: body)
        guard let version = field.fullBoxVersion(), version <= 1, let count = field.unsigned(4) else { return nil }
        let isWide = bytes[body.lowerBound + 3] & 1 != 0
        var entries: [(item: UInt32, indices: [Int])] = []
        for _ in 0..<min(count, field.remaining) {
            guard let item = field.unsigned(version == 0 ? 2 : 4), let n = field.unsigned(1) else { return nil }
            var indices: [Int] = []
            for _ in 0..<n {
                guard let value = field.unsigned(isWide ? 2 : 1) else { return nil }
                indices.append(value & (isWide ? 0x7FFF : 0x7F))
            }
            entries.append((UInt32(truncatingIfNeeded: item), indices))
        }
        return entries
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
                guard let entries = Self.associations(in: body, of: bytes) else { return false }
                for entry in entries { associations[entry.item, default: []] += entry.indices }
            }
        }
        return true
    }

    /// How an `iloc` box is read.
    enum LocationDialect {
        /// As ISO/IEC 14496-12 §8.11.3 has it (versions 0–2; field sizes 0, 4 or 8; an index per extent from
        /// version 1 on); any other field makes the box unreadable.
        case specification
        /// As libheif 1.15 reads it (`Box_iloc::parse`): any version (from 2 on, 32-bit IDs and counts), an index
        /// per extent only from version 2 on, a field of any size other than 4 or 8 read as 0 from no bytes; a box
        /// of more than 20,000 items or an item of more than 32 extents fails the file there. Entries read before a
        /// truncation are kept.
        case libheif115
    }

    /// The entries of the `iloc` box whose body is `body` read as `dialect` says (each with the number of extents
    /// it declares), in the file's order with duplicate IDs kept, construction methods 0 and 1 only (2, items made from other items, is not read), and
    /// only entries whose every extent lies within the file; `nil` when the box is not readable in that dialect.
    /// Extents with no bytes of their own (offset and length fields of size 0) are kept once, however many are
    /// declared.
    static func locationEntries(
        in body: Range<Int>, of bytes: UnsafeRawBufferPointer, as dialect: LocationDialect
    ) -> [LocationEntry]? {
        let libheif = dialect == .libheif115
        var field = FieldReader(bytes: bytes, range: body)
        guard let version = field.fullBoxVersion(), libheif || version <= 2, let sizes = field.unsigned(2) else {
            return libheif ? [] : nil
        }
        let offsetSize = sizes >> 12
        let lengthSize = (sizes >> 8) & 0xF
        let baseSize = (sizes >> 4) & 0xF
        let indexSize = version >= (libheif ? 2 : 1) ? sizes & 0xF : 0
        guard libheif || [offsetSize, lengthSize, baseSize, indexSize].allSatisfy({ [0, 4, 8].contains($0) }) else {
            return nil
        }
        // A field of 4 or 8 bytes is read; one of size 0 (or, for libheif, any other size) is 0, from no bytes.
        let read = { (reader: inout FieldReader, size: Int) -> UInt64? in size == 4 || size == 8 ? reader.raw(size) : 0
        }
        let extentBytes = [indexSize, offsetSize, lengthSize].filter { $0 == 4 || $0 == 8 }.reduce(0, +)
        guard let count = field.unsigned(version < 2 ? 2 : 4) else { return libheif ? [] : nil }
        if libheif, count > 20_000 { return [] }
        var entries: [LocationEntry] = []
        for _ in 0..<min(count, field.remaining) {
            guard let item = field.unsigned(version < 2 ? 2 : 4) else { return libheif ? entries : nil }
            var method = 0
            if version >= 1 {
                guard let value = field.unsigned(2) else { return libheif ? entries : nil }
                method = value & 0xF
            }
            guard field.unsigned(2) != nil, let base = read(&field, baseSize), let extentCount = field.unsigned(2)
            else { return libheif ? entries : nil }
            if libheif, extentCount > 32 { return entries }
            // Extents of no bytes are all the same empty one: read once, however many are declared.
            let extentsToRead = extentBytes == 0 ? min(extentCount, 1) : min(extentCount, field.remaining)
            var extents: [Range<Int>] = []
            var isWithinFile = true
            for _ in 0..<extentsToRead {
                guard read(&field, indexSize) != nil, let offset = read(&field, offsetSize),
                    let length = read(&field, lengthSize)
                else { return libheif ? entries : nil }
                let (start, overflow) = base.addingReportingOverflow(offset)
                guard !overflow, start <= UInt64(bytes.count), length <= UInt64(bytes.count) - start else {
                    guard libheif else { return nil }
                    isWithinFile = false
                    continue
                }
                extents.append(Int(start)..<Int(start + length))
            }
            guard method <= 1, isWithinFile else { continue }
            let location = Location(isInItemData: method == 1, extents: extents)
            entries.append((UInt32(truncatingIfNeeded: item), location, extentCount))
        }
        return entries
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
            return Int(BigEndian.read(bytes, at: position, size: size, as: UInt64.self))
        }

        /// The next `size` bytes (0, 1, 2, 4 or 8) as an unsigned 64-bit integer, or `nil` past the body's end.
        mutating func raw(_ size: Int) -> UInt64? {
            guard size <= remaining else { return nil }
            defer { position += size }
            return BigEndian.read(bytes, at: position, size: size, as: UInt64.self)
        }

        /// A full box's version; its flags are skipped.
        mutating func fullBoxVersion() -> Int? {
            guard let word = unsigned(4) else { return nil }
            return word >> 24
        }
    }
}
