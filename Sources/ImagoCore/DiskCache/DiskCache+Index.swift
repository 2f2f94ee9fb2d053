import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

// The shared index: snapshot + journal under flock, replay, compaction and rebuild from the files.
//
// Protocol between processes (and between DiskCache instances of one process, which behave the same way):
// - Every change to entry files or to the index (rename of a new entry, unlink of an evicted or removed one,
//   journal append, compaction) happens inside `exclusive`: the in-process `io` lock, then flock(LOCK_EX) on
//   `lock`. On entry, the process first catches up: if the journal is the one it knows, it replays the records
//   appended since its last offset; if the journal was replaced by a compaction (new inode or generation), it
//   reloads the snapshot and replays the new journal from its start. Then it appends its own pending records.
// - Byte 0 of `lock` is set to 1 for the duration of each mutation and reset after. A holder that finds it set
//   knows the previous holder died mid-mutation, so files and index may disagree: it walks `entries/` once and
//   reconciles (sizes from lstat, unknown files added, vanished ones dropped) and writes a fresh snapshot.
//
// What each process sees, and when:
// - Reads never take the flock: they open the entry file by its name. Entry files are immutable once renamed
//   into place (replaced only by another rename, removed only by unlink), so a read returns a whole entry as
//   some process stored it, or misses. A store by process A is readable by B as soon as A's rename is done
//   (right after A's `storeSynchronously` returns, or after A's background write / `flush()`), whether or not
//   B has replayed the journal yet.
// - B's index (size total, LRU order, `statistics`) learns of A's stores, removals and evictions the next time B
//   takes the lock: at each of B's writes/removals, `statistics`, `trim`, `verify`, and the lazy persistence of B's
//   reads (`accessPersistenceDelay`, default 1 s). B's reads of entries its index does not know yet still hit.
// - Reads (the LRU order) are appended to the journal lazily, so another process's eviction may not yet know of
//   a read from the last second; entries removed under a reader are misses, and the reader drops them from its
//   index.
// - The size limit is enforced at each write over the shared index, after catching up: the sum of all
//   processes' entries stays within it (it can exceed it only by files written by a process that died mid-write,
//   until the next write).

extension DiskCache {
    /// The disk-side state of this process: file descriptors and how far it has read the shared journal.
    struct IOState {
        var lockFD: Int32
        var procFD: Int32 = -1
        var journalFD: Int32 = -1
        var journalFile: DiskCacheDirectory.FileID?
        /// The generation of the snapshot this process's index is based on; nil: not loaded yet.
        var generation: UInt64?
        /// Bytes of the journal already applied (header included).
        var journalOffset = 0
        var isClosed = false

        init(lockFD: Int32) { self.lockFD = lockFD }

        mutating func closeJournal() {
            if journalFD >= 0 { diskCacheClose(journalFD) }
            journalFD = -1
            journalFile = nil
        }

        mutating func closeFiles() {
            closeJournal()
            if procFD >= 0 { diskCacheClose(procFD) }
            if lockFD >= 0 { diskCacheClose(lockFD) }
            procFD = -1
            lockFD = -1
        }
    }

    /// Runs `body` holding the in-process lock and the directory's flock, after catching up with the journal.
    func exclusive<R>(_ outbox: inout Outbox, _ body: (inout IOState, inout Outbox) throws -> R) throws -> R {
        try io.withLock { io in
            guard !io.isClosed else { throw Error.closed }
            if isDirectoryTreeGone() { try recreateDirectoryTree(&io, &outbox) }
            while flock(io.lockFD, LOCK_EX) != 0 {
                guard errno == EINTR else { throw Error.readFailed(path: layout.lockPath, errno: errno) }
            }
            defer { flock(io.lockFD, LOCK_UN) }
            try synchronize(&io, &outbox)
            setDirty(io.lockFD, true)
            // On a throw the flag stays set: the next holder reconciles whatever was half done.
            let result = try body(&io, &outbox)
            setDirty(io.lockFD, false)
            return result
        }
    }

    private func setDirty(_ fd: Int32, _ dirty: Bool) {
        var byte: UInt8 = dirty ? 1 : 0
        _ = pwrite(fd, &byte, 1, 0)
    }

    private func isDirty(_ fd: Int32) -> Bool {
        var byte: UInt8 = 0
        return pread(fd, &byte, 1, 0) == 1 && byte != 0
    }

    /// Brings this process's index up to date with the shared files, then appends its pending records.
    private func synchronize(_ io: inout IOState, _ outbox: inout Outbox) throws {
        var repair: String? = isDirty(io.lockFD) ? "a process died while changing the cache" : nil
        let current = DiskCacheDirectory.fileID(path: layout.journalPath)
        if current == nil || current != io.journalFile {
            io.closeJournal()
            io.generation = nil
            if current != nil {
                let fd = open(layout.journalPath, O_RDWR | O_APPEND | O_CLOEXEC)
                if fd >= 0 {
                    io.journalFD = fd
                    io.journalFile = DiskCacheDirectory.fileID(fd: fd)
                }
            }
        }
        let journalGeneration =
            io.journalFD < 0
            ? nil
            : DiskCacheDirectory.read(
                fd: io.journalFD, offset: 0, length: DiskCacheJournal.headerSize
            ).flatMap { bytes in bytes.withUnsafeBytes { DiskCacheJournal.parseJournalHeader($0) } }
        if io.generation == nil || journalGeneration != io.generation {
            try reload(&io, &outbox, journalGeneration: journalGeneration, repair: &repair)
        } else if replay(&io) {
            repair = repair ?? "the journal held damaged records"
        }
        if let repair { try rebuild(&io, &outbox, reason: repair, keepIndex: true) }
        let pending = state.withLock { state in
            defer { state.pending.removeAll() }
            return state.pending
        }
        guard !pending.isEmpty else { return }
        try append(&io, pending)
        state.withLock { state in
            for record in pending { DiskCacheJournal.apply(record, to: &state.index) }
        }
    }

    /// Loads the snapshot and the journal that belongs to it; rebuilds from the files when they are unusable.
    private func reload(
        _ io: inout IOState, _ outbox: inout Outbox, journalGeneration: UInt64?, repair: inout String?
    ) throws {
        let snapshot: (generation: UInt64, records: [DiskCacheIndex.Record], version: UInt32)
        switch DiskCacheDirectory.readFile(path: layout.indexPath) {
        case .failure(.missing):
            try rebuild(&io, &outbox, reason: "the index file is missing", keepIndex: false, base: journalGeneration)
            repair = nil
            return
        case .failure(.failed(let code)):
            throw Error.readFailed(path: layout.indexPath, errno: code)
        case .success(let bytes):
            switch bytes.withUnsafeBytes({ DiskCacheJournal.parseSnapshot($0) }) {
            case .failure(let corruption):
                try rebuild(
                    &io, &outbox, reason: "the index is damaged: \(corruption)", keepIndex: false,
                    base: journalGeneration)
                repair = nil
                return
            case .success(let parsed):
                snapshot = parsed
            }
        }
        var index = DiskCacheIndex()
        index.reserveCapacity(snapshot.records.count)
        for record in snapshot.records { index.put(record) }
        state.withLock { $0.index = index }
        io.generation = snapshot.generation
        if journalGeneration == snapshot.generation {
            io.journalOffset = DiskCacheJournal.headerSize
            if replay(&io) { repair = repair ?? "the journal held damaged records" }
        } else if let journalGeneration, journalGeneration < snapshot.generation {
            // A compaction stopped between renaming the snapshot and the new journal: the old journal's
            // records are all in the snapshot already.
            try resetJournal(&io, generation: snapshot.generation)
        } else {
            try resetJournal(&io, generation: snapshot.generation)
            repair = repair ?? "the journal is missing or damaged"
        }
        if snapshot.version == DiskCacheJournal.shardedVersion {
            // The index is good; the files are still in prefix folders: the walk of the rebuild moves them.
            repair = repair ?? "the cache is in format version 2 (entry files in prefix folders)"
        }
    }

    /// Applies the journal records appended since `io.journalOffset`; returns whether any were damaged.
    private func replay(_ io: inout IOState) -> Bool {
        var st = stat()
        guard io.journalFD >= 0, fstat(io.journalFD, &st) == 0 else { return true }
        let size = Int(st.st_size)
        guard size > io.journalOffset else { return size < io.journalOffset }
        guard
            let bytes = DiskCacheDirectory.read(
                fd: io.journalFD, offset: io.journalOffset, length: size - io.journalOffset)
        else { return true }
        let parsed = bytes.withUnsafeBytes { DiskCacheJournal.parseRecords($0) }
        if !parsed.records.isEmpty {
            state.withLock { state in
                for record in parsed.records { DiskCacheJournal.apply(record, to: &state.index) }
            }
        }
        // Under the flock nobody is midway through an append, so an incomplete tail is a dead process's.
        io.journalOffset = io.journalOffset + bytes.count
        return parsed.damaged || parsed.consumed < bytes.count
    }

    /// Appends `records` to the journal.
    func append(_ io: inout IOState, _ records: [DiskCacheJournal.Record]) throws {
        guard !records.isEmpty else { return }
        guard io.journalFD >= 0 else { throw Error.writeFailed(path: layout.journalPath, errno: EBADF) }
        let bytes = DiskCacheJournal.encode(records)
        let code = DiskCacheDirectory.writeAll(fd: io.journalFD, bytes)
        guard code == 0 else { throw Error.write(layout.journalPath, code) }
        io.journalOffset += bytes.count
    }

    /// Compacts when the journal has grown past the threshold (or past the index's size).
    func compactIfNeeded(_ io: inout IOState) throws {
        let records = (io.journalOffset - DiskCacheJournal.headerSize) / DiskCacheJournal.recordSize
        let entries = state.withLock { $0.index.count }
        if records > max(configuration.journalCompactionThreshold, entries) { try compact(&io) }
    }

    /// Writes the index as snapshot `generation + 1` and starts an empty journal of that generation.
    func compact(_ io: inout IOState, base: UInt64? = nil) throws {
        let generation = max(io.generation ?? 0, base ?? 0) &+ 1
        let records = state.withLock { $0.index.recordsInLRUOrder() }
        let bytes = DiskCacheJournal.encodeSnapshot(generation: generation, records: records)
        try replaceFile(layout.indexPath, with: bytes)
        io.generation = generation
        try resetJournal(&io, generation: generation)
    }

    /// Replaces the journal with an empty one of `generation` (by rename, so other processes notice).
    private func resetJournal(_ io: inout IOState, generation: UInt64) throws {
        try replaceFile(layout.journalPath, with: DiskCacheJournal.encodeJournalHeader(generation: generation))
        io.closeJournal()
        let fd = open(layout.journalPath, O_RDWR | O_APPEND | O_CLOEXEC)
        guard fd >= 0 else { throw Error.readFailed(path: layout.journalPath, errno: errno) }
        io.journalFD = fd
        io.journalFile = DiskCacheDirectory.fileID(fd: fd)
        io.generation = generation
        io.journalOffset = DiskCacheJournal.headerSize
    }

    /// Writes `bytes` to a temporary file and renames it over `path`.
    private func replaceFile(_ path: String, with bytes: [UInt8]) throws {
        let sync = configuration.durability == .powerLoss
        let temp = nextTempPath()
        let code = bytes.withUnsafeBytes { DiskCacheDirectory.writeNewFile(path: temp, parts: [$0], sync: sync) }
        guard code == 0 else { throw Error.write(path, code) }
        guard rename(temp, path) == 0 else {
            let code = errno
            unlink(temp)
            throw Error.write(path, code)
        }
        if sync { DiskCacheDirectory.syncDirectory(layout.root) }
    }

    func nextTempPath() -> String {
        let number = state.withLock { state in
            state.tempNumber += 1
            return state.tempNumber
        }
        return layout.tempPath(token: token, number: number)
    }
}

// close(2) under another name: inside DiskCache, `close` means DiskCache.close(). (Internal, used by +Recovery.)
@inline(__always) func diskCacheClose(_ fd: Int32) { _ = close(fd) }
