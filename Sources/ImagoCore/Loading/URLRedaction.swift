import Foundation

/// Keeps secrets carried in URLs out of everything Imago writes down: logs, events, error descriptions, CLI output
/// (values replaced by `<redacted>`) and cache keys (values replaced by their SHA-256 digest, see
/// ``ImageRequest/sourceKey``).
///
/// Secrets are the user-info (`user:password@`) and the values of query (and fragment) items whose name,
/// percent-decoded and compared case-insensitively, is one of ``sensitiveNames`` or ends in one of them after a
/// `-`, `_` or `.` (`X-Amz-Signature`, `refresh_token`, `client_secret`). The rest of the text is kept byte for
/// byte (no re-encoding), so a URL without secrets is returned unchanged. Works on text, so it also cleans a
/// string that is not a valid URL. Pure functions, thread-safe.
package enum URLRedaction {
    /// Query item names whose values are secrets (lowercase).
    package static let sensitiveNames: Set<String> = [
        "token", "access_token", "key", "api_key", "apikey", "signature", "sig", "password", "secret", "auth",
    ]

    /// What replaces a secret value in text meant to be read.
    package static let placeholder = "<redacted>"

    /// `text` with its user-info removed and every sensitive item value replaced by `<redacted>`.
    package static func redacted(_ text: String) -> String {
        rewrite(text) { _ in placeholder }
    }

    /// `text` with its user-info removed and every sensitive item value replaced by `sha256-` and the value's
    /// SHA-256 digest in hex: as distinct as the values themselves, without them.
    package static func keyText(_ text: String) -> String {
        rewrite(text) { value in "sha256-" + SHA256.hash(String(value)).hex }
    }

    /// The user-info of `text` (`user:password`), or `nil` when it has none.
    package static func userInfo(in text: String) -> Substring? {
        guard let parts = split(Substring(text)), let at = parts.authority.lastIndex(of: "@") else { return nil }
        return parts.authority[..<at]
    }

    /// Whether a query item named `name` (as written, possibly percent-encoded) carries a secret.
    package static func isSensitive(_ name: Substring) -> Bool {
        if name.utf8.contains(UInt8(ascii: "%")) {
            let decoded = String(name).removingPercentEncoding ?? String(name)
            return isSensitiveDecoded(Substring(decoded))
        }
        return isSensitiveDecoded(name)
    }

    private static func isSensitiveDecoded(_ name: Substring) -> Bool {
        let bytes = name.utf8
        if matchesSensitiveName(bytes[...]) { return true }
        guard
            let separator = bytes.lastIndex(where: {
                $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: ".")
            })
        else { return false }
        return matchesSensitiveName(bytes[bytes.index(after: separator)...])
    }

    private static let sensitiveNameBytes: [[UInt8]] = sensitiveNames.map { Array($0.utf8) }

    /// ASCII case-insensitive comparison with ``sensitiveNames``, without allocating.
    private static func matchesSensitiveName(_ bytes: Substring.UTF8View.SubSequence) -> Bool {
        let count = bytes.count
        guard count >= 3, count <= 12 else { return false }
        return sensitiveNameBytes.contains { name in
            guard name.count == count else { return false }
            var i = 0
            for byte in bytes {
                let lowered = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
                if lowered != name[i] { return false }
                i += 1
            }
            return true
        }
    }

    /// `text` with user-info dropped and each sensitive value replaced by `replacement(value)`; `text` itself
    /// (no copy) when it holds no secret.
    static func rewrite(_ text: String, replacement: (Substring) -> String) -> String {
        // Fast path: nothing that could hold a secret.
        guard
            text.utf8.contains(where: { $0 == UInt8(ascii: "@") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") })
        else { return text }
        let whole = Substring(text)
        let parts = split(whole)
        let rest = parts?.rest ?? whole
        // rest: path ? query # fragment
        let hash = rest.firstIndex(of: "#")
        let beforeFragment = rest[..<(hash ?? rest.endIndex)]
        let question = beforeFragment.firstIndex(of: "?")
        let query = question.map { beforeFragment[beforeFragment.index(after: $0)...] }
        let fragment = hash.map { rest[rest.index(after: $0)...] }
        let userInfoEnd = parts?.authority.lastIndex(of: "@")
        // Look before building: most URLs with a query hold no secret and are returned as they are.
        guard userInfoEnd != nil || query.map(holdsSecret) == true || fragment.map(holdsSecret) == true else {
            return text
        }
        var out = ""
        out.reserveCapacity(text.utf8.count + 64)
        if let parts {
            out += parts.prefix
            out += userInfoEnd.map { parts.authority[parts.authority.index(after: $0)...] } ?? parts.authority
        }
        if let question, let query {
            out += beforeFragment[...question]
            appendItems(query, to: &out, replacement)
        } else {
            out += beforeFragment
        }
        if let fragment {
            out += "#"
            appendItems(fragment, to: &out, replacement)
        }
        return out
    }

    /// Whether some `name=value` item of `text` has a sensitive name and a non-empty value.
    private static func holdsSecret(_ text: Substring) -> Bool {
        text.split(separator: "&").contains { item in
            guard let equals = item.firstIndex(of: "="), item.index(after: equals) < item.endIndex else { return false }
            return isSensitive(item[..<equals])
        }
    }

    /// `scheme://` and the authority of `text`, and what follows; `nil` when `text` does not start with a scheme
    /// and `//`.
    private static func split(_ text: Substring) -> (prefix: Substring, authority: Substring, rest: Substring)? {
        guard let marker = text.range(of: "://"), !text[..<marker.lowerBound].isEmpty,
            text[..<marker.lowerBound].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) })
        else { return nil }
        let afterScheme = text[marker.upperBound...]
        let end = afterScheme.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? afterScheme.endIndex
        return (text[..<marker.upperBound], afterScheme[..<end], afterScheme[end...])
    }

    /// Appends `name=value&…` with sensitive values replaced.
    private static func appendItems(_ text: Substring, to out: inout String, _ replacement: (Substring) -> String) {
        var first = true
        for item in text.split(separator: "&", omittingEmptySubsequences: false) {
            if !first { out += "&" }
            first = false
            if let equals = item.firstIndex(of: "="), item.index(after: equals) < item.endIndex,
                isSensitive(item[..<equals])
            {
                out += item[...equals]
                out += replacement(item[item.index(after: equals)...])
            } else {
                out += item
            }
        }
    }
}
