import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Whole files read into memory with `read(2)`, never more than a limit: the one reader for the files Imago loads
/// or reads again and again (``FileDataLoader``'s `file:` URLs, AWS's shared config, the token files the cloud
/// credentials re-read at each refresh, cgroup and `/proc` files). Foundation's `Data(contentsOf:)` and `String(contentsOf:)` on Linux leak
/// 4 KiB for every file whose size reads as 0 (their zero-size path hands its buffer to an empty `Data`, which
/// never frees it), so an empty file loaded over and over grew the process without bound.
package enum FileContents {
    /// The bytes of the file at `path`: at most `limit + 1` of them, so that a file longer than `limit` shows as a
    /// count over it, whatever size it reports (`/proc` files report 0 and have contents). The buffer reserved is
    /// the reported size, bounded by the limit.
    ///
    /// - Throws: `POSIXError` with `open`'s or `read`'s `errno`.
    package static func bytes(atPath path: String, limit: Int) throws -> Data {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(descriptor) }
        let ceiling = limit < Int.max ? max(0, limit) + 1 : limit
        var status = stat()
        var data = Data()
        if fstat(descriptor, &status) == 0, status.st_size > 0 {
            data.reserveCapacity(min(Int(clamping: status.st_size), ceiling))
        }
        var chunk = [UInt8](repeating: 0, count: min(64 << 10, ceiling))
        while data.count < ceiling {
            let wanted = min(chunk.count, ceiling - data.count)
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, wanted) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            if count == 0 { break }
            data.append(contentsOf: chunk[0..<count])
        }
        return data
    }

    /// The file at `path` as UTF-8 text of at most `limit` bytes; `nil` when it cannot be read, is longer, or is not
    /// UTF-8.
    package static func text(atPath path: String, limit: Int) -> String? {
        guard let data = try? bytes(atPath: path, limit: limit), data.count <= limit else { return nil }
        return String(validating: data, as: UTF8.self)
    }
}
