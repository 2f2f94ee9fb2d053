import Foundation
import ImagoCodecs
import ImagoCore

/// An AVIF or HEIF file written from fuzz bytes: the input chooses boxes, entries, counts, sizes and dialects (which
/// item IDs repeat, which types they have, where their extents point, which properties they carry and how the
/// boxes are versioned and duplicated) around real coded images, so that mutations reach the item graph the
/// decoders check before libavif or libheif allocate, instead of breaking a box's length first. The hostile files
/// found by reading the libraries' parsers (an `infe` typed twice, two `idat`s, an `iloc` read in libheif's dialect,
/// 20,000 items of empty extents) are all files this writer can make. The last decisions may add an image sequence
/// (``ISOBMFFFuzzSequence``: `moov` tracks over the same coded images) beside the items or instead of them.
///
/// An input of zero bytes (or zeros) is a valid 64×64 AVIF of one item; every further byte is one decision.
struct ISOBMFFFuzzFile {
    /// The file's bytes.
    let data: Data
    /// Whether the file is branded AVIF (else HEIC).
    let isAVIF: Bool

    /// Reads decisions from the input one byte at a time; past its end every decision is 0.
    struct Decisions {
        let bytes: [UInt8]
        var index = 0

        mutating func byte() -> UInt8 {
            defer { index += 1 }
            return index < bytes.count ? bytes[index] : 0
        }
        mutating func below(_ bound: Int) -> Int { Int(byte()) % bound }
        mutating func flag() -> Bool { byte() & 1 == 1 }
        mutating func u16() -> UInt16 { UInt16(byte()) << 8 | UInt16(byte()) }
        mutating func u32() -> UInt32 { UInt32(u16()) << 16 | UInt32(u16()) }
    }

    /// Where an item's bytes are said to be.
    private enum Location {
        /// The coded image of the file's codec (or the other one) in `mdat`, in `parts` extents.
        case coded(avif: Bool, parts: Int)
        /// The item's own descriptor (a grid's or an overlay's) in `idat`.
        case descriptor
        /// An extent at an offset and of a length the input gives.
        case arbitrary(offset: UInt32, length: UInt32)
        /// `count` extents of no bytes (the specification's "to the end of the file" for one).
        case empty(count: Int)
        /// No `iloc` entry at all.
        case none
    }

    /// One item as written into `iinf`, `iloc`, `ipma` and `iref`.
    private struct Item {
        var id: UInt32
        var type: String
        var isHidden: Bool
        var infeVersion: UInt8
        var location: Location
        var properties: [(index: Int, essential: Bool)] = []
        var references: [(type: String, to: [UInt32])] = []
        var descriptor: [UInt8] = []
        /// A grid's or an overlay's output size, which its own `ispe` declares.
        var declaredSize: (width: UInt32, height: UInt32)?
    }

    private static let codedTypes = ["av01", "hvc1"]
    private static let otherTypes = ["grid", "iovl", "Exif", "mime", "iden", "tmap", "hvt1", "jpeg", "unci"]
    private static let referenceTypes = ["dimg", "auxl", "thmb", "cdsc", "prem", "base"]
    /// The auxiliary type of an alpha plane (MIAF's, which libavif and libheif both read).
    private static let alphaURN = "urn:mpeg:mpegB:cicp:systems:auxiliary:alpha"
    /// Widths and heights an `ispe`, a grid or an overlay declares.
    static let sizes: [UInt32] = [64, 128, 8, 1, 0, 65, 4096, 65535, 1 << 20, 0xFFFF_FFFF]

    /// The file `input` describes.
    init(_ input: Data) {
        var d = Decisions(bytes: [UInt8](input))
        let payloads = ISOBMFFCodedPayloads.shared
        let tile = ISOBMFFCodedPayloads.side
        let isAVIF = !d.flag()
        self.isAVIF = isAVIF
        // Items: the first is the coded image, the rest whatever the input says.
        let itemCount = 1 + d.below(8)
        var items: [Item] = []
        for i in 0..<itemCount {
            let kind = i == 0 ? 0 : d.below(12)
            let type: String
            switch kind {
            case 0, 1, 2: type = Self.codedTypes[isAVIF ? 0 : 1]
            case 3: type = Self.codedTypes[isAVIF ? 1 : 0]
            case 4, 5: type = kind == 4 ? "grid" : "iovl"
            case 11: type = String(decoding: (0..<4).map { _ in 0x61 + d.byte() % 26 }, as: UTF8.self)
            default: type = Self.otherTypes[kind - 4]
            }
            let idRule = d.byte()
            let id: UInt32 = idRule < 224 ? UInt32(i + 1) : UInt32(idRule % 12)  // repeats and 0 sometimes
            let flags = d.byte()
            let locationRule = d.below(16)
            let location: Location
            switch locationRule {
            case 0...7:
                location =
                    type == "grid" || type == "iovl"
                    ? .descriptor : .coded(avif: type == "av01" || (type != "hvc1" && isAVIF), parts: 1)
            case 8: location = .coded(avif: isAVIF, parts: 2 + d.below(3))
            case 9: location = .descriptor
            case 10, 11: location = .arbitrary(offset: d.u32(), length: d.u32())
            case 12: location = .empty(count: 1 + d.below(4) * d.below(64))
            case 13: location = .coded(avif: !isAVIF, parts: 1)
            default: location = .none
            }
            items.append(
                Item(
                    id: id, type: type, isHidden: flags & 1 == 1, infeVersion: flags & 2 == 0 ? 2 : 3,
                    location: location))
        }
        // Grid and overlay descriptors, and each derived item's references to the items it is made of.
        // A tile is a new hidden coded item (libavif wants one item a tile), sometimes an item already there.
        var ids = items.map(\.id)
        let codedIDs = items.filter { Self.codedTypes.contains($0.type) }.map(\.id)
        var tileItems: [Item] = []
        var nextID = (ids.max() ?? 0) + 1
        for i in items.indices where items[i].type == "grid" || items[i].type == "iovl" {
            let rows = 1 + d.below(3)
            let columns = 1 + d.below(3)
            let count = d.below(8) == 7 ? d.below(10) : rows * columns
            let tiles = (0..<count).map { _ -> UInt32 in
                switch d.below(4) {
                case 3: return ids[d.below(ids.count)]
                case 2: return codedIDs.isEmpty ? ids[0] : codedIDs[d.below(codedIDs.count)]
                default:
                    defer { nextID += 1 }
                    tileItems.append(
                        Item(
                            id: nextID, type: Self.codedTypes[isAVIF ? 0 : 1], isHidden: true, infeVersion: 2,
                            location: .coded(avif: isAVIF, parts: 1)))
                    return nextID
                }
            }
            items[i].references.append(("dimg", tiles))
            let wide = d.below(4) == 3
            let width = d.below(3) == 2 ? Self.sizes[d.below(Self.sizes.count)] : UInt32(tile * columns)
            let height = d.below(3) == 2 ? Self.sizes[d.below(Self.sizes.count)] : UInt32(tile * rows)
            var descriptor: [UInt8] = [d.below(8) == 7 ? 1 : 0, wide ? 1 : 0]
            if items[i].type == "grid" {
                descriptor += [UInt8(rows - 1), UInt8(columns - 1)]
            } else {
                descriptor += (0..<4).flatMap { _ in Self.bigEndian(UInt32(d.u16()), size: 2) }
            }
            descriptor += Self.bigEndian(width, size: wide ? 4 : 2) + Self.bigEndian(height, size: wide ? 4 : 2)
            if items[i].type == "iovl" {
                for _ in 0..<count {
                    let x = d.below(4) == 3 ? d.u32() : UInt32(tile * d.below(3))
                    let y = d.below(4) == 3 ? d.u32() : UInt32(tile * d.below(3))
                    descriptor += Self.bigEndian(x, size: wide ? 4 : 2) + Self.bigEndian(y, size: wide ? 4 : 2)
                }
            }
            items[i].descriptor = descriptor
            items[i].declaredSize = (width, height)
        }
        items += tileItems
        ids += tileItems.map(\.id)
        // Other references: alpha (auxl), thumbnails, metadata, premultiplied.
        for i in items.indices where d.below(4) == 3 {
            let type = Self.referenceTypes[d.below(Self.referenceTypes.count)]
            let targets = (0..<(1 + d.below(3))).map { _ in ids[d.below(ids.count)] }
            items[i].references.append((type, targets))
        }
        // Properties, shared by index: the codec configurations, sizes, colour and transforms.
        var properties: [[UInt8]] = [
            isAVIF ? payloads.av1Configuration : payloads.hevcConfiguration,
            Self.ispe(UInt32(tile), UInt32(tile)),
        ]
        let extraProperties = d.below(6)
        for _ in 0..<extraProperties {
            switch d.below(12) {
            case 0: properties.append(isAVIF ? payloads.hevcConfiguration : payloads.av1Configuration)
            case 1, 2:
                let width = Self.sizes[d.below(Self.sizes.count)]
                let height = Self.sizes[d.below(Self.sizes.count)]
                properties.append(Self.ispe(width, height))
            case 3:
                let channels = d.below(5)
                properties.append(
                    Self.fullBox("pixi", version: 0, flags: 0, [UInt8(channels)] + (0..<channels).map { _ in d.byte() })
                )
            case 4: properties.append(Self.box("colr", Array("nclx".utf8) + [0, 1, 0, 13, 0, 6, 0x80]))
            case 5: properties.append(Self.box("colr", Array("prof".utf8) + (0..<d.below(200)).map { _ in d.byte() }))
            case 6: properties.append(Self.box("irot", [d.byte()]))
            case 7: properties.append(Self.box("imir", [d.byte()]))
            case 8:
                properties.append(Self.box("clap", (0..<8).flatMap { _ in Self.bigEndian(d.u32(), size: 4) }))
            case 9:
                let urn = d.flag() ? Self.alphaURN : "urn:mpeg:hevc:2015:auxid:1"
                properties.append(Self.fullBox("auxC", version: 0, flags: 0, Array(urn.utf8) + [0]))
            case 10: properties.append(Self.box("pasp", Self.bigEndian(d.u32(), size: 4) + Self.bigEndian(1, size: 4)))
            default: properties.append(Self.box("a1op", [d.byte()]))
            }
        }
        var ownSizes: [Int: Int] = [:]  // a derived item's index → its `ispe`'s property index (from 1)
        for i in items.indices {
            guard let size = items[i].declaredSize else { continue }
            properties.append(Self.ispe(size.width, size.height))
            ownSizes[i] = properties.count
        }
        for i in items.indices {
            if Self.codedTypes.contains(items[i].type) || d.below(4) == 3 {
                items[i].properties = [(1, true), (2, false)]
            }
            if let own = ownSizes[i], d.below(8) != 7 { items[i].properties.append((own, false)) }
            for _ in 0..<d.below(4) {
                items[i].properties.append((1 + d.below(properties.count + 1), d.flag()))
            }
        }
        // The primary item, the boxes' versions, and which box is written twice.
        // (the last grid or overlay, else the coded image; sometimes any ID)
        let derived = items.last { $0.declaredSize != nil }
        let primary = d.below(8) == 7 ? UInt32(d.below(12)) : (derived ?? items[0]).id
        // (version 1 first: version 0 has no construction method, so no item of it can be in idat)
        let ilocVersion = UInt8((d.below(3) + 1) % 3)
        let fieldSizes: [UInt8] = d.below(8) == 7 ? (0..<4).map { _ in d.byte() % 16 } : [4, 4, 0, 0]
        let duplicate = d.below(16)  // 1: iinf, 2: iloc, 3: idat, 4: ipma, 5: iref, 6: pitm, 7: ipco; else none
        // Alpha, decided last (an input saved before still writes the same file): for an item, a hidden coded
        // item with an `auxC` alpha property and an `auxl` reference to it, of the item's size or another, its
        // `auxC` essential or not, sometimes in the other codec, sometimes premultiplied (`prem`).
        let alphaType = Self.fullBox("auxC", version: 0, flags: 0, Array(Self.alphaURN.utf8) + [0])
        for i in items.indices where d.below(4) == 3 {
            if !properties.contains(alphaType) { properties.append(alphaType) }
            let otherCodec = d.below(8) == 7
            var alpha = Item(
                id: nextID, type: Self.codedTypes[isAVIF != otherCodec ? 0 : 1], isHidden: true, infeVersion: 2,
                location: .coded(avif: isAVIF != otherCodec, parts: 1))
            alpha.references.append(("auxl", [items[i].id]))
            let configuration = isAVIF != otherCodec ? payloads.av1Configuration : payloads.hevcConfiguration
            if !properties.contains(configuration) { properties.append(configuration) }
            let size = d.below(4) == 3 ? Self.sizes[d.below(Self.sizes.count)] : nil
            if let size { properties.append(Self.ispe(size, Self.sizes[d.below(Self.sizes.count)])) }
            // (property indices count from 1)
            let index = { (property: [UInt8]) in (properties.firstIndex(of: property) ?? 0) + 1 }
            alpha.properties = [
                (index(configuration), true), (size == nil ? 2 : properties.count, false),
                (index(alphaType), d.below(4) == 3),
            ]
            if d.below(4) == 3 { items[i].references.append(("prem", [alpha.id])) }
            items.append(alpha)
            nextID += 1
        }
        // An image sequence, decided after everything else (0: none): `moov` beside `meta`, or instead of it.
        let sequenceRule = d.below(4)
        let tracks = sequenceRule == 0 ? [] : ISOBMFFFuzzSequence.tracks(isAVIF: isAVIF, from: &d)
        let hasMeta = sequenceRule != 3
        func meta(_ mdatStart: UInt32) -> [UInt8] {
            guard hasMeta else { return [] }
            return Self.meta(
                items: items, properties: properties, primary: primary, ilocVersion: ilocVersion,
                fieldSizes: fieldSizes, duplicate: duplicate, mdatStart: mdatStart, payloads: payloads)
        }
        let brand = Array((isAVIF ? "avif" : "heic").utf8)
        let sequenceBrand = Array((isAVIF ? "avis" : "msf1").utf8)
        let major = tracks.isEmpty || d.below(4) == 3 ? brand : sequenceBrand
        // (a file of tracks only lists its items' brand rarely: libavif then looks for a `meta` box)
        let itemBrand = hasMeta || d.below(4) == 3 ? brand : []
        let ftyp = Self.box(
            "ftyp", major + [0, 0, 0, 0] + Array("mif1miaf".utf8) + itemBrand + (tracks.isEmpty ? [] : sequenceBrand))
        let moovLength = ISOBMFFFuzzSequence.moov(tracks, mdatStart: 0, payloads: payloads).count
        let mdatStart = UInt32(ftyp.count + meta(0).count + moovLength + 8)
        let moov = ISOBMFFFuzzSequence.moov(tracks, mdatStart: mdatStart, payloads: payloads)
        data = Data(ftyp + meta(mdatStart) + moov + Self.box("mdat", payloads.av1 + payloads.hevc))
    }

    // MARK: Writing boxes

    private static func meta(
        items: [Item], properties: [[UInt8]], primary: UInt32, ilocVersion: UInt8, fieldSizes: [UInt8],
        duplicate: Int, mdatStart: UInt32, payloads: ISOBMFFCodedPayloads
    ) -> [UInt8] {
        let hdlr = fullBox(
            "hdlr", version: 0, flags: 0, [0, 0, 0, 0] + Array("pict".utf8) + [UInt8](repeating: 0, count: 13))
        let pitm =
            primary > 0xFFFF
            ? fullBox("pitm", version: 1, flags: 0, bigEndian(primary, size: 4))
            : fullBox("pitm", version: 0, flags: 0, bigEndian(primary, size: 2))
        let iinf = Self.iinf(items)
        // idat: every derived item's descriptor, one after another.
        var idatBody: [UInt8] = []
        var descriptorOffsets: [Int] = []
        for item in items {
            descriptorOffsets.append(idatBody.count)
            idatBody += item.descriptor
        }
        let idat = box("idat", idatBody)
        let iloc = Self.iloc(
            items: items, version: ilocVersion, fieldSizes: fieldSizes, mdatStart: mdatStart,
            descriptorOffsets: descriptorOffsets, payloads: payloads)
        var ipcoBody: [UInt8] = []
        for property in properties { ipcoBody += property }
        let ipco = box("ipco", ipcoBody)
        var ipmaBody = bigEndian(UInt32(items.count), size: 4)
        for item in items {
            ipmaBody += bigEndian(item.id, size: 2) + [UInt8(min(item.properties.count, 255))]
            for (index, essential) in item.properties.prefix(255) {
                ipmaBody += [UInt8(truncatingIfNeeded: index) & 0x7F | (essential ? 0x80 : 0)]
            }
        }
        let ipma = fullBox("ipma", version: 0, flags: 0, ipmaBody)
        let iprp = box("iprp", duplicate == 7 ? ipco + ipco + ipma : duplicate == 4 ? ipco + ipma + ipma : ipco + ipma)
        var irefBody: [UInt8] = []
        for item in items {
            for (type, targets) in item.references {
                irefBody += box(
                    type,
                    bigEndian(item.id, size: 2) + bigEndian(UInt32(targets.count), size: 2)
                        + targets.flatMap { bigEndian($0, size: 2) })
            }
        }
        let iref = fullBox("iref", version: 0, flags: 0, irefBody)
        var children = hdlr + pitm + iinf + iloc + iprp + (irefBody.isEmpty ? [] : iref)
        if !idatBody.isEmpty { children += idat }
        switch duplicate {
        case 1:
            // a second iinf retyping the first item (libheif takes the first entry for an ID, Imago the last)
            var retyped = items
            retyped[0].type = retyped[0].type == "grid" ? "iovl" : "grid"
            children += Self.iinf(retyped)
        case 2: children += iloc
        case 3: children += box("idat", idatBody.reversed())
        case 5: children += iref
        case 6: children += fullBox("pitm", version: 0, flags: 0, bigEndian(primary &+ 1, size: 2))
        default: break
        }
        return fullBox("meta", version: 0, flags: 0, children)
    }

    private static func iinf(_ items: [Item]) -> [UInt8] {
        var body = bigEndian(UInt32(items.count), size: 2)
        for item in items {
            var entry = item.infeVersion == 2 ? bigEndian(item.id, size: 2) : bigEndian(item.id, size: 4)
            entry += [0, 0] + Array(item.type.utf8) + [0]
            if item.type == "mime" { entry += Array("application/rdf+xml".utf8) + [0] }
            body += fullBox("infe", version: item.infeVersion, flags: item.isHidden ? 1 : 0, entry)
        }
        return fullBox("iinf", version: 0, flags: 0, body)
    }

    private static func iloc(
        items: [Item], version: UInt8, fieldSizes: [UInt8], mdatStart: UInt32, descriptorOffsets: [Int],
        payloads: ISOBMFFCodedPayloads
    ) -> [UInt8] {
        let (offsetSize, lengthSize, baseSize, indexSize) = (
            Int(fieldSizes[0]), Int(fieldSizes[1]), Int(fieldSizes[2]), Int(fieldSizes[3])
        )
        var body: [UInt8] = [UInt8(offsetSize << 4 | lengthSize), UInt8(baseSize << 4 | (version > 0 ? indexSize : 0))]
        let located = items.enumerated().filter {
            if case .none = $0.element.location { return false }
            return true
        }
        body += bigEndian(UInt32(located.count), size: version < 2 ? 2 : 4)
        for (position, item) in located {
            body += bigEndian(item.id, size: version < 2 ? 2 : 4)
            var method: UInt32 = 0
            var extents: [(offset: UInt32, length: UInt32)] = []
            switch item.location {
            case .coded(let avif, let parts):
                let start = mdatStart + (avif ? 0 : UInt32(payloads.av1.count))
                let length = UInt32(avif ? payloads.av1.count : payloads.hevc.count)
                let step = max(1, length / UInt32(parts))
                for part in 0..<UInt32(parts) {
                    extents.append((start + part * step, part == UInt32(parts) - 1 ? length - part * step : step))
                }
            case .descriptor:
                method = 1
                extents = [(UInt32(descriptorOffsets[position]), UInt32(item.descriptor.count))]
            case .arbitrary(let offset, let length): extents = [(offset, length)]
            case .empty(let count): extents = Array(repeating: (0, 0), count: count)
            case .none: break
            }
            if version > 0 { body += bigEndian(method, size: 2) }
            body += [0, 0] + bigEndian(0, size: baseSize) + bigEndian(UInt32(extents.count), size: 2)
            for extent in extents {
                if version > 0 { body += bigEndian(0, size: indexSize) }
                body += bigEndian(extent.offset, size: offsetSize) + bigEndian(extent.length, size: lengthSize)
            }
        }
        return fullBox("iloc", version: version, flags: 0, body)
    }

    /// `value`'s low `size` bytes, most significant first (sizes the specification does not allow are written as
    /// that many bytes all the same: a reader must cope).
    static func bigEndian(_ value: UInt32, size: Int) -> [UInt8] { BigEndian.bytes(value, size: size) }

    private static func ispe(_ width: UInt32, _ height: UInt32) -> [UInt8] {
        fullBox("ispe", version: 0, flags: 0, bigEndian(width, size: 4) + bigEndian(height, size: 4))
    }

    static func box(_ type: String, _ body: [UInt8]) -> [UInt8] {
        bigEndian(UInt32(8 + body.count), size: 4) + Array(type.utf8) + body
    }

    static func fullBox(_ type: String, version: UInt8, flags: UInt32, _ body: [UInt8]) -> [UInt8] {
        box(type, [version] + bigEndian(flags, size: 3) + body)
    }
}
