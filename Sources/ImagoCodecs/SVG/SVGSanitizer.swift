import CXML2
import Foundation
import ImagoCore

/// Makes an SVG document safe to send to a browser as it is, the way imgproxy passes SVG sources through
/// (`IMGPROXY_SANITIZE_SVG`), parsed and written again by libxml2:
/// - elements that run code or load another document are removed with their content: `script`, `handler`,
///   `iframe`, `frame`, `frameset`, `object`, `embed`, `applet`, `form`, `meta`, `base`, `link`, and animations
///   (`animate`, `set`, …) whose `attributeName` is an `href` or an event handler;
/// - every event-handler attribute (`on…`) is removed;
/// - an `href` (`xlink:href` too) is kept on `<use>` only when it points inside the document (`#id`), on
///   `<image>` and `<feImage>` only for `http:`, `https:`, `data:` or a relative reference, and elsewhere (`<a>`
///   among them) only for `http:`, `https:` or a relative reference; tabs and line breaks, which browsers drop
///   from URLs, cannot hide a scheme;
/// - processing instructions (`<?xml-stylesheet …?>`) and the document type declaration are removed; entities
///   are replaced by their text, and only plain-text entities are accepted (``SVGReferences``), within a bound on
///   how much their expansion adds.
///
/// ```swift
/// let safe = try SVGSanitizer().sanitize(svgBytes)   // safe.data: the document to send; safe.size: its pixels
/// ```
public struct SVGSanitizer: Sendable {
    /// A sanitized document.
    public struct Result: Sendable, Hashable {
        /// The document, UTF-8, with an XML declaration.
        public var data: Data
        /// The size it declares (its root's `width` and `height` in absolute units, else its `viewBox`), rounded
        /// up; `nil` when it declares neither.
        public var size: PixelSize?
    }

    /// The most bytes entity references may add to a document: 1 MiB, or four times the document when larger.
    public static func expansionLimit(forDocumentOf count: Int) -> Int { max(1 << 20, 4 * count) }

    /// A sanitizer.
    public init() {}

    /// The safe form of `data`.
    ///
    /// - Throws: ``CodecError/empty``, or ``CodecError/corrupt(format:reason:)`` when `data` is not well-formed
    ///   XML with an `<svg>` root, or holds entities that are not plain text or would expand too far.
    public func sanitize(_ data: Data) throws(CodecError) -> Result {
        guard !data.isEmpty else { throw .empty }
        guard data.count < Int(Int32.max) else { throw corrupt("the document is over 2 GiB") }
        do {
            let text = try SVGReferences.text(of: data)
            let entities = try SVGReferences.checkEntityDeclarations(in: text)
            if SVGReferences.expansion(of: entities, in: text) > Self.expansionLimit(forDocumentOf: data.count) {
                throw corrupt("its entities would expand it more than the limit")
            }
        } catch let error as CodecError {
            throw error
        } catch {
            throw corrupt("\(error)")
        }
        _ = Self.initialized
        guard let context = xmlNewParserCtxt() else { throw corrupt("libxml2 could not allocate a parser") }
        defer { xmlFreeParserCtxt(context) }
        let options = Int32(
            XML_PARSE_NONET.rawValue | XML_PARSE_NOENT.rawValue | XML_PARSE_NOERROR.rawValue
                | XML_PARSE_NOWARNING.rawValue)
        let parsed = data.withUnsafeBytes { bytes in
            xmlCtxtReadMemory(
                context, bytes.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(bytes.count), nil, nil, options)
        }
        guard let document = parsed else {
            let message = context.pointee.lastError.message.map { String(cString: $0) } ?? "not well-formed XML"
            throw corrupt(message.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        defer { xmlFreeDoc(document) }
        guard let root = xmlDocGetRootElement(document), Self.localName(root) == "svg" else {
            throw corrupt("the root element is not <svg>")
        }
        if let dtd = xmlGetIntSubset(document) {
            xmlUnlinkNode(UnsafeMutablePointer<xmlNode>(OpaquePointer(dtd)))
            xmlFreeDtd(dtd)
        }
        Self.cleanNodes(from: document.pointee.children)  // the root and the instructions around it
        var output: UnsafeMutablePointer<xmlChar>?
        var count: Int32 = 0
        xmlDocDumpMemoryEnc(document, &output, &count, "UTF-8")
        guard let output, count > 0 else { throw corrupt("libxml2 could not write the document") }
        defer { cimago_xml_free(output) }
        return Result(data: Data(bytes: output, count: Int(count)), size: Self.declaredSize(of: root))
    }

    private static let initialized: Void = xmlInitParser()

    private func corrupt(_ reason: String) -> CodecError { .corrupt(format: .svg, reason: reason) }

    // MARK: - Elements and attributes

    /// Elements removed with everything inside them (local names, lowercased).
    static let removedElements: Set<String> = [
        "script", "handler", "iframe", "frame", "frameset", "object", "embed", "applet", "form", "meta", "base", "link",
    ]

    /// Animation elements, removed when they animate an `href` or an event handler.
    static let animationElements: Set<String> = ["animate", "set", "animatemotion", "animatetransform", "animatecolor"]

    /// Schemes an `href` may name, by element (local names, lowercased); others: ``linkSchemes``.
    static let imageSchemes: Set<String> = ["http", "https", "data"]
    static let linkSchemes: Set<String> = ["http", "https"]

    /// Removes what ``sanitize(_:)`` lists from `element`'s attributes and children, depth first (libxml2 refuses
    /// documents nested over 256 deep, so the recursion is bounded).
    private static func clean(_ element: xmlNodePtr) {
        let name = localName(element)
        var attribute = element.pointee.properties
        while let current = attribute {
            attribute = current.pointee.next
            let attributeName = localName(current.pointee.name)
            let isUnsafe =
                attributeName.hasPrefix("on")
                || (attributeName == "href" && !isSafeReference(value(of: current, in: element), on: name))
            if isUnsafe { xmlRemoveProp(current) }
        }
        escapeNamespaceDeclarations(of: element)
        cleanNodes(from: element.pointee.children)
    }

    /// Rewrites the URI of each namespace `element` declares with `&`, `<`, tabs and line breaks as references:
    /// libxml2 2.9 writes a namespace URI between quotes without escaping it (attribute values it escapes), so a
    /// URI holding `<` came out as a document that is not well-formed, one holding `&lt;` came out as `<` for the
    /// next reader, and a tab or a line break as whitespace the next reader turns into a space.
    private static func escapeNamespaceDeclarations(of element: xmlNodePtr) {
        var declaration = element.pointee.nsDef
        while let namespace = declaration {
            declaration = namespace.pointee.next
            guard let href = namespace.pointee.href else { continue }
            let bytes = Array(UnsafeBufferPointer(start: href, count: Int(xmlStrlen(href))))
            guard bytes.contains(where: { escapedInNamespaces[$0] != nil }) else { continue }
            var escaped: [xmlChar] = []
            escaped.reserveCapacity(bytes.count + 16)
            for byte in bytes { escaped += escapedInNamespaces[byte] ?? [byte] }
            escaped.append(0)
            guard let copy = xmlStrdup(escaped) else { continue }
            cimago_xml_free(UnsafeMutableRawPointer(mutating: href))
            namespace.pointee.href = UnsafePointer(copy)
        }
    }

    /// The references ``escapeNamespaceDeclarations(of:)`` writes for the bytes a namespace URI may not hold as
    /// they are.
    private static let escapedInNamespaces: [xmlChar: [xmlChar]] = [
        UInt8(ascii: "&"): Array("&amp;".utf8), UInt8(ascii: "<"): Array("&lt;".utf8),
        UInt8(ascii: "\t"): Array("&#9;".utf8), UInt8(ascii: "\n"): Array("&#10;".utf8),
        UInt8(ascii: "\r"): Array("&#13;".utf8),
    ]

    /// Cleans `first` and the nodes after it: an element removed with its content or cleaned, a processing
    /// instruction removed.
    private static func cleanNodes(from first: xmlNodePtr?) {
        var child = first
        while let current = child {
            child = current.pointee.next
            switch current.pointee.type {
            case XML_ELEMENT_NODE:
                if isRemoved(current) {
                    xmlUnlinkNode(current)
                    xmlFreeNode(current)
                } else {
                    clean(current)
                }
            case XML_PI_NODE:
                xmlUnlinkNode(current)
                xmlFreeNode(current)
            default: break
            }
        }
    }

    private static func isRemoved(_ element: xmlNodePtr) -> Bool {
        let name = localName(element)
        if removedElements.contains(name) { return true }
        guard animationElements.contains(name) else { return false }
        var attribute = element.pointee.properties
        while let current = attribute {
            if localName(current.pointee.name) == "attributename" {
                let target = value(of: current, in: element).lowercased()
                let local = (target.split(separator: ":").last.map(String.init) ?? target)
                    .trimmingCharacters(in: .whitespaces)
                return local == "href" || local.hasPrefix("on")
            }
            attribute = current.pointee.next
        }
        return false
    }

    /// Whether an `href` of `value` may stay on an element named `element`.
    package static func isSafeReference(_ value: String, on element: String) -> Bool {
        // Browsers drop ASCII tabs and line breaks anywhere in a URL and trim controls and spaces at its ends.
        let scalars = value.unicodeScalars.filter { $0 != "\t" && $0 != "\n" && $0 != "\r" }
        let trimmed = String(String.UnicodeScalarView(scalars)).trimmingCharacters(
            in: CharacterSet(charactersIn: Unicode.Scalar(0)...Unicode.Scalar(0x20)))
        if element == "use" { return trimmed.isEmpty || trimmed.hasPrefix("#") }
        guard let scheme = scheme(of: trimmed) else { return true }  // empty, a fragment or relative
        return (element == "image" || element == "feimage" ? imageSchemes : linkSchemes).contains(scheme)
    }

    /// The lowercased scheme `reference` starts with (`[A-Za-z][A-Za-z0-9+.-]*:`), or `nil`.
    static func scheme(of reference: String) -> String? {
        guard let colon = reference.firstIndex(of: ":") else { return nil }
        let candidate = reference[..<colon]
        guard let first = candidate.unicodeScalars.first, first.isASCII, first.properties.isAlphabetic,
            candidate.unicodeScalars.allSatisfy({
                $0.isASCII
                    && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "+.-".unicodeScalars.contains($0))
            })
        else { return nil }
        return candidate.lowercased()
    }

    // MARK: - libxml2 values

    private static func localName(_ node: xmlNodePtr) -> String { localName(node.pointee.name) }

    private static func localName(_ name: UnsafePointer<xmlChar>?) -> String {
        guard let name else { return "" }
        return String(cString: name).lowercased()
    }

    private static func value(of attribute: xmlAttrPtr, in element: xmlNodePtr) -> String {
        guard let text = xmlNodeListGetString(element.pointee.doc, attribute.pointee.children, 1) else { return "" }
        defer { cimago_xml_free(text) }
        return String(cString: text)
    }

    // MARK: - Declared size

    /// The root's declared size in pixels: `width` and `height` in absolute units (px, pt, pc, in, cm, mm or
    /// none), a missing or relative one taken from the `viewBox` (scaled by the other's ratio when one is given).
    private static func declaredSize(of root: xmlNodePtr) -> PixelSize? {
        func attribute(_ name: String) -> String? {
            guard let value = xmlGetProp(root, name) else { return nil }
            defer { cimago_xml_free(value) }
            return String(cString: value)
        }
        let box = attribute("viewBox").flatMap(viewBoxSize)
        return declaredSize(
            width: attribute("width").flatMap(length), height: attribute("height").flatMap(length), viewBox: box)
    }

    static func declaredSize(width: Double?, height: Double?, viewBox: (width: Double, height: Double)?) -> PixelSize? {
        var width = width
        var height = height
        if let box = viewBox, box.width > 0, box.height > 0 {
            switch (width, height) {
            case (nil, nil): (width, height) = (box.width, box.height)
            case (let w?, nil): height = w * box.height / box.width
            case (nil, let h?): width = h * box.width / box.height
            default: break
            }
        }
        guard let width, let height, width > 0, height > 0, width < 1e9, height < 1e9 else { return nil }
        return PixelSize(width: Int(width.rounded(.up)), height: Int(height.rounded(.up)))
    }

    /// A length in absolute units, in CSS pixels; `nil` for relative units (`%`, `em`, …) or text that is not one.
    static func length(_ text: String) -> Double? {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        let units: [(String, Double)] = [
            ("px", 1), ("pt", 4.0 / 3), ("pc", 16), ("in", 96), ("cm", 96 / 2.54), ("mm", 96 / 25.4),
        ]
        for (unit, factor) in units where trimmed.hasSuffix(unit) {
            return Double(trimmed.dropLast(unit.count).trimmingCharacters(in: .whitespaces)).map { $0 * factor }
        }
        return Double(trimmed)
    }

    /// The width and height of a `viewBox` (`min-x min-y width height`, separated by spaces or commas).
    static func viewBoxSize(_ text: String) -> (width: Double, height: Double)? {
        let numbers = text.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "\t" || $0 == "\n" }).compactMap {
            Double($0)
        }
        guard numbers.count == 4 else { return nil }
        return (numbers[2], numbers[3])
    }
}
