import Foundation
import Imago

#if canImport(Glibc)
    import Glibc
    private let systemRead = Glibc.read
#elseif canImport(Darwin)
    import Darwin
    private let systemRead = Darwin.read
#endif

/// A file named on the command line, read whole: `-` is standard input, as in most Unix tools
/// (`curl -s URL | imago decode -`).
///
/// Each way a path can fail gets a sentence of its own (no such file, a directory, no permission, over the limit)
/// rather than Foundation's. A regular file is checked against the limit before it is read and then mapped (through
/// the descriptor that was checked); a pipe or a device is read in chunks up to the limit, so `/dev/zero` ends in an
/// error, not in all of memory.
struct InputFile {
    /// Why a file could not be read; ``description`` is the sentence a command prints after `cannot read 'PATH': `.
    enum Failure: Error, Equatable, CustomStringConvertible {
        /// Nothing exists at the path.
        case missing
        /// The path is a directory.
        case directory
        /// The file exists and cannot be opened or read (`reason` from the system: permission denied …).
        case unreadable(reason: String)
        /// The file holds more than `limit` bytes.
        case tooLarge(limit: Int)

        /// ``unreadable(reason:)`` with the system's sentence for `code` (an `errno` value).
        static func unreadable(errno code: Int32) -> Failure { .unreadable(reason: SystemReason.of(errno: code)) }

        var description: String {
            switch self {
            case .missing: "no such file"
            case .directory: "it is a directory (name the files in it, e.g. DIR/*)"
            case .unreadable(let reason): reason
            case .tooLarge(let limit): "it is larger than \(limit / (1 << 20)) MiB"
            }
        }
    }

    /// The most a file is read to: 1 GiB, past the decoders' own byte limits for any format.
    static let defaultLimit = 1 << 30

    /// The name of standard input on a command line.
    static let standardInputName = "-"

    /// The bytes of `path` (`-`: the file descriptor `standardInput`, default the process's), at most `limit`.
    static func read(
        _ path: String, limit: Int = defaultLimit, standardInput: Int32 = STDIN_FILENO
    ) throws(Failure) -> Data {
        if path == standardInputName { return try readStream(standardInput, limit: limit) }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            let code = errno
            throw code == ENOENT || code == ENOTDIR ? .missing : .unreadable(errno: code)
        }
        defer { close(descriptor) }
        var facts = stat()
        guard fstat(descriptor, &facts) == 0 else { throw .unreadable(errno: errno) }
        switch facts.st_mode & S_IFMT {
        case S_IFDIR: throw .directory
        case S_IFREG:
            guard Int(facts.st_size) <= limit else { throw .tooLarge(limit: limit) }
            return try mapped(descriptor, count: Int(facts.st_size))
        default:
            // A pipe, a socket or a device: read as a stream, blocking (O_NONBLOCK only kept open(2) from
            // waiting for a FIFO's writer).
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
            return try readStream(descriptor, limit: limit)
        }
    }

    /// The first `count` bytes of the regular file open as `descriptor`, mapped read-only: the file whose size was
    /// checked, not whatever the path names by the time a second open would run.
    private static func mapped(_ descriptor: Int32, count: Int) throws(Failure) -> Data {
        guard count > 0 else { return Data() }
        guard let address = mmap(nil, count, PROT_READ, MAP_PRIVATE, descriptor, 0), address != MAP_FAILED else {
            throw .unreadable(errno: errno)
        }
        return Data(
            bytesNoCopy: address, count: count,
            deallocator: .custom { address, count in
                munmap(address, count)
            })
    }

    /// `descriptor`'s bytes up to its end, failing once more than `limit` have come.
    private static func readStream(_ descriptor: Int32, limit: Int) throws(Failure) -> Data {
        var data = Data()
        let chunk = 1 << 16
        var buffer = [UInt8](repeating: 0, count: chunk)
        while true {
            let count = buffer.withUnsafeMutableBytes { systemRead(descriptor, $0.baseAddress, chunk) }
            if count == 0 { return data }
            if count < 0 {
                if errno == EINTR { continue }
                throw .unreadable(errno: errno)
            }
            guard data.count + count <= limit else { throw .tooLarge(limit: limit) }
            data.append(contentsOf: buffer[0..<count])
        }
    }
}
