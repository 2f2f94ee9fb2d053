import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

// The cache directory removed while the cache is open (a user, systemd-tmpfiles, a cleaner of ~/.cache): every
// file descriptor still names the unlinked files, and every path fails with ENOENT. The next mutation notices
// that the lock file is gone, recreates the tree and starts over with an empty index, as a first open would:
// nothing of the old tree survives, so the size reads 0 and there is nothing to report.

extension DiskCache {
    /// Whether the lock file's path is gone (ENOENT on it or on a parent): the tree was removed under us.
    func isDirectoryTreeGone() -> Bool {
        if access(layout.lockPath, F_OK) == 0 { return false }
        let code = errno
        return code == ENOENT || code == ENOTDIR
    }

    /// Recreates the directory tree, reopens the lock file, registers this process again and empties the index
    /// (the journal and snapshot are made by the next `synchronize`, as on a first open). Runs holding `io`,
    /// before the flock is taken.
    func recreateDirectoryTree(_ io: inout IOState, _ outbox: inout Outbox) throws {
        if let failure = layout.createDirectories() {
            throw Error.directoryNotWritable(path: failure.path, errno: failure.errno)
        }
        let lockFD = open(layout.lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard lockFD >= 0 else { throw Error.directoryNotWritable(path: layout.lockPath, errno: errno) }
        io.closeFiles()
        io.lockFD = lockFD
        io.generation = nil
        io.journalOffset = 0
        state.withLock { state in
            state.index = DiskCacheIndex()
            state.pending.removeAll()
        }
        verifiedFiles.withLock { $0.removeAll() }
        while flock(io.lockFD, LOCK_EX) != 0 {
            guard errno == EINTR else { throw Error.readFailed(path: layout.lockPath, errno: errno) }
        }
        defer { flock(io.lockFD, LOCK_UN) }
        try registerAndRemoveLeftovers(&io, &outbox)
        outbox.logs.append("DiskCache \(layout.root): the directory was removed while open; recreated it, empty")
    }
}
