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
        let decoded = (name.contains("%") ? String(name).removingPercentEncoding ?? String(name) : String(name))
            .lowercased()
        if sensitiveNames.contains(decoded) { return true }
        guard let separator = decoded.lastIndex(where: { $0 == "-" || $0 == "_" || $0 == "." }) else { return false }
        return sensitiveNames.contains(String(decoded[decoded.index(after: separator)...]))
    }

    /// `text` with user-info dropped and each sensitive value replaced by `replacement(value)`.
    static func rewrite(_ text: String, replacement: (Substring) -> String) -> String {
        // Fast path: nothing that could hold a secret.
        guard
            text.utf8.contains(where: { $0 == UInt8(ascii: "@") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") })
        else { return text }
        let whole = Substring(text)
        var out = ""
        var changed = false
        var rest = whole
        if let parts = split(whole) {
            out += parts.prefix
            if let at = parts.authority.lastIndex(of: "@") {
                out += parts.authority[parts.authority.index(after: at)...]
                changed = true
            } else {
                out += parts.authority
            }
            rest = parts.rest
        }
        // rest: path ? query # fragment
        let hash = rest.firstIndex(of: "#")
        let beforeFragment = rest[..<(hash ?? rest.endIndex)]
        if let question = beforeFragment.firstIndex(of: "?") {
            out += beforeFragment[...question]
            out += items(beforeFragment[beforeFragment.index(after: question)...], &changed, replacement)
        } else {
            out += beforeFragment
        }
        if let hash {
            out += "#"
            out += items(rest[rest.index(after: hash)...], &changed, replacement)
        }
        return changed ? out : text
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

    /// `name=value&…` with sensitive values replaced.
    private static func items(
        _ text: Substring, _ changed: inout Bool, _ replacement: (Substring) -> String
    )
        -> String
    {
        var out = ""
        var first = true
        for item in text.split(separator: "&", omittingEmptySubsequences: false) {
            if !first { out += "&" }
            first = false
            if let equals = item.firstIndex(of: "="), item.index(after: equals) < item.endIndex,
                isSensitive(item[..<equals])
            {
                out += item[...equals]
                out += replacement(item[item.index(after: equals)...])
                changed = true
            } else {
                out += item
            }
        }
        return out
    }
}
