import Foundation

/// Keeps secrets carried in URLs out of everything Imago writes down: logs, events, error descriptions, CLI output
/// (values replaced by `<redacted>`) and cache keys (values replaced by their SHA-256 digest, see
/// ``ImageRequest/sourceKey``).
///
/// Secrets are the user-info (`user:password@`) and the values of query (and fragment) items whose name,
/// percent-decoded and compared case-insensitively, is one of ``sensitiveNames`` or ends in one of them after a
/// `-`, `_` or `.` (`X-Amz-Signature`, `refresh_token`, `client_secret`). The rest of the text is kept byte for
/// byte (no re-encoding), so a URL without secrets is returned unchanged. Works on text, so it also cleans a
/// string that is not a valid URL. Scans UTF-8 bytes (a URL without secrets costs one pass and no allocation).
/// Pure functions, thread-safe.
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
        rewrite(text) { value in "sha256-" + SHA256.hash(value).hex }
    }

    /// The user-info of `text` (`user:password`), or `nil` when it has none.
    package static func userInfo(in text: String) -> String? {
        var copy = text
        return copy.withUTF8 { bytes in
            guard let authority = authority(bytes), let at = lastIndex(of: UInt8(ascii: "@"), in: bytes, authority)
            else { return nil }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[authority.lowerBound..<at]), as: UTF8.self)
        }
    }

    /// Whether a query item named `name` (as written, possibly percent-encoded) carries a secret.
    package static func isSensitive(_ name: String) -> Bool {
        var copy = name
        return copy.withUTF8 { isSensitive($0, 0..<$0.count) }
    }

    // MARK: - Scanning

    /// What to cut out of a text: the user-info (with its `@`) and the secret values, as byte ranges in order.
    private struct Cuts {
        var userInfo: Range<Int>?
        var values: [Range<Int>] = []
        var isEmpty: Bool { userInfo == nil && values.isEmpty }
    }

    /// `text` with user-info dropped and each sensitive value replaced by `replacement(value)`; `text` itself
    /// (no copy) when it holds no secret.
    static func rewrite(_ text: String, replacement: (String) -> String) -> String {
        var copy = text
        return copy.withUTF8 { bytes -> String in
            let cuts = findCuts(bytes)
            guard !cuts.isEmpty else { return text }
            func slice(_ range: Range<Int>) -> String {
                String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
            }
            var out = ""
            out.reserveCapacity(bytes.count + 64)
            var position = 0
            if let userInfo = cuts.userInfo {
                out += slice(0..<userInfo.lowerBound)
                position = userInfo.upperBound
            }
            for value in cuts.values {
                out += slice(position..<value.lowerBound)
                out += replacement(slice(value))
                position = value.upperBound
            }
            out += slice(position..<bytes.count)
            return out
        }
    }

    private static func findCuts(_ bytes: UnsafeBufferPointer<UInt8>) -> Cuts {
        var cuts = Cuts()
        let at = UInt8(ascii: "@")
        let question = UInt8(ascii: "?")
        let hash = UInt8(ascii: "#")
        // Fast path: nothing that could hold a secret.
        // (A plain loop: `contains(where:)` with a closure cost more; see BENCHMARKS.md, figures from comments.)
        var i = 0
        while i < bytes.count, bytes[i] != at, bytes[i] != question, bytes[i] != hash { i += 1 }
        guard i < bytes.count else { return cuts }
        var rest = 0
        if let authority = authority(bytes) {
            if let end = lastIndex(of: at, in: bytes, authority) { cuts.userInfo = authority.lowerBound..<(end + 1) }
            rest = authority.upperBound
        }
        let fragmentStart = firstIndex(of: hash, in: bytes, rest..<bytes.count)
        let queryEnd = fragmentStart ?? bytes.count
        if let queryStart = firstIndex(of: question, in: bytes, rest..<queryEnd) {
            findValues(bytes, (queryStart + 1)..<queryEnd, into: &cuts.values)
        }
        if let fragmentStart { findValues(bytes, (fragmentStart + 1)..<bytes.count, into: &cuts.values) }
        return cuts
    }

    /// The authority's byte range (after `scheme://`, up to the first `/`, `?` or `#`), or `nil` when `bytes`
    /// does not open with a scheme and `//`.
    private static func authority(_ bytes: UnsafeBufferPointer<UInt8>) -> Range<Int>? {
        var i = 0
        while i < bytes.count, isSchemeByte(bytes[i]) { i += 1 }
        guard i > 0, i + 3 <= bytes.count, bytes[i] == UInt8(ascii: ":"), bytes[i + 1] == UInt8(ascii: "/"),
            bytes[i + 2] == UInt8(ascii: "/")
        else { return nil }
        let start = i + 3
        var end = start
        while end < bytes.count, bytes[end] != UInt8(ascii: "/"), bytes[end] != UInt8(ascii: "?"),
            bytes[end] != UInt8(ascii: "#")
        {
            end += 1
        }
        return start..<end
    }

    private static func isSchemeByte(_ b: UInt8) -> Bool {
        (b | 0x20 >= UInt8(ascii: "a") && b | 0x20 <= UInt8(ascii: "z"))
            || (b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9"))
            || b == UInt8(ascii: "+") || b == UInt8(ascii: "-") || b == UInt8(ascii: ".")
    }

    /// Appends the ranges of the non-empty values of sensitive `name=value` items within `range` (`&`-separated).
    private static func findValues(
        _ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, into values: inout [Range<Int>]
    ) {
        var itemStart = range.lowerBound
        while itemStart <= range.upperBound {
            let itemEnd = firstIndex(of: UInt8(ascii: "&"), in: bytes, itemStart..<range.upperBound) ?? range.upperBound
            if let equals = firstIndex(of: UInt8(ascii: "="), in: bytes, itemStart..<itemEnd), equals + 1 < itemEnd,
                isSensitive(bytes, itemStart..<equals)
            {
                values.append((equals + 1)..<itemEnd)
            }
            itemStart = itemEnd + 1
        }
    }

    /// Whether the item name in `range` is sensitive (percent-decoded first when it holds a `%`).
    private static func isSensitive(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Bool {
        if firstIndex(of: UInt8(ascii: "%"), in: bytes, range) != nil {
            let raw = String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
            var decoded = raw.removingPercentEncoding ?? raw
            return decoded.withUTF8 { $0.firstIndex(of: UInt8(ascii: "%")) == nil && isSensitive($0, 0..<$0.count) }
        }
        if matchesSensitiveName(bytes, range) { return true }
        var separator = range.upperBound - 1
        while separator >= range.lowerBound {
            let b = bytes[separator]
            if b == UInt8(ascii: "-") || b == UInt8(ascii: "_") || b == UInt8(ascii: ".") {
                return matchesSensitiveName(bytes, (separator + 1)..<range.upperBound)
            }
            separator -= 1
        }
        return false
    }

    private static let sensitiveNameBytes: [[UInt8]] = sensitiveNames.map { Array($0.utf8) }

    /// ASCII case-insensitive comparison with ``sensitiveNames``.
    private static func matchesSensitiveName(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Bool {
        guard range.count >= 3, range.count <= 12 else { return false }
        return sensitiveNameBytes.contains { name in
            guard name.count == range.count else { return false }
            for (i, index) in range.enumerated() {
                let byte = bytes[index]
                let lowered = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
                if lowered != name[i] { return false }
            }
            return true
        }
    }

    private static func firstIndex(of byte: UInt8, in bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Int? {
        var i = range.lowerBound
        while i < range.upperBound {
            if bytes[i] == byte { return i }
            i += 1
        }
        return nil
    }

    private static func lastIndex(of byte: UInt8, in bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Int? {
        var i = range.upperBound - 1
        while i >= range.lowerBound {
            if bytes[i] == byte { return i }
            i -= 1
        }
        return nil
    }
}
