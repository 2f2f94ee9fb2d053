import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP socket listening on 127.0.0.1 at a port the kernel chooses: how the test servers (``LoopbackServer``, the
/// Redis tests' scripted server) open theirs.
public enum LoopbackListener {
    /// Opens the socket (close-on-exec, `SO_REUSEADDR`), binds it to 127.0.0.1 port 0 and listens with `backlog`.
    ///
    /// - Returns: the listening descriptor (the caller closes it) and the port the kernel gave it.
    /// - Throws: ``LoopbackServer/Error/socketCallFailed(call:errno:)`` naming the call that failed (nothing is
    ///   left open then).
    public static func open(backlog: Int32) throws -> (descriptor: Int32, port: UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw LoopbackServer.Error.socketCallFailed(call: "socket", errno: errno) }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        let failedCall: String?
        if bound != 0 {
            failedCall = "bind"
        } else if listen(fd, backlog) != 0 {
            failedCall = "listen"
        } else {
            let named = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
            failedCall = named == 0 ? nil : "getsockname"
        }
        if let failedCall {
            let code = errno
            close(fd)
            throw LoopbackServer.Error.socketCallFailed(call: failedCall, errno: code)
        }
        return (fd, UInt16(bigEndian: address.sin_port))
    }
}
