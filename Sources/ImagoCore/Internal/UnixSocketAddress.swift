#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The address of a Unix domain socket at a path, for the server that binds one (`imago serve --listen unix:`)
/// and the tests that connect to it.
package enum UnixSocketAddress {
    /// The longest path an address holds, in bytes: `sun_path` less its terminating NUL (107 on Linux).
    package static let maximumPathLength = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

    /// The address of `path`, or `nil` when its UTF-8 is longer than ``maximumPathLength``.
    package static func make(_ path: String) -> sockaddr_un? {
        let bytes = Array(path.utf8)
        guard bytes.count <= maximumPathLength else { return nil }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes + [0]) }
        return address
    }
}
