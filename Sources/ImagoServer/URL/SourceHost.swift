import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A source URL's host as a resolver takes it: a DNS name of letters, digits, `-`, `_` and `.`, an IPv4 literal
/// or a bracketed IPv6 literal.
///
/// An international name, given in Unicode or percent-encoded UTF-8 (`b%C3%BCcher.example`), becomes its IDNA
/// form (`xn--bcher-kva.example`), as a browser and imgproxy's Go client send it. Any other character, and a
/// percent-escaped ASCII byte (`a%00.example`, `a%20b.example`), is the client's mistake: the URL is refused with
/// a 400 before a name is looked up, where it used to cost a DNS round trip and a 502 that blamed the origin.
enum SourceHost {
    /// `url`, its host in the form a resolver takes (see ``SourceHost``); throws ``ProxyError/invalidSource(_:)``
    /// naming the first character no host name has.
    static func checked(_ url: URL) throws(ProxyError) -> URL {
        guard let encoded = url.host(percentEncoded: true), !encoded.isEmpty else {
            throw .invalidSource("expected an absolute http or https URL")
        }
        if encoded.contains(":") {  // an IPv6 literal (URL drops its brackets); a zone (`%25eth0`) is refused too
            var address = in6_addr()
            guard inet_pton(AF_INET6, encoded, &address) == 1 else {
                throw .invalidSource("the host [\(encoded)] is not an IPv6 address")
            }
            return url
        }
        let decoded = url.host(percentEncoded: false) ?? encoded
        if let bad = decoded.unicodeScalars.first(where: { $0.isASCII && !isNameCharacter($0) }) {
            throw .invalidSource("the host \(encoded) holds \(shown(bad)), which no host name has")
        }
        guard encoded.unicodeScalars.contains(where: { $0 == "%" || !$0.isASCII }) else { return url }
        // An international name: put it back into the URL in Unicode, which URL turns into its IDNA form.
        let text = url.absoluteString
        guard let range = URLComponents(string: text)?.rangeOfHost,
            let international = URL(string: text.replacingCharacters(in: range, with: decoded)),
            let ascii = URL(string: international.absoluteString),
            let host = ascii.host(percentEncoded: true),
            host.unicodeScalars.allSatisfy({ $0.isASCII && isNameCharacter($0) })
        else {
            throw .invalidSource("the host \(encoded) is not a valid international domain name")
        }
        return ascii
    }

    /// `glob` (an ``SourcePolicy/allowedHosts`` entry) with each label in Unicode put in its IDNA form, so it matches
    /// the hosts ``checked(_:)`` gives; a label holding both `*` and non-ASCII letters is kept as written.
    static func asciiGlob(_ glob: String) -> String {
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

    private static func isNameCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9", "-", "_", ".": true
        default: false
        }
    }

    /// `'/'` for a printable character, `%00` for a control character or space.
    private static func shown(_ scalar: Unicode.Scalar) -> String {
        scalar.value > 0x20 && scalar.value < 0x7F
            ? "'\(scalar)'" : "%" + String(format: "%02X", scalar.value)
    }
}
