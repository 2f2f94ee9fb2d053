import Foundation
import ImagoCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A stream connection to a server on this machine, by TCP to `127.0.0.1:port` (or `[::1]:port`) or by a Unix
/// domain socket, for tests that talk to a server byte by byte.
public enum LoopbackSocket {
    /// The connected socket's descriptor (the caller closes it), or the `errno` of the failed `socket` or
    /// `connect` as a `POSIXError`. `overIPv6`: to `::1` instead of `127.0.0.1` (default `false`).
    public static func connect(port: UInt16, overIPv6: Bool = false) throws(POSIXError) -> Int32 {
        if overIPv6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            address.sin6_addr = in6addr_loopback
            return try connect(AF_INET6, to: &address)
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return try connect(AF_INET, to: &address)
    }

    /// The descriptor of a connection to the Unix domain socket at `socketPath` (the caller closes it), or the
    /// `errno` of the failed `socket` or `connect` (`ENAMETOOLONG` for a path too long for an address).
    public static func connect(socketPath: String) throws(POSIXError) -> Int32 {
        guard var address = UnixSocketAddress.make(socketPath) else { throw POSIXError(.ENAMETOOLONG) }
        return try connect(AF_UNIX, to: &address)
    }

    private static func connect<Address>(_ family: Int32, to address: inout Address) throws(POSIXError) -> Int32 {
        let descriptor = socket(family, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<Address>.size))
            }
        }
        guard result == 0 else {
            let code = POSIXErrorCode(rawValue: errno) ?? .EIO
            close(descriptor)
            throw POSIXError(code)
        }
        return descriptor
    }
}
