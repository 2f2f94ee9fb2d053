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
            if journalFD >= 0 { posixClose(journalFD) }
            journalFD = -1
            journalFile = nil
        }

        mutating func closeFiles() {
            closeJournal()
            if procFD >= 0 { posixClose(procFD) }
            if lockFD >= 0 { posixClose(lockFD) }
            procFD = -1
            lockFD = -1
        }
    }

    /// Runs `body` holding the in-process lock and the directory's flock, after catching up with the journal.
    func exclusive<R>(_ outbox: inout Outbox, _ body: (inout IOState, inout Outbox) throws -> R) throws -> R {
        try io.withLock { io in
            guard !io.isClosed else { throw Error.closed }
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
        let snapshot: (generation: UInt64, records: [DiskCacheIndex.Record])
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
        outbox.logs.append(
            "DiskCache \(layout.root): \(reason); rebuilt the index from the files: \(summary.count) entries, "
                + "\(summary.bytes) bytes\(walk.removedStrays > 0 ? ", \(walk.removedStrays) stray files removed" : "")"
        )
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
            posixClose(other)
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
