import Foundation

/// Host patterns as the request signings name the hosts they sign for: `host` (any port), `host:port`, or
/// `*.domain` (any name below `domain`, not `domain` itself), compared without case.
package enum HostPatterns {
    /// Whether an http or https `url`'s host (or `host:port`, the scheme's default port filled in) matches one of
    /// `patterns`.
    static func match(_ patterns: [String], _ url: URL) -> Bool {
        guard let (host, port) = hostAndPort(of: url) else { return false }
        return patterns.contains { pattern in
            let pattern = pattern.lowercased()
            if pattern.hasPrefix("*.") { return host.hasSuffix(pattern.dropFirst()) }
            return pattern == host || pattern == "\(host):\(port)"
        }
    }

    /// The host of an http or https `url`, lowercased, and its port, the scheme's default (443, 80) filled in;
    /// `nil` for another scheme or no host. What a `host:port` pattern names.
    package static func hostAndPort(of url: URL) -> (host: String, port: Int)? {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = url.host(percentEncoded: false)?.lowercased(), !host.isEmpty
        else { return nil }
        return (host, url.port ?? (scheme == "https" ? 443 : 80))
    }
}
