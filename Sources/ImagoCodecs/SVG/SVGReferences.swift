import Foundation
import ImagoCore

/// The check an SVG document passes before librsvg parses it: every `data:` URL its `href` attributes name (on
/// `<image>`, `<feImage>`, `<use>`, XInclude …) must be an image Imago's own decoders read within the decode's
/// limits, since librsvg hands such images to gdk-pixbuf, whose allocations Imago cannot bound.
///
/// Attribute values are read as an XML parser reads them: character references (`&#100;ata:`) and the five
/// predefined entities are expanded; an `href` that uses any other entity (one the document's DTD defines) is
/// refused rather than expanded. Embedded SVG documents are checked the same way, four levels deep at most. In
/// CSS (`style` attributes and elements), only `url(#id)` references inside the document pass; entity
/// declarations may only stand for plain text.
enum SVGReferences {
    /// Throws ``CodecError/corrupt(format:reason:)`` unless every `data:` URL of `document` decodes within
    /// `options`' limits.
    static func checkEmbeddedImages(in document: Data, options: DecodingOptions, depth: Int = 0) throws {
        guard depth < 4 else { throw refused("SVG documents nested more than four deep") }
        let text = try text(of: document)
        try checkEntityDeclarations(in: text)
        try checkStyleReferences(in: text)
        for value in try hrefValues(in: text) {
            let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
            guard trimmed.lowercased().hasPrefix("data:") else { continue }
            try checkImage(dataURLPayload(trimmed), options: options, depth: depth)
        }
    }

    /// Refuses entity declarations whose expansion could hide what the other checks look for: external and
    /// parameter entities, and internal ones whose value holds markup, references, `url(`, `data:`, `href` or
    /// `@import`. Plain text values (the namespace URIs some editors declare as entities) pass.
    ///
    /// - Returns: the length of each declared entity's value, by name.
    @discardableResult
    static func checkEntityDeclarations(in text: String) throws -> [Substring: Int] {
        var lengths: [Substring: Int] = [:]
        var rest = Substring(text)
        while let range = rest.range(of: "<!ENTITY") {
            var declaration = rest[range.upperBound...].drop { $0.isWhitespace }
            guard declaration.first != "%" else { throw refused("a parameter entity") }
            let name = declaration.prefix { !$0.isWhitespace }
            declaration = declaration.drop { !$0.isWhitespace }.drop { $0.isWhitespace }
            guard let quote = declaration.first, quote == "\"" || quote == "'" else {
                throw refused("an external entity")
            }
            let value = declaration.dropFirst().prefix { $0 != quote }
            let lowered = value.lowercased()
            for marker in ["<", "&", "%", "url(", "data:", "href", "@import"] where lowered.contains(marker) {
                throw refused("an entity whose value holds '\(marker)'")
            }
            lengths[name] = max(lengths[name] ?? 0, value.utf8.count)
            rest = rest[range.upperBound...]
        }
        return lengths
    }

    /// How many bytes replacing every reference to `entities` (lengths by name) in `text` would add, at most.
    static func expansion(of entities: [Substring: Int], in text: String) -> Int {
        guard !entities.isEmpty else { return 0 }
        var added = 0
        var rest = Substring(text)
        while let ampersand = rest.firstIndex(of: "&") {
            let name = rest[rest.index(after: ampersand)...].prefix { $0 != ";" && $0 != "&" && $0 != "<" }
            if let length = entities[name] { added += length }
            rest = rest[rest.index(after: ampersand)...]
        }
        return added
    }

    /// Refuses CSS that could load another document: a `url(…)` that is not a reference inside this document
    /// (`url(#id)`), which librsvg would load (a `data:` SVG with images of its own among them), and `@import`.
    /// Escaped or entity-encoded forms are refused too, since only a literal `#` passes.
    static func checkStyleReferences(in text: String) throws {
        let lowered = text.lowercased()
        guard !lowered.contains("@import") else { throw refused("an @import rule") }
        var rest = Substring(lowered)
        while let range = rest.range(of: "url(") {
            let argument = rest[range.upperBound...].drop { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
            let target = argument.first == "\"" || argument.first == "'" ? argument.dropFirst() : argument
            guard target.first == "#" else { throw refused("a url() outside the document") }
            rest = rest[range.upperBound...]
        }
    }

    /// `document` as text in which ASCII markup can be searched: UTF-16 by its byte-order mark, else each byte as
    /// one character (every ASCII-compatible encoding keeps `href` and `data:` as they are).
    static func text(of document: Data) throws -> String {
        let start = [UInt8](document.prefix(2))
        if start == [0xFF, 0xFE] || start == [0xFE, 0xFF] {
            guard let text = String(data: document, encoding: .utf16) else { throw refused("bad UTF-16 text") }
            return text
        }
        // A NUL byte would let UTF-16 without a byte-order mark (or UTF-32) hide its markup from this scan.
        guard !document.contains(0) else { throw refused("a NUL byte in the document") }
        return String(data: document, encoding: .isoLatin1) ?? ""
    }

    /// The values of the attributes named `href` (any namespace prefix: `xlink:href`), references expanded.
    static func hrefValues(in text: String) throws -> [String] {
        let s = Array(text.unicodeScalars)
        let name: [Unicode.Scalar] = ["h", "r", "e", "f"]
        var values: [String] = []
        var i = 0
        while i + name.count <= s.count {
            defer { i += 1 }
            guard s[i] == "h", Array(s[i..<i + name.count]) == name else { continue }
            guard i > 0, s[i - 1] == ":" || isSpace(s[i - 1]) else { continue }
            var j = i + name.count
            while j < s.count, isSpace(s[j]) { j += 1 }
            guard j < s.count, s[j] == "=" else { continue }
            j += 1
            while j < s.count, isSpace(s[j]) { j += 1 }
            guard j < s.count, s[j] == "\"" || s[j] == "'" else { continue }
            let quote = s[j]
            var end = j + 1
            while end < s.count, s[end] != quote { end += 1 }
            var raw = String.UnicodeScalarView()
            raw.append(contentsOf: s[(j + 1)..<end])
            values.append(try expandingReferences(String(raw)))
            i = end
        }
        return values
    }

    /// `value` with character references and the predefined entities expanded; any other entity is refused.
    static func expandingReferences(_ value: String) throws -> String {
        guard value.contains("&") else { return value }
        var result = ""
        var rest = Substring(value)
        while let amp = rest.firstIndex(of: "&") {
            result += rest[..<amp]
            guard let semicolon = rest[amp...].prefix(16).firstIndex(of: ";") else {
                throw refused("an unterminated reference in an href")
            }
            let reference = rest[rest.index(after: amp)..<semicolon]
            let predefined: [Substring: String] = ["amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'"]
            if let text = predefined[reference] {
                result += text
            } else if reference.hasPrefix("#x") || reference.hasPrefix("#X"),
                let code = UInt32(reference.dropFirst(2), radix: 16), let scalar = Unicode.Scalar(code)
            {
                result.unicodeScalars.append(scalar)
            } else if reference.hasPrefix("#"), let code = UInt32(reference.dropFirst()),
                let scalar = Unicode.Scalar(code)
            {
                result.unicodeScalars.append(scalar)
            } else {
                throw refused("the entity &\(reference.prefix(32)); in an href")
            }
            rest = rest[rest.index(after: semicolon)...]
        }
        return result + rest
    }

    /// The bytes of a `data:` URL: base64 (`;base64,`) or percent-encoded.
    static func dataURLPayload(_ url: String) throws -> Data {
        guard let comma = url.firstIndex(of: ",") else { throw refused("a data: URL without a comma") }
        let meta = url[url.index(url.startIndex, offsetBy: 5)..<comma].lowercased()
        let body = url[url.index(after: comma)...]
        if meta.hasSuffix(";base64") {
            var compact = body.filter { !$0.isWhitespace }
            compact += String(repeating: "=", count: (4 - compact.count % 4) % 4)
            guard let data = Data(base64Encoded: compact) else { throw refused("bad base64 in a data: URL") }
            return data
        }
        guard let decoded = String(body).removingPercentEncoding else {
            throw refused("bad percent-encoding in a data: URL")
        }
        return Data(decoded.utf8)
    }

    /// Decodes `payload` with Imago's decoder for its format within `options`' limits (an SVG: checked in turn).
    static func checkImage(_ payload: Data, options: DecodingOptions, depth: Int) throws {
        let format = ImageFormat(sniffing: payload)
        if format == .svg {
            try checkEmbeddedImages(in: payload, options: options, depth: depth + 1)
            return
        }
        guard let decoder = ImagoCodecs.decoders.first(where: { $0.formats.contains(format) }) else {
            throw refused("an embedded image in a format Imago does not decode")
        }
        var limits = DecodingOptions()
        limits.pixelLimit = options.pixelLimit
        limits.frameLimit = options.frameLimit
        limits.animationByteLimit = min(
            options.animationByteLimit, options.pixelLimit.multipliedReportingOverflow(by: 4).partialValue)
        limits.animationWorkLimit = options.animationWorkLimit
        do {
            _ = try decoder.decode(payload, options: limits)
        } catch {
            throw refused("an embedded image Imago cannot decode within its limits (\(error))")
        }
    }

    private static func isSpace(_ scalar: Unicode.Scalar) -> Bool {
        scalar == " " || scalar == "\t" || scalar == "\n" || scalar == "\r"
    }

    private static func refused(_ reason: String) -> CodecError {
        .corrupt(format: .svg, reason: "refused: \(reason)")
    }
}
