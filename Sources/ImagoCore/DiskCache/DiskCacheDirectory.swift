import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The files of a ``DiskCache`` directory and the POSIX calls on them. Layout:
/// ```
/// <root>/lock                 flock(2) target for index and journal mutations; byte 0 = "dirty" flag
/// <root>/index                snapshot of the index (see DiskCacheJournal)
/// <root>/journal              records appended since that snapshot, by every process
/// <root>/entries/<sha256>     one file per entry, named by the SHA-256 hex of its key, all in one folder
/// <root>/tmp/<token>.<n>.tmp  files being written, renamed into entries/ when complete
/// <root>/procs/<token>        one per open cache, flock-ed while open (so orphans of dead ones can be removed)
/// ```
/// Directories are created 0700 and files 0600. Names under `entries/` are hashes, so no key reaches a path.
///
/// `entries/` is flat, as in SDWebImage, Kingfisher and Nuke's DataCache: ext4, XFS and btrfs index large
/// directories (hashed B-trees), while a folder per hash prefix cost one more inode, one `mkdir` and one failed
/// `rename` for every prefix a cold cache meets. Format version 2 (``DiskCacheJournal``) kept entries in
/// `entries/ab/<sha256>`; ``walkEntries()`` moves such files into place and removes the prefix folders.
package struct DiskCacheDirectory: Sendable {
    package let root: String
    package var lockPath: String { root + "/lock" }
    package var indexPath: String { root + "/index" }
    package var journalPath: String { root + "/journal" }
    package var entriesPath: String { root + "/entries" }
    package var tmpPath: String { root + "/tmp" }
    package var procsPath: String { root + "/procs" }

    package init(root: String) { self.root = root }

    package func entryPath(_ digest: SHA256Digest) -> String {
        // Built in one allocation: this runs on every read.
        var root = root
        return root.withUTF8 { root in
            let prefix = "/entries/".utf8
            let length = root.count + prefix.count + 64
            return String(unsafeUninitializedCapacity: length) { out in
                var i = 0
                for byte in root {
                    out[i] = byte
                    i += 1
                }
                for byte in prefix {
                    out[i] = byte
                    i += 1
                }
                digest.writeHex(into: UnsafeMutableBufferPointer(rebasing: out[i..<(i + 64)]))
                return length
            }
        }
    }

    package func tempPath(token: String, number: UInt64) -> String { tmpPath + "/\(token).\(number).tmp" }

    /// Creates the root (with intermediate directories) and its subdirectories, 0700. Returns 0 or an errno
    /// with the path that failed.
    package func createDirectories() -> (path: String, errno: Int32)? {
        var prefix = root.hasPrefix("/") ? "" : "."
        for component in root.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, 0o700) != 0, errno != EEXIST { return (prefix, errno) }
        }
        for path in [entriesPath, tmpPath, procsPath] {
            if mkdir(path, 0o700) != 0, errno != EEXIST { return (path, errno) }
        }
        return nil
    }

    /// Identity of an open file (device and inode), to tell whether a path still names the file that was read.
    package struct FileID: Hashable, Sendable {
        var device: UInt64
        var inode: UInt64

        init(_ st: stat) {
            device = UInt64(st.st_dev)
            inode = UInt64(st.st_ino)
        }
    }

    /// One version of a file: replacing it (a rename over it), truncating it or writing into it changes the
    /// stamp (inode, size, or the nanosecond modification and status-change times).
    package struct FileStamp: Hashable, Sendable {
        var file: FileID
        var size: Int64
        var modified: Int64
        var changed: Int64

        init(_ st: stat) {
            file = FileID(st)
            size = Int64(st.st_size)
            modified = Int64(st.st_mtim.tv_sec) &* 1_000_000_000 &+ Int64(st.st_mtim.tv_nsec)
            changed = Int64(st.st_ctim.tv_sec) &* 1_000_000_000 &+ Int64(st.st_ctim.tv_nsec)
        }
    }

    /// The identity of the file at `path` itself (`lstat`), or `nil` when it cannot be read.
    package static func fileID(path: String) -> FileID? { stamp(path: path)?.file }

    /// The stamp of the file at `path` itself (`lstat`), or `nil` when it cannot be read.
    package static func stamp(path: String) -> FileStamp? {
        var st = stat()
        guard lstat(path, &st) == 0 else { return nil }
        return FileStamp(st)
    }

    package static func fileID(fd: Int32) -> FileID? {
        var st = stat()
        guard fstat(fd, &st) == 0 else { return nil }
        return FileID(st)
    }

    /// The outcome of reading one entry file.
    package enum EntryRead {
        case missing
        case failed(errno: Int32)
        case corrupt(reason: String, file: FileID)
        case valid(DiskCacheEntryFile.Header, Data, file: FileID, stamp: FileStamp)
    }

    /// `O_NOATIME` on Linux (the generic value; Glibc's module does not export it), else 0. Entry reads use it:
    /// the cache keeps its own recency order, and without it a first read under `relatime` dirties the inode
    /// (a journal transaction, then a disk write) only to record an access time nobody reads.
    static var noAccessTime: Int32 {
        #if os(Linux)
            return 0o1_000_000
        #else
            return 0
        #endif
    }

    /// Reads and verifies the entry file at `path` with one open and one read of the whole file; the payload is
    /// returned without a copy. Files larger than `maxFileSize` are reported corrupt before any allocation.
    /// `isVerified` is asked (once, before reading) whether this version of the file was verified already; if
    /// so the payload checksum is skipped. Opened with ``noAccessTime`` (again without it where the kernel
    /// refuses it: a file owned by another user).
    package static func readEntry(
        at path: String, maxFileSize: Int, isVerified: (FileStamp) -> Bool = { _ in false }
    ) -> EntryRead {
        var fd = open(path, O_RDONLY | O_CLOEXEC | noAccessTime)
        if fd < 0, errno == EPERM, noAccessTime != 0 { fd = open(path, O_RDONLY | O_CLOEXEC) }
        guard fd >= 0 else {
            let code = errno
            return code == ENOENT || code == ENOTDIR ? .missing : .failed(errno: code)
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { return .failed(errno: errno) }
        let stamp = FileStamp(st)
        let file = stamp.file
        let verifiesPayload = !isVerified(stamp)
        let size = Int(st.st_size)
        guard size >= 0, size <= maxFileSize else {
            return .corrupt(reason: "\(size) bytes, larger than any entry can be", file: file)
        }
        guard let base = malloc(max(size, 1)) else { return .failed(errno: ENOMEM) }
        var done = 0
        while done < size {
            let n = posixRead(fd, base + done, size - done)
            if n < 0 {
                if errno == EINTR { continue }
                let code = errno
                free(base)
                return .failed(errno: code)
            }
            if n == 0 { break }
            done += n
        }
        switch DiskCacheEntryFile.parse(
            UnsafeRawBufferPointer(start: base, count: done), verifiesPayload: verifiesPayload || done != size)
        {
        case .failure(let corruption):
            free(base)
            return .corrupt(reason: corruption.description, file: file)
        case .success(let header):
            guard header.dataLength > 0 else {
                free(base)
                return .valid(header, Data(), file: file, stamp: stamp)
            }
            let offset = header.headerLength
            let data = Data(
                bytesNoCopy: base + offset, count: header.dataLength,
                deallocator: .custom { pointer, _ in free(pointer - offset) })
            return .valid(header, data, file: file, stamp: stamp)
        }
    }

    /// Writes `parts` to a new file at `path` (which must not exist), 0600, and fsyncs it when `sync`.
    /// Returns 0 or the errno of the first failure (the partial file is then removed).
    ///
    /// The parts go out in one `writev(2)` (more only after a short write), so a header and its payload cost one
    /// system call, not one each.
    package static func writeNewFile(path: String, parts: [UnsafeRawBufferPointer], sync: Bool) -> Int32 {
        var file: FileID?
        return writeNewFile(path: path, parts: parts, sync: sync, file: &file)
    }

    /// ``writeNewFile(path:parts:sync:)``, also setting `file` to the identity of the file written (when it
    /// succeeds), so that a caller can tell its own file from one that replaced it.
    package static func writeNewFile(
        path: String, parts: [UnsafeRawBufferPointer], sync: Bool, file: inout FileID?
    ) -> Int32 {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return errno }
        var failure = writeAll(fd: fd, parts)
        if failure == 0, sync, fsync(fd) != 0 { failure = errno }
        if failure == 0 { file = fileID(fd: fd) }
        if close(fd) != 0, failure == 0, errno != EINTR { failure = errno }
        if failure != 0 { unlink(path) }
        return failure
    }

    /// Writes all of `parts`, in order, to `fd` with `writev(2)`, resuming after short writes. Returns 0 or an
    /// errno.
    static func writeAll(fd: Int32, _ parts: [UnsafeRawBufferPointer]) -> Int32 {
        var vectors = parts.compactMap { part in
            part.isEmpty
                ? nil : iovec(iov_base: UnsafeMutableRawPointer(mutating: part.baseAddress), iov_len: part.count)
        }
        var first = 0
        while first < vectors.count {
            let written = vectors[first...].withUnsafeBufferPointer { pending in
                writev(fd, pending.baseAddress, Int32(min(pending.count, 1024)))  // IOV_MAX on Linux
            }
            if written < 0 {
                if errno == EINTR { continue }
                return errno
            }
            if written == 0 { return EIO }  // no progress on a regular file: do not spin
            // Skip the vectors written whole; advance into the first one written in part.
            var rest = written
            while first < vectors.count, rest >= vectors[first].iov_len {
                rest -= vectors[first].iov_len
                first += 1
            }
            if rest > 0 {
                vectors[first].iov_base = vectors[first].iov_base.map { $0 + rest }
                vectors[first].iov_len -= rest
            }
        }
        return 0
    }

    /// Appends all of `bytes` to `fd`. Returns 0 or an errno.
    package static func writeAll(fd: Int32, _ bytes: [UInt8]) -> Int32 {
        bytes.withUnsafeBytes { FileDescriptorWriting.writeAll(fd, $0).errno }
    }

    /// Reads `length` bytes at `offset` of `fd` (fewer at the end of the file).
    package static func read(fd: Int32, offset: Int, length: Int) -> [UInt8]? {
        guard length > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: length)
        var done = 0
        let ok = bytes.withUnsafeMutableBytes { buffer -> Bool in
            while done < length {
                let n = pread(fd, buffer.baseAddress! + done, length - done, off_t(offset + done))
                if n < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                if n == 0 { break }
                done += n
            }
            return true
        }
        guard ok else { return nil }
        if done < length { bytes.removeLast(length - done) }
        return bytes
    }

    /// The whole file at `path`, `.missing` when it does not exist.
    package static func readFile(path: String) -> Result<[UInt8], ReadFileError> {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failure(errno == ENOENT ? .missing : .failed(errno)) }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { return .failure(.failed(errno)) }
        guard let bytes = read(fd: fd, offset: 0, length: Int(st.st_size)) else { return .failure(.failed(errno)) }
        return .success(bytes)
    }

    package enum ReadFileError: Swift.Error, Equatable {
        case missing
        case failed(Int32)
    }

    /// fsync of a directory, so that a rename in it survives a power loss.
    package static func syncDirectory(_ path: String) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }

    /// The names in directory `path` (without "." and ".."); empty when it cannot be read.
    package static func names(in path: String) -> [String] {
        guard let dir = opendir(path) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: &entry.pointee.d_name) { pointer in
                pointer.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// One entry file found by a walk.
    package struct FoundFile: Sendable {
        package var digest: SHA256Digest
        package var size: UInt64
        /// Modification time, seconds since the reference date.
        package var modified: Double
    }

    /// Walks `entries/` once: every well-named regular file with its size and time (one lstat each). Anything
    /// else is removed (the count of those is returned): badly named files, and folders with what is in them,
    /// except the prefix folders of format version 2 (`entries/ab/`), whose entry files are first renamed into
    /// `entries/` (the count of those is returned too; a file already there wins over the old copy).
    package func walkEntries() -> (files: [FoundFile], removedStrays: Int, migrated: Int) {
        var files: [FoundFile] = []
        var strays = 0
        var migrated = 0
        var st = stat()
        for name in Self.names(in: entriesPath) {
            let path = entriesPath + "/" + name
            guard lstat(path, &st) == 0 else { continue }
            if (st.st_mode & S_IFMT) == S_IFDIR {
                if name.utf8.count == 2, name.utf8.allSatisfy(Self.isLowercaseHex) {
                    migrateShard(name, into: &files, migrated: &migrated, strays: &strays)
                } else {
                    strays += Self.removeTree(path)
                }
                continue
            }
            guard (st.st_mode & S_IFMT) == S_IFREG, let digest = SHA256Digest(hex: name), digest.hex == name else {
                strays += Self.removeTree(path)
                continue
            }
            files.append(FoundFile(digest: digest, st))
        }
        return (files, strays, migrated)
    }

    /// Moves the entry files of the version-2 prefix folder `entries/<shard>` into `entries/` and removes the
    /// folder. Renames are atomic, so a process killed midway leaves every entry in one place or the other, and
    /// the next walk finishes the move.
    private func migrateShard(
        _ shard: String, into files: inout [FoundFile], migrated: inout Int, strays: inout Int
    ) {
        let shardPath = entriesPath + "/" + shard
        var st = stat()
        for name in Self.names(in: shardPath) {
            let path = shardPath + "/" + name
            guard lstat(path, &st) == 0 else { continue }
            guard (st.st_mode & S_IFMT) == S_IFREG, let digest = SHA256Digest(hex: name), digest.hex == name,
                name.hasPrefix(shard)
            else {
                strays += Self.removeTree(path)
                continue
            }
            let target = entriesPath + "/" + name
            var existing = stat()
            if lstat(target, &existing) == 0 {
                if unlink(path) == 0 { strays += 1 }  // written in the flat layout meanwhile: newer
            } else if rename(path, target) == 0 {
                files.append(FoundFile(digest: digest, st))  // a rename keeps the inode, size and times
                migrated += 1
            }
        }
        rmdir(shardPath)
    }

    private static func isLowercaseHex(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
            || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "f"))
    }

    /// Removes `path` and, when it is a folder, what is in it (at most `depth` levels down), never following a
    /// symbolic link. Returns how many files and folders were removed.
    @discardableResult
    package static func removeTree(_ path: String, depth: Int = 8) -> Int {
        var st = stat()
        guard lstat(path, &st) == 0 else { return 0 }
        guard (st.st_mode & S_IFMT) == S_IFDIR else { return unlink(path) == 0 ? 1 : 0 }
        guard depth > 0 else { return 0 }
        var removed = 0
        for name in names(in: path) { removed += removeTree(path + "/" + name, depth: depth - 1) }
        return removed + (rmdir(path) == 0 ? 1 : 0)
    }
}

extension DiskCacheDirectory.FoundFile {
    init(digest: SHA256Digest, _ st: stat) {
        self.digest = digest
        size = UInt64(st.st_size)
        modified =
            Double(st.st_mtim.tv_sec) + Double(st.st_mtim.tv_nsec) / 1e9 - Date.timeIntervalBetween1970AndReferenceDate
    }
}

// read(2) under another name: inside DiskCacheDirectory, `read` means its own static method.
@inline(__always) private func posixRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(fd, buffer, count)
}
