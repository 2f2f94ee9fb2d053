import Foundation

/// A URL's host as a resolver takes it: a DNS name of letters, digits, `-`, `_` and `.`, an IPv4 literal, or a
/// bracketed IPv6 literal (with a zone of the same characters, `[fe80::1%25eth0]`).
///
/// An international name, given in Unicode or percent-encoded UTF-8 (`b%C3%BCcher.example`), becomes its IDNA form
/// (`xn--bcher-kva.example`), as browsers and Go's HTTP client send it. Any other character, and a percent-escaped
/// ASCII byte (`a%00.example`, `a%20b.example`), makes a URL no lookup can succeed for: the loaders refuse it with
/// ``DataLoadingError/invalidURL(url:reason:)`` and `imago serve` with a 400, before any lookup or retry.
package enum HostName {
    /// Why a host is refused, as a sentence naming it ("the host a%00.example holds %00, which no host name has").
    package struct Refusal: Error, Sendable {
        /// The sentence.
        package let reason: String
    }

    /// `url` with its host in the form a resolver takes (see ``HostName``); throws naming the first character no
    /// host name has. A URL whose host is plain ASCII comes back as it is, unparsed again.
    package static func resolvable(_ url: URL) throws(Refusal) -> URL {
        guard let encoded = url.host(percentEncoded: true), !encoded.isEmpty else {
            throw Refusal(reason: "the URL has no host")
        }
        if encoded.contains(":") {  // an IPv6 literal (URL drops its brackets)
            let (address, zone) = splitZone(encoded)
            let zoneIsValid = zone.map { !$0.isEmpty && $0.unicodeScalars.allSatisfy(isNameCharacter) } ?? true
            guard IPAddress(address) != nil, zoneIsValid else {
                throw Refusal(reason: "the host [\(encoded)] is not an IPv6 address")
            }
            return url
        }
        let decoded = encoded.contains("%") ? url.host(percentEncoded: false) ?? encoded : encoded
        if let bad = firstASCIIOutsideNames(in: decoded) {
            throw Refusal(reason: "the host \(encoded) holds \(bad), which no host name has")
        }
        guard encoded.unicodeScalars.contains(where: { $0 == "%" || !$0.isASCII }) else {
            try checkLabels(encoded)
            return url
        }
        // An international name: put it back into the URL in Unicode, which URL turns into its IDNA form.
        let text = url.absoluteString
        guard let range = URLComponents(string: text)?.rangeOfHost,
            let international = URL(string: text.replacingCharacters(in: range, with: decoded)),
            let ascii = URL(string: international.absoluteString),
            let host = ascii.host(percentEncoded: true),
            host.unicodeScalars.allSatisfy({ $0.isASCII && isNameCharacter($0) })
        else {
            throw Refusal(reason: "the host \(encoded) is not a valid international domain name")
        }
        try checkLabels(host)
        return ascii
    }

    /// Throws unless `host` (ASCII) is a name DNS can hold: no empty label but a final one (`example.com.`), none
    /// over 63 characters, at most 253 in all.
    private static func checkLabels(_ host: String) throws(Refusal) {
        let name = host.hasSuffix(".") ? host.utf8.dropLast() : host.utf8[...]
        guard name.count <= 253 else {
            throw Refusal(reason: "the host is \(name.count) characters long, over DNS's 253")
        }
        for label in name.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false) {
            if label.isEmpty { throw Refusal(reason: "the host \(host) has an empty label") }
            if label.count > 63 {
                throw Refusal(reason: "the host \(host) has a label of \(label.count) characters, over DNS's 63")
            }
        }
    }

    /// `glob` (a host allow list's entry, `*` for any run of characters) with each label in Unicode put in its
    /// IDNA form, so it matches the hosts ``resolvable(_:)`` gives; a label holding both `*` and non-ASCII letters
    /// is kept as written.
    package static func asciiGlob(_ glob: String) -> String {
        guard glob.unicodeScalars.contains(where: { !$0.isASCII }) else { return glob }
        let labels = glob.split(separator: ".", omittingEmptySubsequences: false).map { label -> Substring in
            guard label.unicodeScalars.contains(where: { !$0.isASCII }), !label.contains("*"),
                let host = URL(string: "http://\(label).invalid/")?.host(percentEncoded: false),
                host.hasSuffix(".invalid"), host.allSatisfy(\.isASCII)
            else { return label }
            return Substring(host.dropLast(".invalid".count))
        }
        return labels.joined(separator: ".")
    }

    /// An IPv6 host's address and its zone (after `%25`, or `%` as some parsers leave it; `nil` without one).
    private static func splitZone(_ host: String) -> (address: String, zone: Substring?) {
        guard let percent = host.firstIndex(of: "%") else { return (host, nil) }
        let zone = host[host.index(after: percent)...]
        return (String(host[..<percent]), zone.hasPrefix("25") ? zone.dropFirst(2) : zone)
    }

    /// The first ASCII character of `text` that no host name holds (one not a letter, digit, `-`, `_` or `.`), as
    /// `'!'`, or `%00` for a control character or a space; `nil` when there is none. Object stores' bucket and
    /// container names keep to the same characters.
    package static func firstASCIIOutsideNames(in text: String) -> String? {
        text.unicodeScalars.first(where: { $0.isASCII && !isNameCharacter($0) }).map(shown)
    }

    private static func isNameCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9", "-", "_", ".": true
        default: false
        }
    }

    /// `'/'` for a printable character, `%00` for a control character or space.
    private static func shown(_ scalar: Unicode.Scalar) -> String {
        scalar.value > 0x20 && scalar.value < 0x7F ? "'\(scalar)'" : "%" + String(format: "%02X", scalar.value)
    }
}
