import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

// Recovery: rebuilding the index from the entry files (one walk), and removing what dead processes left behind.

extension DiskCache {
    /// Walks the entry files once and makes the index match them: known entries keep their LRU position and
    /// times (with the real size), unknown files are added by modification time, vanished ones dropped. Then
    /// writes a fresh snapshot. `keepIndex: false` starts from nothing (a lost or damaged index).
    func rebuild(
        _ io: inout IOState, _ outbox: inout Outbox, reason: String, keepIndex: Bool, base: UInt64? = nil
    ) throws {
        let walk = layout.walkEntries()
        let found = Dictionary(walk.files.map { ($0.digest, $0) }, uniquingKeysWith: { first, _ in first })
        let summary = state.withLock { state -> (count: Int, bytes: UInt64) in
            var index = DiskCacheIndex()
            index.reserveCapacity(found.count)
            if keepIndex {
                for var record in state.index.recordsInLRUOrder() {
                    guard let file = found[record.digest] else { continue }
                    record.size = file.size
                    index.put(record)
                }
            }
            for file in walk.files.sorted(by: { $0.modified < $1.modified })
            where index.record(for: file.digest) == nil {
                index.put(
                    .init(digest: file.digest, size: file.size, storedAt: file.modified, lastAccess: file.modified))
            }
            state.index = index
            return (index.count, index.totalBytes)
        }
        try compact(&io, base: base)
        let isNewCache = !keepIndex && walk.files.isEmpty && reason == "the index file is missing"
        guard !isNewCache else { return }
        let moved = walk.migrated > 0 ? ", \(walk.migrated) moved out of prefix folders" : ""
        let strays = walk.removedStrays > 0 ? ", \(walk.removedStrays) stray files removed" : ""
        outbox.logs.append(
            "DiskCache \(layout.root): \(reason); rebuilt the index from the files: \(summary.count) entries, "
                + "\(summary.bytes) bytes\(moved)\(strays)")
        if !keepIndex { outbox.errors.append(.indexRebuilt(path: layout.indexPath, reason: reason)) }
    }

    /// Registers this process (`procs/<token>`, flock-ed while open) and removes what dead ones left behind:
    /// their registrations and temporary files. Runs inside `exclusive`, so registrations cannot race.
    func registerAndRemoveLeftovers(_ io: inout IOState, _ outbox: inout Outbox) throws {
        let procPath = layout.procsPath + "/" + token
        let fd = open(procPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Error.directoryNotWritable(path: procPath, errno: errno) }
        flock(fd, LOCK_EX | LOCK_NB)
        io.procFD = fd
        var alive: Set<String> = [token]
        for name in DiskCacheDirectory.names(in: layout.procsPath) where name != token {
            let path = layout.procsPath + "/" + name
            let other = open(path, O_RDWR | O_CLOEXEC)
            guard other >= 0 else { continue }
            if flock(other, LOCK_EX | LOCK_NB) == 0 { unlink(path) } else { alive.insert(name) }
            diskCacheClose(other)
        }
        var removed = 0
        for name in DiskCacheDirectory.names(in: layout.tmpPath) {
            let owner = String(name.prefix(while: { $0 != "." }))
            if !alive.contains(owner), unlink(layout.tmpPath + "/" + name) == 0 { removed += 1 }
        }
        if removed > 0 {
            outbox.logs.append("DiskCache \(layout.root): removed \(removed) temporary files of ended processes")
        }
    }
}
