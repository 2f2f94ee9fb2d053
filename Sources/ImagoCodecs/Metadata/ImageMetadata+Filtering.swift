import CXML2
import Foundation
import ImagoCore

extension ImageMetadata {
    /// Only what states who made the image and its rights, as imgproxy's `keep_copyright` keeps when it strips the
    /// rest: EXIF's `Artist` and `Copyright` (a new, minimal EXIF block), XMP's `dc:rights`, `dc:creator`,
    /// `dc:contributor` and `dc:publisher` and the `xmpRights` and `cc` properties (the packet rewritten by
    /// libxml2), and IPTC's By-line (2:80), Credit (2:110) and Copyright Notice (2:116) with the record version and
    /// the envelope; `nil` when nothing of that is present. A block that does not parse gives nothing.
    public var copyrightOnly: ImageMetadata? {
        ImageMetadata(
            exif: exif.flatMap(ExifEditing.copyrightOnly), xmp: xmp.flatMap(XMPFiltering.copyrightOnly),
            iptc: iptc.flatMap(IPTCFiltering.copyrightOnly)
        ).bounded
    }

    /// These blocks with the EXIF orientation set to 1 (shown as stored), for pixels already turned upright: a
    /// viewer would otherwise turn them again. Blocks without an orientation are unchanged.
    public var uprightened: ImageMetadata {
        var copy = self
        copy.exif = exif.map(ExifEditing.uprightened)
        return copy
    }

    /// These blocks without EXIF's embedded thumbnail (IFD1 and the image it points to), which shows the source as
    /// it was: after a crop, what was cut away. The thumbnail's bytes and its directory are zeroed and IFD0's link to
    /// it cleared in place, so every other offset in the block stays valid. Other blocks are unchanged.
    public var withoutThumbnail: ImageMetadata {
        var copy = self
        copy.exif = exif.map(ExifEditing.withoutThumbnail)
        return copy
    }

    /// These blocks with the EXIF image size set to `size` (the EXIF sub-IFD's `PixelXDimension` and
    /// `PixelYDimension`, and IFD0's `ImageWidth` and `ImageLength` where a writer put them), for pixels resized
    /// from the ones they described, as libvips updates them when it saves. Values are patched in place: a
    /// SHORT field too small for a side is left as it was. Other blocks are unchanged.
    public func sized(_ size: PixelSize) -> ImageMetadata {
        var copy = self
        copy.exif = exif.map { ExifEditing.sized($0, width: size.width, height: size.height) }
        return copy
    }
}

/// Rewrites the TIFF structure of an EXIF block, read through ``ExifReader``'s bounds-checked IFD0 walk.
enum ExifEditing {
    /// Whether `exif` starts with a TIFF header (`II*\0` or `MM\0*`, perhaps after `Exif\0\0`), as libavif and
    /// libheif require.
    static func hasTIFFHeader(_ exif: Data) -> Bool {
        exif.withUnsafeBytes { ExifReader.hasTIFFHeader(inRawBytes: $0) }
    }

    /// A minimal little-endian EXIF block with IFD0's `Artist` (0x013B) and `Copyright` (0x8298) strings of
    /// `exif`; `nil` when it has neither.
    static func copyrightOnly(_ exif: Data) -> Data? {
        let kept: [(tag: Int, value: [UInt8])] = exif.withUnsafeBytes { raw in
            guard let (_, entries) = ExifReader.ifd0(inRawBytes: raw) else { return [] }
            return entries.compactMap { entry in
                guard entry.tag == 0x013B || entry.tag == 0x8298, entry.type == 2, entry.count > 0,
                    entry.count <= ImageMetadata.maximumBlockLength,
                    let value = ExifReader.byteValue(of: entry, inRawBytes: raw)
                else { return nil }
                return (Int(entry.tag), [UInt8](value))
            }
        }
        return ifd0Block(kept)
    }

    /// A minimal little-endian EXIF block whose IFD0 holds `strings` (ASCII values, each with its NUL), in tag
    /// order; `nil` for none.
    static func ifd0Block(_ strings: [(tag: Int, value: [UInt8])]) -> Data? {
        let kept = strings.sorted { $0.tag < $1.tag }
        guard !kept.isEmpty else { return nil }
        func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
        func le32(_ v: Int) -> [UInt8] { le16(v & 0xFFFF) + le16(v >> 16 & 0xFFFF) }
        let dataStart = 8 + 2 + 12 * kept.count + 4
        var output: [UInt8] = [0x49, 0x49, 0x2A, 0x00] + le32(8) + le16(kept.count)
        var data: [UInt8] = []
        for (tag, value) in kept {
            output += le16(tag) + le16(2) + le32(value.count)
            if value.count <= 4 {
                output += value + [UInt8](repeating: 0, count: 4 - value.count)
            } else {
                output += le32(dataStart + data.count)
                data += value
                if value.count % 2 == 1 { data.append(0) }
            }
        }
        return Data(output + le32(0) + data)
    }

    /// `exif` with the image size patched in place (``ImageMetadata/sized(_:)``): `PixelXDimension` (0xA002) and
    /// `PixelYDimension` (0xA003) of the EXIF sub-IFD and `ImageWidth` (0x0100) and `ImageLength` (0x0101) of
    /// IFD0, each a SHORT or a LONG held in its value field.
    static func sized(_ exif: Data, width: Int, height: Int) -> Data {
        let fields: [(field: Int, type: UInt16, value: Int)] = exif.withUnsafeBytes { raw in
            let entries =
                (ExifReader.ifd0(inRawBytes: raw)?.entries ?? []) + (ExifReader.exifIFD(inRawBytes: raw) ?? [])
            return entries.compactMap { entry in
                let value: Int
                switch entry.tag {
                case 0xA002, 0x0100: value = width
                case 0xA003, 0x0101: value = height
                default: return nil
                }
                guard entry.count == 1, entry.type == 3 || entry.type == 4, entry.type == 4 || value <= 0xFFFF,
                    entry.valueField >= 0, entry.valueField + 4 <= raw.count
                else { return nil }
                return (entry.valueField, entry.type, value)
            }
        }
        guard !fields.isEmpty else { return exif }
        let isBigEndian = exif.withUnsafeBytes { ExifReader.ifd0(inRawBytes: $0)?.isBigEndian ?? false }
        var bytes = [UInt8](exif)
        for (field, type, value) in fields {
            let width = type == 3 ? 2 : 4
            for i in 0..<width {
                let shift = 8 * (isBigEndian ? width - 1 - i : i)
                bytes[field + i] = UInt8(truncatingIfNeeded: value >> shift)
            }
        }
        return Data(bytes)
    }

    /// `exif` without its thumbnail (``ImageMetadata/withoutThumbnail``): the image IFD1 points to
    /// (`JPEGInterchangeFormat` 0x0201 and its length 0x0202, or one strip: 0x0111 and 0x0117) and IFD1 itself zeroed,
    /// and IFD0's link set to 0; unchanged without an IFD1. A range reaching outside the block is left alone.
    static func withoutThumbnail(_ exif: Data) -> Data {
        let ranges: [Range<Int>]? = exif.withUnsafeBytes { raw in
            guard let (ifd0, ifd1, entries) = ExifReader.ifd1(inRawBytes: raw),
                let tiff = ExifReader.tiffStart(inRawBytes: raw)
            else { return nil }
            func value(_ tag: UInt16) -> Int? {
                entries.first { $0.tag == tag }.flatMap { ExifReader.integerValue(of: $0, inRawBytes: raw) }
            }
            var ranges = [ifd1]
            for (offsetTag, lengthTag) in [(UInt16(0x0201), UInt16(0x0202)), (0x0111, 0x0117)] {
                guard let offset = value(offsetTag), let length = value(lengthTag), length > 0,
                    offset <= raw.count - tiff - length
                else { continue }
                ranges.append((tiff + offset)..<(tiff + offset + length))
            }
            // IFD0 is never zeroed, whatever a hostile IFD1 points at; its link is cleared last.
            return ranges.filter { !$0.overlaps(ifd0) } + [(ifd0.upperBound - 4)..<ifd0.upperBound]
        }
        guard let ranges else { return exif }
        var bytes = [UInt8](exif)
        for range in ranges where range.lowerBound >= 0 && range.upperBound <= bytes.count {
            bytes.replaceSubrange(range, with: repeatElement(0, count: range.count))
        }
        return Data(bytes)
    }

    /// `exif` with IFD0's `Orientation` (0x0112, a SHORT) set to 1, patched in place; unchanged without one.
    static func uprightened(_ exif: Data) -> Data {
        let found: (field: Int, isBigEndian: Bool)? = exif.withUnsafeBytes { raw in
            guard let (isBigEndian, entries) = ExifReader.ifd0(inRawBytes: raw),
                let entry = entries.first(where: { $0.tag == 0x0112 && $0.type == 3 && $0.count == 1 })
            else { return nil }
            return (entry.valueField, isBigEndian)
        }
        guard let (field, isBigEndian) = found else { return exif }
        var bytes = [UInt8](exif)
        (bytes[field], bytes[field + 1]) = isBigEndian ? (0, 1) : (1, 0)
        return Data(bytes)
    }
}

/// Filters the IPTC-IIM records of a Photoshop image resource block (APP13). Every read is bounds-checked.
enum IPTCFiltering {
    /// The IIM datasets kept: the envelope (record 1), and of the application record (2) its version (0), By-line
    /// (80), Credit (110) and Copyright Notice (116).
    static func isKept(record: UInt8, dataset: UInt8) -> Bool {
        record != 2 || [0, 80, 110, 116].contains(dataset)
    }

    /// A resource block holding only the IPTC resource (0x0404) with the datasets ``isKept(record:dataset:)`` keeps;
    /// `nil` when none is left or the block does not parse.
    static func copyrightOnly(_ block: Data) -> Data? {
        let bytes = [UInt8](block)
        var offset = 0
        var iim: ArraySlice<UInt8>?
        // Resources: "8BIM", id (2), Pascal name padded to even, size (4), data padded to even.
        while offset + 12 <= bytes.count, bytes[offset..<(offset + 4)].elementsEqual(Array("8BIM".utf8)) {
            let id = Int(bytes[offset + 4]) << 8 | Int(bytes[offset + 5])
            let nameLength = Int(bytes[offset + 6])
            let sizeAt = offset + 6 + ((nameLength + 2) & ~1)
            guard sizeAt + 4 <= bytes.count else { return nil }
            let size = Int(BigEndian.u32(bytes, at: sizeAt))
            let start = sizeAt + 4
            guard start + size <= bytes.count else { return nil }
            if id == 0x0404, iim == nil { iim = bytes[start..<(start + size)] }
            offset = start + size + (size & 1)
        }
        guard let iim else { return nil }
        var kept: [UInt8] = []
        var index = iim.startIndex
        // Datasets: 0x1C, record, dataset, size (2; a set high bit means an extended size, which these never need).
        while index + 5 <= iim.endIndex, iim[index] == 0x1C {
            let (record, dataset) = (iim[index + 1], iim[index + 2])
            let size = Int(iim[index + 3]) << 8 | Int(iim[index + 4])
            guard size & 0x8000 == 0, index + 5 + size <= iim.endIndex else { break }
            if isKept(record: record, dataset: dataset), record != 2 || dataset != 0 || size > 0 {
                kept += iim[index..<(index + 5 + size)]
            }
            index += 5 + size
        }
        // Nothing but the envelope and the version says nothing of the rights.
        guard hasRights(kept) else { return nil }
        let size = kept.count
        var output = Array("8BIM".utf8) + [0x04, 0x04, 0, 0]
        output += [UInt8(size >> 24 & 0xFF), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)]
        output += kept
        if size % 2 == 1 { output.append(0) }
        return Data(output)
    }

    /// Whether `datasets` hold a By-line, Credit or Copyright Notice.
    private static func hasRights(_ datasets: [UInt8]) -> Bool {
        var index = 0
        while index + 5 <= datasets.count {
            if datasets[index + 1] == 2, [80, 110, 116].contains(datasets[index + 2]) { return true }
            index += 5 + (Int(datasets[index + 3]) << 8 | Int(datasets[index + 4]))
        }
        return false
    }
}

/// Filters an XMP packet's properties with libxml2 (no network, no entity substitution, no DTD).
enum XMPFiltering {
    static let rdf = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
    static let dublinCore = "http://purl.org/dc/elements/1.1/"
    static let keptNamespaces: Set<String> = ["http://ns.adobe.com/xap/1.0/rights/", "http://creativecommons.org/ns#"]
    static let keptDublinCore: Set<String> = ["rights", "creator", "contributor", "publisher"]

    /// Whether a property (an element or attribute of `namespace` named `name` inside `rdf:Description`) is kept.
    static func isKept(namespace: String?, name: String) -> Bool {
        guard let namespace else { return false }
        if namespace == dublinCore { return keptDublinCore.contains(name) }
        return keptNamespaces.contains(namespace)
    }

    /// The packet with only the properties ``isKept(namespace:name:)`` keeps, on every `rdf:Description`; `nil`
    /// when none is left or the packet is not well-formed XML.
    static func copyrightOnly(_ packet: Data) -> Data? {
        guard !packet.isEmpty, packet.count <= ImageMetadata.maximumBlockLength else { return nil }
        _ = initialized
        guard let context = xmlNewParserCtxt() else { return nil }
        defer { xmlFreeParserCtxt(context) }
        let options = Int32(XML_PARSE_NONET.rawValue | XML_PARSE_NOERROR.rawValue | XML_PARSE_NOWARNING.rawValue)
        let parsed = packet.withUnsafeBytes { bytes in
            xmlCtxtReadMemory(
                context, bytes.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(bytes.count), nil, nil, options)
        }
        guard let document = parsed else { return nil }
        defer { xmlFreeDoc(document) }
        if let dtd = xmlGetIntSubset(document) {
            xmlUnlinkNode(UnsafeMutablePointer<xmlNode>(OpaquePointer(dtd)))
            xmlFreeDtd(dtd)
        }
        var keptCount = 0
        visit(xmlDocGetRootElement(document), kept: &keptCount)
        guard keptCount > 0 else { return nil }
        var output: UnsafeMutablePointer<xmlChar>?
        var count: Int32 = 0
        xmlDocDumpMemoryEnc(document, &output, &count, "UTF-8")
        guard let output, count > 0 else { return nil }
        defer { cimago_xml_free(output) }
        return Data(bytes: output, count: Int(count))
    }

    private static let initialized: Void = xmlInitParser()

    /// Filters every `rdf:Description` at or below `node` (libxml2 refuses documents nested over 256 deep, so the
    /// recursion is bounded), counting the properties kept.
    private static func visit(_ node: xmlNodePtr?, kept: inout Int) {
        var current = node
        while let element = current {
            current = element.pointee.next
            guard element.pointee.type == XML_ELEMENT_NODE else { continue }
            if namespace(of: element.pointee.ns) == rdf, name(element.pointee.name) == "Description" {
                filter(element, kept: &kept)
            } else {
                visit(element.pointee.children, kept: &kept)
            }
        }
    }

    /// Removes `description`'s properties that are not kept: child elements and attributes (rdf's own stay).
    private static func filter(_ description: xmlNodePtr, kept: inout Int) {
        var attribute = description.pointee.properties
        while let current = attribute {
            attribute = current.pointee.next
            let namespace = namespace(of: current.pointee.ns)
            if namespace == rdf { continue }
            if isKept(namespace: namespace, name: name(current.pointee.name)) {
                kept += 1
            } else {
                xmlRemoveProp(current)
            }
        }
        var child = description.pointee.children
        while let current = child {
            child = current.pointee.next
            guard current.pointee.type == XML_ELEMENT_NODE else { continue }
            if isKept(namespace: namespace(of: current.pointee.ns), name: name(current.pointee.name)) {
                kept += 1
            } else {
                xmlUnlinkNode(current)
                xmlFreeNode(current)
            }
        }
    }

    private static func namespace(of ns: xmlNsPtr?) -> String? {
        ns?.pointee.href.map { String(cString: $0) }
    }

    private static func name(_ text: UnsafePointer<xmlChar>?) -> String {
        text.map { String(cString: $0) } ?? ""
    }
}
