import Foundation

/// Which network addresses a loader may connect to: the guard against server-side request forgery (SSRF), where
/// a URL given by a user points the server at itself, its private network or a cloud metadata service.
///
/// A loader checks the policy against the address it actually connects to, for every connection and every
/// redirect hop, so DNS answers and redirects cannot get around it. The library's default is ``any``.
///
/// ```swift
/// var policy = AddressPolicy.publicOnly
/// policy.allowedHosts = ["images.internal"]            // a trusted internal host
/// policy.allowedNetworks = [IPNetwork("10.1.0.0/16")!]  // and a trusted private range
/// ```
public struct AddressPolicy: Sendable, Hashable {
    /// Which addresses are allowed before the allow lists are consulted.
    public enum Mode: Sendable, Hashable {
        /// Any address (the default).
        case any
        /// Only public addresses (``IPAddress/isPublic``).
        case publicOnly
    }

    /// The base rule. Default ``Mode/any``.
    public var mode: Mode
    /// Host names (lowercased, compared exactly) whose addresses are allowed whatever they are; a name in Unicode
    /// is kept in its IDNA form (`bücher.example` as `xn--bcher-kva.example`), the form loaders request. Default
    /// none.
    public var allowedHosts: Set<String> {
        didSet { allowedHosts = Self.normalized(allowedHosts) }
    }
    /// Address ranges allowed whatever the mode. Default none.
    public var allowedNetworks: [IPNetwork]

    /// A policy with `mode` and the allow lists (default empty).
    public init(mode: Mode, allowedHosts: Set<String> = [], allowedNetworks: [IPNetwork] = []) {
        self.mode = mode
        self.allowedHosts = Self.normalized(allowedHosts)
        self.allowedNetworks = allowedNetworks
    }

    private static func normalized(_ hosts: Set<String>) -> Set<String> {
        Set(hosts.map { HostName.asciiGlob($0.lowercased()) })
    }

    /// Every address allowed (the default).
    public static let any = AddressPolicy(mode: .any)
    /// Only public addresses: no loopback, private, carrier-grade NAT, link-local, multicast or unspecified
    /// address, in IPv4, IPv6 or IPv4-mapped IPv6 form.
    public static let publicOnly = AddressPolicy(mode: .publicOnly)

    /// Whether connecting to `address` for `host` (the URL's host name, or `nil` when unknown) is allowed.
    public func permits(_ address: IPAddress, host: String?) -> Bool {
        switch mode {
        case .any: return true
        case .publicOnly:
            if address.isPublic { return true }
            if let host, allowedHosts.contains(host.lowercased()) { return true }
            return allowedNetworks.contains { $0.contains(address) }
        }
    }
}

/// An address range in CIDR notation (`10.0.0.0/8`, `fd00::/8`).
public struct IPNetwork: Sendable, Hashable, CustomStringConvertible {
    /// The first address of the range.
    public let address: IPAddress
    /// The number of leading bits that are fixed.
    public let prefixLength: Int

    /// Parses `address/length`, or a single address (a full-length prefix); `nil` when malformed.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1)
        guard let first = parts.first, let address = IPAddress(String(first)) else { return nil }
        let maximum = address.bytes.count * 8
        let length = parts.count == 2 ? Int(parts[1]) : maximum
        guard let length, (0...maximum).contains(length) else { return nil }
        self.address = address
        prefixLength = length
    }

    /// Whether `candidate` lies in the range (an IPv4-mapped IPv6 address is compared as its IPv4 form).
    public func contains(_ candidate: IPAddress) -> Bool {
        var candidate = candidate
        if case .v4 = address, let v4 = candidate.embeddedIPv4 { candidate = .v4(v4) }
        let a = address.bytes
        let b = candidate.bytes
        guard a.count == b.count else { return false }
        var remaining = prefixLength
        for i in 0..<a.count where remaining > 0 {
            let bits = min(8, remaining)
            let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
            if a[i] & mask != b[i] & mask { return false }
            remaining -= bits
        }
        return true
    }

    /// `address/prefixLength`.
    public var description: String { "\(address)/\(prefixLength)" }
}
