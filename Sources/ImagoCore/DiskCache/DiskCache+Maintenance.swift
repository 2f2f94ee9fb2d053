import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

extension DiskCache {
    /// What a cache holds and how it has been used by this process.
    public struct Statistics: Sendable, Hashable {
        /// Entries on disk, per the shared index (staged writes not included).
        public var entryCount: Int
        /// Bytes of the entry files (headers included) on disk, per the shared index.
        public var totalBytes: Int
        /// The earliest `storedAt` among the entries, `nil` when empty.
        public var oldestStoredAt: Date?
        /// The latest `storedAt` among the entries, `nil` when empty.
        public var newestStoredAt: Date?
        /// Reads of this `DiskCache` object that found an entry.
        public var hits: Int
        /// Reads of this `DiskCache` object that found none.
        public var misses: Int
        /// Background or synchronous writes of this object that failed.
        public var writeErrors: Int
        /// Damaged entry files this object found and removed.
        public var corruptEntriesRemoved: Int
        /// Writes staged in memory, not yet on disk.
        public var stagedWrites: Int

        /// hits / (hits + misses), or 0 before any read.
        public var hitRatio: Double { hits + misses == 0 ? 0 : Double(hits) / Double(hits + misses) }
    }

    /// What ``DiskCache/verify()`` found.
    public struct VerifyReport: Sendable, Hashable {
        /// Entry files read and checked.
        public var checked: Int
        /// Files that were damaged (bad checksum, truncated, wrong name for their key).
        public var corrupt: Int
        /// Damaged files removed (all of them, unless another process replaced one meanwhile).
        public var removed: Int
    }

    /// The current statistics, after catching up with what other processes appended to the journal (a read of
    /// the journal's tail, under the cache's lock).
    public var statistics: Statistics {
        var outbox = Outbox()
        _ = try? exclusive(&outbox) { _, _ in }
        deliver(outbox)
        return state.withLock { state in
            var oldest: Double?
            var newest: Double?
            for record in state.index.recordsInLRUOrder() {
                oldest = min(oldest ?? record.storedAt, record.storedAt)
                newest = max(newest ?? record.storedAt, record.storedAt)
            }
            return Statistics(
                entryCount: state.index.count, totalBytes: Int(clamping: state.index.totalBytes),
                oldestStoredAt: oldest.map { Date(timeIntervalSinceReferenceDate: $0) },
                newestStoredAt: newest.map { Date(timeIntervalSinceReferenceDate: $0) }, hits: state.hits,
                misses: state.misses, writeErrors: state.writeErrors, corruptEntriesRemoved: state.corruptRemoved,
                stagedWrites: state.staged.count)
        }
    }

    /// Flushes staged writes, then evicts least recently used entries (and any past `maxAge`) until the
    /// entries take at most `size` bytes. Returns how many were removed.
    @discardableResult
    public func trim(toSize size: Int) throws -> Int {
        flush()
        var outbox = Outbox()
        defer { deliver(outbox) }
        return try exclusive(&outbox) { io, _ in
            let removed = evict(now: configuration.clock(), toSize: UInt64(max(size, 0)))
            try append(&io, removed)
            return removed.count
        }
    }

    /// Flushes staged writes, then reads every entry file and checks it (header, lengths, checksums, name
    /// matching its key), removes the damaged ones and makes the index match the files. The files found good
    /// are sealed for this boot, so no process reads them with the payload checksum again until a restart.
    public func verify() throws -> VerifyReport {
        flush()
        var report = VerifyReport(checked: 0, corrupt: 0, removed: 0)
        var seals: [(SHA256Digest, UInt64)] = []
        for file in layout.walkEntries().files {
            let path = layout.entryPath(file.digest)
            switch DiskCacheDirectory.readEntry(at: path, maxFileSize: maxEntryFileSize) {
            case .missing:
                continue
            case .failed(let code):
                throw Error.readFailed(path: path, errno: code)
            case .valid(let header, _, let id, let stamp):
                report.checked += 1
                if SHA256.hash(header.key) != file.digest {
                    report.corrupt += 1
                    if removeCorrupt(file.digest, file: id, reason: "stored under the name of another key") {
                        report.removed += 1
                    }
                } else if let seal = seal(of: stamp) {
                    seals.append((file.digest, seal))
                }
            case .corrupt(let reason, let id):
                report.checked += 1
                report.corrupt += 1
                if removeCorrupt(file.digest, file: id, reason: reason) { report.removed += 1 }
            }
        }
        var outbox = Outbox()
        defer { deliver(outbox) }
        try exclusive(&outbox) { io, outbox in
            // A seal names one file version: one replaced since it was read here keeps its checksum pass.
            state.withLock { state in
                for (digest, seal) in seals { state.index.seal(digest, seal) }
            }
            // Written into the snapshot, with the index the files are matched against.
            try rebuild(&io, &outbox, reason: "verify checked \(report.checked) files", keepIndex: true)
        }
        return report
    }

    /// Removes every entry file (of every process) and empties the index; throws when the directory cannot
    /// be changed.
    public func removeAllSynchronously() throws {
        var outbox = Outbox()
        defer { deliver(outbox) }
        try onQueue {
            state.withLock { state in
                state.staged.removeAll()
                state.stagedBytes = 0
                state.pending.removeAll()
            }
            try exclusive(&outbox) { io, _ in
                for file in layout.walkEntries().files { unlink(layout.entryPath(file.digest)) }
                verifiedFiles.withLock { $0.removeAll() }
                state.withLock { $0.index.removeAll() }
                try compact(&io)
            }
        }
    }
}
