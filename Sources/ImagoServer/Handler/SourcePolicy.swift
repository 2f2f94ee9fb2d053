import Foundation
import ImagoCore

/// Which sources the proxy fetches: URLs starting with one of ``allowedSources`` (none: any), hosts matching an allow
/// list of globs (none: any host), and only public addresses (and those in ``allowedNetworks``) unless
/// ``allowsPrivateAddresses``.
///
/// This check sees the URL as given. Redirects and host names that resolve to private addresses can only be
/// refused by the loader that connects (the libcurl loader's address policy): give the proxy such a loader, set
/// to public addresses only (``AddressPolicy/allowedNetworks`` being ``allowedNetworks``) unless
/// ``allowsPrivateAddresses`` (`imago serve` does this in one place, `ServeCommand.makeSourceLoader`).
public struct SourcePolicy: Sendable, Hashable {
    /// Host globs (`*` matches any run of characters, case-insensitive), e.g. `*.example.com`; an object store's
    /// source's host is its bucket (`s3:`) or container (`abs:`). An international name may be written in
    /// Unicode (`*.bücher.example`): it is kept in its IDNA form, as source hosts are. Default none: any host.
    public var allowedHosts: [String] {
        didSet { allowedHosts = allowedHosts.map(HostName.asciiGlob) }
    }
    /// Whether loopback, private, link-local and unspecified addresses (and `localhost`) may be fetched. Default
    /// `false`.
    public var allowsPrivateAddresses: Bool
    /// Address ranges allowed although not public, e.g. `10.0.0.0/8` for origins inside a private network, while
    /// loopback, link-local (the cloud metadata address `169.254.169.254`) and other private ranges stay refused
    /// (imgproxy's separate `IMGPROXY_ALLOW_PRIVATE_SOURCE_ADDRESSES`, `…_LOOPBACK_…` and `…_LINK_LOCAL_…`).
    /// Default none.
    public var allowedNetworks: [IPNetwork] = []
    /// URL prefixes a source must start with, as imgproxy's `IMGPROXY_ALLOWED_SOURCES`, e.g.
    /// `https://cdn.example.com/images/` or `local:///public/`; `*` matches any run of characters but `/`. They
    /// are matched against the URL without user info, its path's `.` and `..` segments resolved, and a prefix that
    /// ends inside the host is taken to end with `/` (so `https://cdn.example.com` never admits
    /// `https://cdn.example.com.evil.example/`). With prefixes, a path with a `..` segment (also percent-encoded)
    /// is refused.
    /// They apply to `local:` sources too. Default none: any URL the other rules allow.
    public var allowedSources: [String]

    /// URL prefixes a source must not start with, whatever the other rules allow, as imgproxy 4's
    /// `IMGPROXY_S3_DENIED_BUCKETS` (and `ABS`, `GCS`, `SWIFT`) for buckets, e.g. `s3://private-bucket/`, or any
    /// URL prefix (`https://cdn.example.com/internal/`). Matched as ``allowedSources`` are; with any, a path with a
    /// `..` segment (also percent-encoded) is refused, since it could climb into a denied folder. Default none.
    public var deniedSources: [String] = [] {
        didSet { deniedSources = deniedSources.map(Self.normalizedPrefix) }
    }

    /// A policy with the defaults listed on each property.
    public init(allowedHosts: [String] = [], allowsPrivateAddresses: Bool = false, allowedSources: [String] = []) {
        self.allowedHosts = allowedHosts.map(HostName.asciiGlob)
        self.allowsPrivateAddresses = allowsPrivateAddresses
        self.allowedSources = allowedSources.map(Self.normalizedPrefix)
    }

    /// Throws ``ProxyError/sourceNotAllowed(host:)`` unless `url` may be fetched (a `local:` URL is checked against
    /// ``allowedSources`` only: its files are confined by their loader).
    public func check(_ url: URL) throws(ProxyError) {
        let host = (url.host(percentEncoded: false) ?? "").lowercased()
        let named = host.isEmpty ? (url.scheme ?? "") : host
        if !allowedSources.isEmpty || !deniedSources.isEmpty {
            guard let text = Self.canonical(url),
                allowedSources.isEmpty
                    || allowedSources.contains(where: { Self.wildcard($0, matches: text, prefixOnly: true) }),
                !deniedSources.contains(where: { Self.wildcard($0, matches: text, prefixOnly: true) })
            else { throw .sourceNotAllowed(host: named) }
        }
        if url.scheme?.lowercased() == "local" { return }
        if !allowedHosts.isEmpty, !allowedHosts.contains(where: { Self.wildcard($0.lowercased(), matches: host) }) {
            throw .sourceNotAllowed(host: host)
        }
        // An object store's host is a bucket name, not an address: the endpoint's address is the loader's to check.
        let isHTTP = ["http", "https"].contains(url.scheme?.lowercased() ?? "")
        if !allowsPrivateAddresses, isHTTP, Self.isPrivate(host: host),
            !isInAllowedNetwork(host: host)
        {
            throw .sourceNotAllowed(host: host)
        }
    }

    /// Whether `host` is an address literal (or `localhost`, taken as `127.0.0.1`) in ``allowedNetworks``. Other
    /// spellings of an address (`127.1`) are not recognised, so they stay refused.
    private func isInAllowedNetwork(host: String) -> Bool {
        guard !allowedNetworks.isEmpty else { return false }
        var literal = host
        if literal.hasPrefix("[") && literal.hasSuffix("]") { literal = String(literal.dropFirst().dropLast()) }
        if literal == "localhost" || literal.hasSuffix(".localhost") { literal = "127.0.0.1" }
        guard let address = IPAddress(literal) else { return false }
        return allowedNetworks.contains { $0.contains(address) }
    }

    /// `url` as prefixes are matched against: `scheme://host[:port]` lowercased, without user info, then the path
    /// (percent-encoded, `.` segments resolved) and the query; `nil` when the path has a `..` segment, also once
    /// percent-decoded (an origin may decode `%2E%2E` or `%2F` and climb out of an allowed folder).
    static func canonical(_ url: URL) -> String? {
        guard let scheme = url.scheme?.lowercased() else { return nil }
        let segments = url.path(percentEncoded: false).split(separator: "/", omittingEmptySubsequences: false)
        guard !segments.contains("..") else { return nil }
        var text = scheme + "://" + (url.host(percentEncoded: true) ?? "").lowercased()
        if let port = url.port { text += ":\(port)" }
        text += url.standardized.path(percentEncoded: true)
        if let query = url.query(percentEncoded: true) { text += "?" + query }
        return text
    }

    /// `prefix` with a `/` added when it ends inside the host (`https://cdn.example.com` → `…com/`).
    static func normalizedPrefix(_ prefix: String) -> String {
        guard let schemeEnd = prefix.range(of: "://") else { return prefix }
        let afterScheme = prefix[schemeEnd.upperBound...]
        return afterScheme.contains("/") || afterScheme.isEmpty ? prefix : prefix + "/"
    }

    /// Whether `pattern`, where `*` matches any run of characters but `/`, matches all of `text` (host globs;
    /// hosts have no `/`) or, with `prefixOnly`, its start (URL prefixes). One pass per pattern byte over the
    /// positions of `text`, so the work is bounded by their product whatever the stars.
    static func wildcard(_ pattern: String, matches text: String, prefixOnly: Bool = false) -> Bool {
        let t = Array(text.utf8)
        // reachable[j]: the pattern read so far matches the first j bytes of `text`.
        var reachable = [Bool](repeating: false, count: t.count + 1)
        reachable[0] = true
        for byte in pattern.utf8 {
            var next = [Bool](repeating: false, count: t.count + 1)
            if byte == UInt8(ascii: "*") {
                var run = false
                for j in 0...t.count {
                    run = run || reachable[j]
                    next[j] = run
                    if j < t.count, t[j] == UInt8(ascii: "/") { run = false }
                }
            } else {
                for j in 0..<t.count where reachable[j] && t[j] == byte { next[j + 1] = true }
            }
            reachable = next
            guard reachable.contains(true) else { return false }
        }
        return prefixOnly ? reachable.contains(true) : reachable[t.count]
    }

    /// Whether `host` names a non-public address literally: `localhost`, IPv4 loopback, private, link-local,
    /// CGNAT or unspecified, or IPv6 loopback, unspecified, unique-local or link-local (and IPv4-mapped forms).
    static func isPrivate(host: String) -> Bool {
        var host = host
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host == "localhost" || host.hasSuffix(".localhost") { return true }
        if let v4 = ipv4(host) { return isPrivate(v4) }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, host, &v6) == 1 else { return false }
        let b = withUnsafeBytes(of: v6) { Array($0) }
        if b.allSatisfy({ $0 == 0 }) || (b[0..<15].allSatisfy { $0 == 0 } && b[15] == 1) { return true }
        if b[0] & 0xFE == 0xFC || (b[0] == 0xFE && b[1] & 0xC0 == 0x80) { return true }
        if b[0..<10].allSatisfy({ $0 == 0 }) && b[10] == 0xFF && b[11] == 0xFF {
            return isPrivate((b[12], b[13], b[14], b[15]))
        }
        return false
    }

    /// The address when `host` is an IPv4 literal in any form the resolver accepts (`127.1`, `2130706433`,
    /// `0x7f.0.0.1` are all loopback), so that no spelling slips past the check.
    private static func ipv4(_ host: String) -> (UInt8, UInt8, UInt8, UInt8)? {
        var v4 = in_addr()
        guard inet_aton(host, &v4) != 0 else { return nil }
        let b = withUnsafeBytes(of: v4) { Array($0) }
        return (b[0], b[1], b[2], b[3])
    }

    private static func isPrivate(_ a: (UInt8, UInt8, UInt8, UInt8)) -> Bool {
        switch (a.0, a.1) {
        case (0, _), (10, _), (127, _): true
        case (169, 254), (192, 168): true
        case (172, 16...31): true
        case (100, 64...127): true
        default: false
        }
    }
}
