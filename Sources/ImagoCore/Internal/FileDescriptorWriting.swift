#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writing whole buffers to a file descriptor: the one loop the disk cache's journal, the CLI's console,
/// `imago serve`'s access log writer and the SVG renderer child's input share.
package enum FileDescriptorWriting {
    /// Writes all of `bytes` to `descriptor`, again after a signal or a partial write, and waiting for room on a
    /// descriptor someone made non-blocking. Returns 0 or the `errno` of the write that failed, and the bytes
    /// written before it.
    @discardableResult
    package static func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> (errno: Int32, written: Int) {
        guard let base = bytes.baseAddress else { return (0, 0) }
        var done = 0
        while done < bytes.count {
            let n = write(descriptor, base + done, bytes.count - done)
            if n < 0 {
                let code = errno
                if code == EINTR { continue }
                if code == EAGAIN || code == EWOULDBLOCK {
                    var room = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&room, 1, -1)
                    continue
                }
                return (code, done)
            }
            done += n
        }
        return (0, done)
    }
}
