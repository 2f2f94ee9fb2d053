/// One of imgproxy's source URL replacements (`IMGPROXY_URL_REPLACEMENTS`): a source URL whose start matches
/// ``pattern`` has that start replaced by ``replacement``, before the base URL is put in front and before the
/// source policy looks at it. In the pattern, `*` matches a run of characters without `/` (the longest that lets
/// the rest match); in the replacement, `${N}` is what the N-th `*` matched.
///
/// ```swift
/// let replacements = try URLReplacement.list(parsing: "mys3://*/=https://${1}.s3.example.com/")
/// replacements.applied(to: "mys3://photos/cat.jpg")  // "https://photos.s3.example.com/cat.jpg"
/// ```
public struct URLReplacement: Sendable, Hashable {
    /// The start a source URL must have, `*` for a run without `/`.
    public let pattern: String
    /// What replaces it, `${N}` for the N-th `*`'s match.
    public let replacement: String

    /// A replacement; the pattern may not be empty and has at most 8 `*`.
    ///
    /// - Throws: ``ProxyError/invalidOption(name:reason:)`` naming `url_replacements`.
    public init(pattern: String, replacement: String) throws(ProxyError) {
        guard !pattern.isEmpty, pattern.utf8.count(where: { $0 == UInt8(ascii: "*") }) <= 8 else {
            throw .invalidOption(name: "url_replacements", reason: "a pattern is empty or has more than 8 '*'")
        }
        self.pattern = pattern
        self.replacement = replacement
    }

    /// imgproxy's form: `pattern=replacement` pairs separated by `;` (the first `=` of a pair splits it).
    ///
    /// - Throws: ``ProxyError/invalidOption(name:reason:)`` for a pair without `=` or a bad pattern.
    public static func list(parsing text: String) throws(ProxyError) -> [URLReplacement] {
        var list: [URLReplacement] = []
        for pair in text.split(separator: ";") where !pair.allSatisfy(\.isWhitespace) {
            guard let equals = pair.firstIndex(of: "=") else {
                throw .invalidOption(name: "url_replacements", reason: "'\(pair)' is not pattern=replacement")
            }
            list.append(
                try URLReplacement(
                    pattern: String(pair[..<equals]), replacement: String(pair[pair.index(after: equals)...])))
        }
        return list
    }

    /// `url` with its start replaced, or `nil` when the pattern does not match it.
    public func applied(to url: String) -> String? {
        let text = Array(url.utf8)
        guard let (end, captures) = Self.match(Array(pattern.utf8), text) else { return nil }
        var result = Self.expand(replacement, captures: captures.map { String(decoding: text[$0], as: UTF8.self) })
        result += String(decoding: text[end...], as: UTF8.self)
        return result
    }

    /// Where `pattern` stops matching the start of `text`, and what each `*` matched: each `*` takes the longest
    /// run without `/` from which the rest of the pattern still matches (as a greedy regular expression would).
    /// Linear in pattern × text: a table of which (pattern position, text position) pairs can finish the pattern
    /// is filled from the end, then read forwards.
    static func match(_ pattern: [UInt8], _ text: [UInt8]) -> (end: Int, captures: [Range<Int>])? {
        let star = UInt8(ascii: "*")
        let slash = UInt8(ascii: "/")
        let width = text.count + 1
        // finishes[p * width + t]: pattern[p...] matches a prefix of text[t...].
        var finishes = [Bool](repeating: false, count: (pattern.count + 1) * width)
        for t in 0...text.count { finishes[pattern.count * width + t] = true }
        for p in stride(from: pattern.count - 1, through: 0, by: -1) {
            if pattern[p] == star {
                // A run of zero or more non-slash characters, then the rest.
                var any = false
                for t in stride(from: text.count, through: 0, by: -1) {
                    if t < text.count, text[t] == slash { any = false }
                    any = any || finishes[(p + 1) * width + t]
                    finishes[p * width + t] = any
                }
            } else {
                for t in 0..<text.count where text[t] == pattern[p] {
                    finishes[p * width + t] = finishes[(p + 1) * width + t + 1]
                }
            }
        }
        guard finishes[0] else { return nil }
        var t = 0
        var captures: [Range<Int>] = []
        for p in 0..<pattern.count {
            if pattern[p] == star {
                var runEnd = t
                while runEnd < text.count, text[runEnd] != slash { runEnd += 1 }
                var end = runEnd
                while !finishes[(p + 1) * width + end] { end -= 1 }  // finishes[p][t] guarantees one
                captures.append(t..<end)
                t = end
            } else {
                t += 1
            }
        }
        return (t, captures)
    }

    /// `template` with each `${N}` replaced by `captures[N - 1]` (empty when there is no such capture).
    static func expand(_ template: String, captures: [String]) -> String {
        var result = ""
        var rest = Substring(template)
        while let open = rest.range(of: "${") {
            result += rest[..<open.lowerBound]
            let afterOpen = rest[open.upperBound...]
            guard let close = afterOpen.firstIndex(of: "}"), let n = Int(afterOpen[..<close]) else {
                result += "${"
                rest = afterOpen
                continue
            }
            if n >= 1, n <= captures.count { result += captures[n - 1] }
            rest = afterOpen[afterOpen.index(after: close)...]
        }
        return result + rest
    }
}

extension [URLReplacement] {
    /// `url` after each replacement in order, each to what the ones before made of it (as imgproxy applies them).
    public func applied(to url: String) -> String {
        var url = url
        for replacement in self {
            if let replaced = replacement.applied(to: url) { url = replaced }
        }
        return url
    }
}
