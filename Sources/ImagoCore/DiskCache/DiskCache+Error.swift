import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

extension DiskCache {
    /// What went wrong in a ``DiskCache``. Thrown by `init`, `storeSynchronously` and the maintenance calls;
    /// passed to ``Configuration/onError`` for background writes.
    public enum Error: Swift.Error, Sendable, Hashable, CustomStringConvertible {
        /// The cache directory (or a file in it) could not be created or written.
        case directoryNotWritable(path: String, errno: Int32)
        /// The file system is full (ENOSPC or EDQUOT); the entry was not stored. Reads keep working.
        case diskFull(path: String)
        /// A write failed for another reason.
        case writeFailed(path: String, errno: Int32)
        /// A read of index, journal or entry failed with an I/O error other than "not found".
        case readFailed(path: String, errno: Int32)
        /// The index or journal was unreadable and has been rebuilt from the entry files.
        case indexRebuilt(path: String, reason: String)
        /// The entry was not stored because of its size or its metadata.
        case entryRejected(reason: String)
        /// The cache was closed; the call did nothing.
        case closed

        /// A sentence a person can act on.
        public var description: String {
            switch self {
            case .directoryNotWritable(let path, let errno):
                return "The disk cache directory \(path) is not writable (\(Self.message(errno))); "
                    + "check that it exists, its owner and its permissions."
            case .diskFull(let path):
                return "The disk holding \(path) is full; the entry was not stored. Free space or lower sizeLimit."
            case .writeFailed(let path, let errno):
                return "Writing \(path) failed (\(Self.message(errno)))."
            case .readFailed(let path, let errno):
                return "Reading \(path) failed (\(Self.message(errno)))."
            case .indexRebuilt(let path, let reason):
                return "The disk cache index in \(path) was unusable (\(reason)) and was rebuilt from the entry files."
            case .entryRejected(let reason):
                return "The entry was not stored: \(reason)."
            case .closed:
                return "The disk cache was closed; open a new DiskCache to use the directory again."
            }
        }

        static func message(_ code: Int32) -> String {
            "\(SystemReason.of(errno: code)), errno \(code)"
        }

        /// The error for a failed write of `path` with `code`: full disk or plain failure.
        static func write(_ path: String, _ code: Int32) -> Error {
            code == ENOSPC || code == EDQUOT ? .diskFull(path: path) : .writeFailed(path: path, errno: code)
        }
    }
}
