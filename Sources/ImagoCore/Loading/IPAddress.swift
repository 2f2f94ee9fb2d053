import Foundation

/// An IPv4 or IPv6 address, parsed from text or from the bytes of a socket address, with the classification an
/// address policy needs (loopback, private, link-local …). Pure Swift: no resolver, no sockets.
///
/// ```swift
/// IPAddress("169.254.169.254")?.isPublic   // false: link-local (cloud metadata)
/// IPAddress("::ffff:10.0.0.1")?.isPublic    // false: the IPv4-mapped form of a private address
/// ```
public enum IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// An IPv4 address, most significant byte first (`127.0.0.1` is `0x7F00_0001`).
    case v4(UInt32)
    /// An IPv6 address as its 16 bytes in network order.
    case v6([UInt8])

    /// Parses dotted-quad IPv4 (`10.0.0.1`) or IPv6 text (`::1`, `fe80::1%eth0`, `[::1]`, `::ffff:1.2.3.4`);
    /// `nil` for anything else (host names included).
    public init?(_ text: String) {
        var text = Substring(text)
        if text.hasPrefix("["), text.hasSuffix("]") { text = text.dropFirst().dropLast() }
        if let percent = text.firstIndex(of: "%") { text = text[..<percent] }
        if let v4 = Self.parseV4(text) {
            self = .v4(v4)
        } else if let v6 = Self.parseV6(text) {
            self = .v6(v6)
        } else {
            return nil
        }
    }

    /// An address from raw bytes: 4 for IPv4, 16 for IPv6; `nil` for any other count.
    public init?(bytes: [UInt8]) {
        switch bytes.count {
        case 4: self = .v4(bytes.reduce(0) { $0 << 8 | UInt32($1) })
        case 16: self = .v6(bytes)
        default: return nil
        }
    }

    /// The address as its bytes in network order (4 or 16).
    public var bytes: [UInt8] {
        switch self {
        case .v4(let value): [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) }
        case .v6(let bytes): bytes
        }
    }

    /// The IPv4 address embedded in an IPv4-mapped (`::ffff:a.b.c.d`), IPv4-compatible (`::a.b.c.d`), NAT64
    /// (`64:ff9b::a.b.c.d`), 6to4 (`2002:AABB:CCDD::`) or ISATAP (`PREFIX:0:5efe:a.b.c.d`, RFC 5214; `200:5efe`
    /// too) IPv6 address; `nil` otherwise (and for IPv4 itself).
    public var embeddedIPv4: UInt32? {
        guard case .v6(let b) = self else { return nil }
        func v4(_ offset: Int) -> UInt32 { b[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) } }
        if b[0..<10].allSatisfy({ $0 == 0 }), b[10] == 0xFF, b[11] == 0xFF { return v4(12) }
        if b[0..<12].allSatisfy({ $0 == 0 }), v4(12) > 1 { return v4(12) }  // not :: or ::1
        if b[0] == 0x00, b[1] == 0x64, b[2] == 0xFF, b[3] == 0x9B, b[4..<12].allSatisfy({ $0 == 0 }) { return v4(12) }
        if b[0] == 0x20, b[1] == 0x02 { return v4(2) }
        if b[8] == 0x00 || b[8] == 0x02, b[9] == 0, b[10] == 0x5E, b[11] == 0xFE { return v4(12) }
        return nil
    }

    /// Whether the address is reachable on the public internet: not unspecified, loopback, private (RFC 1918),
    /// carrier-grade NAT (100.64/10), link-local (169.254/16, incl. cloud metadata 169.254.169.254), multicast,
    /// broadcast, reserved or documentation ranges, nor IPv6 loopback, unique-local (fc00::/7), link-local
    /// (fe80::/10), site-local, multicast, Teredo (2001::/32), local-use NAT64 (64:ff9b:1::/48), or an IPv6 form
    /// embedding any such IPv4 address (``embeddedIPv4``).
    public var isPublic: Bool {
        switch self {
        case .v4(let a): return Self.isPublicV4(a)
        case .v6(let b):
            if let v4 = embeddedIPv4 { return Self.isPublicV4(v4) }
            if b.allSatisfy({ $0 == 0 }) { return false }  // ::
            if b[0..<15].allSatisfy({ $0 == 0 }) && b[15] == 1 { return false }  // ::1
            if b[0] & 0xFE == 0xFC { return false }  // fc00::/7 unique local
            if b[0] == 0xFE && b[1] & 0xC0 == 0x80 { return false }  // fe80::/10 link-local
            if b[0] == 0xFE && b[1] & 0xC0 == 0xC0 { return false }  // fec0::/10 site-local (deprecated)
            if b[0] == 0xFF { return false }  // multicast
            if b[0] == 0x01 && b[1..<8].allSatisfy({ $0 == 0 }) { return false }  // 100::/64 discard
            if b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0D && b[3] == 0xB8 { return false }  // documentation
            if b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x00 && b[3] == 0x00 { return false }  // Teredo
            // 64:ff9b:1::/48, NAT64 for local use (RFC 8215): translators inside a network, never the internet
            if b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xFF && b[3] == 0x9B && b[4] == 0x00 && b[5] == 0x01 {
                return false
            }
            return true
        }
    }

    static func isPublicV4(_ a: UInt32) -> Bool {
        // (network, prefix length) of every range that is not the public internet
        let blocked: [(UInt32, UInt32)] = [
            (0x0000_0000, 8),  // 0/8 "this network", incl. 0.0.0.0
            (0x0A00_0000, 8),  // 10/8 private
            (0x6440_0000, 10),  // 100.64/10 carrier-grade NAT
            (0x7F00_0000, 8),  // 127/8 loopback
            (0xA9FE_0000, 16),  // 169.254/16 link-local, cloud metadata
            (0xAC10_0000, 12),  // 172.16/12 private
            (0xC000_0000, 24),  // 192.0.0/24 IETF protocol assignments
            (0xC000_0200, 24),  // 192.0.2/24 documentation
            (0xC058_6300, 24),  // 192.88.99/24 6to4 relay
            (0xC0A8_0000, 16),  // 192.168/16 private
            (0xC612_0000, 15),  // 198.18/15 benchmarking
            (0xC633_6400, 24),  // 198.51.100/24 documentation
            (0xCB00_7100, 24),  // 203.0.113/24 documentation
            (0xE000_0000, 4),  // 224/4 multicast
            (0xF000_0000, 4),  // 240/4 reserved, incl. 255.255.255.255
        ]
        return !blocked.contains { network, length in a >> (32 - length) == network >> (32 - length) }
    }

    /// The usual text form (`127.0.0.1`, `fe80:0:0:0:0:0:0:1`; IPv6 is written without `::` compression).
    public var description: String {
        switch self {
        case .v4: return bytes.map(String.init).joined(separator: ".")
        case .v6(let b):
            return stride(from: 0, to: 16, by: 2).map { String(UInt16(b[$0]) << 8 | UInt16(b[$0 + 1]), radix: 16) }
                .joined(separator: ":")
        }
    }

    private static func parseV4(_ text: Substring) -> UInt32? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var value: UInt32 = 0
        for part in parts {
            guard !part.isEmpty, part.count <= 3, part.allSatisfy(\.isASCII), let byte = UInt8(part) else { return nil }
            value = value << 8 | UInt32(byte)
        }
        return value
    }

    private static func parseV6(_ text: Substring) -> [UInt8]? {
        guard text.contains(":"), text.count <= 45 else { return nil }
        var head: [UInt16] = []
        var tail: [UInt16] = []
        var sawGap = false
        let halves = text.components(separatedBy: "::")
        guard halves.count <= 2 else { return nil }
        sawGap = halves.count == 2
        func groups(_ part: String, allowV4: Bool) -> [UInt16]? {
            if part.isEmpty { return [] }
            var out: [UInt16] = []
            let pieces = part.split(separator: ":", omittingEmptySubsequences: false)
            for (i, piece) in pieces.enumerated() {
                if i == pieces.count - 1, allowV4, piece.contains(".") {
                    guard let v4 = parseV4(piece) else { return nil }
                    out += [UInt16(v4 >> 16), UInt16(v4 & 0xFFFF)]
                } else {
                    guard (1...4).contains(piece.count), let group = UInt16(piece, radix: 16) else { return nil }
                    out.append(group)
                }
            }
            return out
        }
        guard let first = groups(halves[0], allowV4: !sawGap) else { return nil }
        head = first
        if sawGap {
            guard let second = groups(halves[1], allowV4: true) else { return nil }
            tail = second
            guard head.count + tail.count <= 7 else { return nil }
        } else {
            guard head.count == 8 else { return nil }
        }
        let all = head + [UInt16](repeating: 0, count: 8 - head.count - tail.count) + tail
        return all.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
    }
}
