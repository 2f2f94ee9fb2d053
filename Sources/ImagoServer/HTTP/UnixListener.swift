import Foundation
import ImagoCore

/// The listening Unix domain socket of a ``MicroHTTPServer`` started with a `socketPath`: made, bound and
/// listening here, then handed to libmicrohttpd, which accepts on it and closes it.
enum UnixListener {
    /// A socket bound to `path` and listening, and the inode of the file it made. A socket file nobody accepts on
    /// (its process is gone) is removed first; one in use, or anything that is not a socket, is an error.
    ///
    /// - Throws: ``MicroHTTPServer/Error/socketFailed(path:reason:)``.
    static func open(_ path: String, backlog: Int32) throws -> (descriptor: Int32, inode: ino_t) {
        func failure(_ reason: String) -> MicroHTTPServer.Error { .socketFailed(path: path, reason: reason) }
        guard !path.isEmpty, !path.utf8.contains(0) else { throw failure("the path is empty or holds a NUL byte") }
        guard var address = UnixSocketAddress.make(path) else {
            throw failure("the path is longer than \(UnixSocketAddress.maximumPathLength) bytes")
        }
        var status = stat()
        if lstat(path, &status) == 0 {
            guard status.st_mode & S_IFMT == S_IFSOCK else { throw failure("the file exists and is not a socket") }
            guard !accepts(&address) else { throw failure("another process is listening on it") }
            unlink(path)
        }
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw failure(SystemReason.of(errno: errno)) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0, listen(descriptor, backlog) == 0, lstat(path, &status) == 0 else {
            let reason = SystemReason.of(errno: errno)
            close(descriptor)
            throw failure(reason)
        }
        return (descriptor, status.st_ino)
    }

    /// Removes the socket file at `path` if it is still the one made (same inode): never another's.
    static func remove(_ path: String, inode: ino_t) {
        var status = stat()
        if lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFSOCK, status.st_ino == inode { unlink(path) }
    }

    /// Whether a process accepts connections on the socket at `address`.
    private static func accepts(_ address: inout sockaddr_un) -> Bool {
        let probe = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard probe >= 0 else { return false }
        defer { close(probe) }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(probe, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
            }
        }
    }
}
