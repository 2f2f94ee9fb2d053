import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

// Writing, removing and evicting entry files. Each entry is written whole to tmp/ outside the lock (the slow
// part), then renamed into entries/ and recorded in the journal inside `exclusive`, so files and index change
// together as far as any other process can see.

extension DiskCache {
    /// Writes one entry: temporary file, then rename + journal + eviction under the lock.
    func writeEntry(
        key: String, digest: SHA256Digest, data: Data, metadata: DataCacheMetadata, _ outbox: inout Outbox
    ) throws {
        guard data.count <= configuration.sizeLimit else {
            throw Error.entryRejected(
                reason: "its \(data.count) bytes exceed the size limit of \(configuration.sizeLimit) bytes")
        }
        let now = configuration.clock()
        let checksum = data.withUnsafeBytes { LaneChecksum.hash($0) }
        let header = try DiskCacheEntryFile.encodeHeader(
            key: key, dataLength: data.count, dataChecksum: checksum, metadata: metadata, lastAccess: now
        ).get()
        let fileSize = UInt64(header.count + data.count)
        let temp = nextTempPath()
        if let code = configuration.writeFault?() { throw Error.write(temp, code) }
        let sync = configuration.durability == .powerLoss
        var written: DiskCacheDirectory.FileID?
        func writeTemp() -> Int32 {
            header.withUnsafeBytes { head in
                data.withUnsafeBytes { body in
                    DiskCacheDirectory.writeNewFile(path: temp, parts: [head, body], sync: sync, file: &written)
                }
            }
        }
        var code = writeTemp()
        if code == ENOENT, isDirectoryTreeGone() {
            // The directory was removed while open: `exclusive` recreates it, then the write is tried again.
            try exclusive(&outbox) { _, _ in }
            code = writeTemp()
        }
        guard code == 0 else { throw Error.write(temp, code) }
        do {
            try exclusive(&outbox) { io, _ in
                let path = layout.entryPath(digest)
                if rename(temp, path) != 0 {
                    var code = errno
                    if code == ENOENT {  // entries/ alone removed (the whole tree is recreated by `exclusive`)
                        mkdir(layout.entriesPath, 0o700)
                        code = rename(temp, path) == 0 ? 0 : errno
                    }
                    guard code == 0 else { throw Error.write(path, code) }
                }
                let seal = rememberOwnWrite(digest, path: path, file: written)
                if sync { DiskCacheDirectory.syncDirectory(layout.entriesPath) }
                let record = DiskCacheIndex.Record(
                    digest: digest, size: fileSize, storedAt: metadata.storedAt.timeIntervalSinceReferenceDate,
                    lastAccess: now, seal: seal)
                state.withLock { $0.index.put(record) }
                try append(&io, [DiskCacheJournal.Record(.put, record)] + evict(now: now, toSize: nil))
                try compactIfNeeded(&io)
            }
        } catch {
            unlink(temp)
            throw error
        }
    }

    /// Removes the entry file of `digest` and its index record.
    func removeEntry(_ digest: SHA256Digest, _ outbox: inout Outbox) throws {
        try exclusive(&outbox) { io, _ in
            unlink(layout.entryPath(digest))
            state.withLock { _ = $0.index.remove(digest) }
            try append(&io, [.remove(digest)])
        }
    }

    /// Evicts (unlinks and drops from the index) entries unused for longer than `maxAge`, then, when over the
    /// size limit (or over `toSize` when given), least recently used entries down to the low-water mark (or
    /// `toSize`). Call inside `exclusive`; returns the journal records to append.
    func evict(now: Double, toSize: UInt64?) -> [DiskCacheJournal.Record] {
        let limit = UInt64(max(configuration.sizeLimit, 0))
        let lowWater = UInt64(Double(limit) * min(max(configuration.lowWaterFraction, 0), 1))
        let cutoff = configuration.maxAge.map { now - $0.timeInterval }
        let victims = state.withLock { state -> [SHA256Digest] in
            let target = toSize ?? (state.index.totalBytes > limit ? lowWater : nil)
            var victims: [SHA256Digest] = []
            while let oldest = state.index.leastRecentlyUsed {
                let isExpired = cutoff.map { oldest.lastAccess < $0 } ?? false
                let isOver = target.map { state.index.totalBytes > $0 } ?? false
                guard isExpired || isOver else { break }
                state.index.remove(oldest.digest)
                victims.append(oldest.digest)
            }
            return victims
        }
        for digest in victims { unlink(layout.entryPath(digest)) }
        return victims.map { .remove($0) }
    }

    /// Removes a file found damaged by a read, if the path still names that same file (another process may
    /// have replaced it with a good one meanwhile).
    @discardableResult
    func removeCorrupt(_ digest: SHA256Digest, file: DiskCacheDirectory.FileID, reason: String) -> Bool {
        let path = layout.entryPath(digest)
        var outbox = Outbox()
        var removed = false
        do {
            try exclusive(&outbox) { io, outbox in
                guard DiskCacheDirectory.fileID(path: path) == file, unlink(path) == 0 else { return }
                removed = true
                state.withLock { state in
                    state.index.remove(digest)
                    state.corruptRemoved += 1
                }
                try append(&io, [.remove(digest)])
                outbox.logs.append("DiskCache: removed damaged entry \(path): \(reason)")
            }
        } catch let error as Error {
            outbox.errors.append(error)
        } catch {}
        deliver(outbox)
        return removed
    }

    /// Removes the entry of `digest` if, once caught up with the journal, it is still past `maxAge`.
    func removeIfExpired(_ digest: SHA256Digest) {
        var outbox = Outbox()
        do {
            try exclusive(&outbox) { io, _ in
                let now = configuration.clock()
                guard let record = state.withLock({ $0.index.record(for: digest) }),
                    isExpired(lastAccess: record.lastAccess, now: now)
                else { return }
                unlink(layout.entryPath(digest))
                state.withLock { _ = $0.index.remove(digest) }
                try append(&io, [.remove(digest)])
            }
        } catch let error as Error {
            outbox.errors.append(error)
        } catch {}
        deliver(outbox)
    }

    /// Appends pending records, compacts the journal into the snapshot, and unregisters this process.
    func shutDown() {
        let wasOpen = state.withLock { state -> Bool in
            defer { state.isClosed = true }
            return !state.isClosed
        }
        guard wasOpen else { return }
        var outbox = Outbox()
        do {
            try exclusive(&outbox) { io, _ in
                if io.journalOffset > DiskCacheJournal.headerSize { try compact(&io) }
            }
        } catch let error as Error {
            outbox.errors.append(error)
        } catch {}
        io.withLock { io in
            guard !io.isClosed else { return }
            io.isClosed = true
            unlink(layout.procsPath + "/" + token)
            io.closeFiles()
        }
        deliver(outbox)
    }
}
