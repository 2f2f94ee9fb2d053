/// The binary formats of the index snapshot (`index`) and the shared journal (`journal`) of a ``DiskCache``.
/// All integers little-endian, times as `Double` bit patterns, digests as their 32 bytes.
///
/// Snapshot, written whole to a temporary file and renamed over `index`:
/// ```
///  0  8  magic "IMDCSNAP"     8  4  version (3)     12  4  reserved (0)
/// 16  8  generation          24  8  count
/// 32  count × 64: digest (32), size (8), storedAt (8), lastAccess (8), seal (8) — least recently used first
/// end-8  8  XXH64 of every byte before it
/// ```
/// Journal: a 32-byte header, then records appended by every process under the directory lock:
/// ```
/// header:  0 8 magic "IMDCJRNL"   8 4 version (3)   12 4 reserved   16 8 generation   24 8 XXH64 of bytes 0..<24
/// record:  0 1 op (1 put, 2 touch, 3 remove, 4 clear)   1 7 reserved (0)   8 32 digest
///         40 8 size   48 8 storedAt   56 8 lastAccess   64 8 seal   72 8 XXH64 of bytes 0..<72   (80 bytes)
/// ```
/// A put carries the seal of the file written; a touch, the seal of the version read when the reader sealed it
/// (0: the seal is left as it is).
/// A journal belongs to the snapshot of the same generation: it lists what happened after that snapshot was
/// written. Compaction writes snapshot `g+1`, then renames a fresh journal of generation `g+1` over the old one.
/// Version 1 had no seals: 56-byte snapshot and 72-byte journal records. Version 2 had these records but kept the
/// entry files in folders named by their first byte (`entries/ab/<sha256>`); version 3 keeps them all in `entries/`
/// (see ``DiskCacheDirectory``). A version-2 index is still read, so that the LRU order and the seals survive the
/// move: the cache then walks the files once, renames them into place and writes a version-3 index. A directory of
/// any other version is read as an unusable index, rebuilt once from the entry files.
package enum DiskCacheJournal {
    static let version: UInt32 = 3
    /// The format of the sharded layout, whose index is read (and whose files are moved) on the way to ``version``.
    package static let shardedVersion: UInt32 = 2
    package static let headerSize = 32
    package static let recordSize = 80
    static let snapshotRecordSize = 64

    // The magics are the ASCII names read as little-endian UInt64s.
    static let journalMagicValue: UInt64 = {
        var v: UInt64 = 0
        for (i, c) in "IMDCJRNL".utf8.enumerated() { v |= UInt64(c) << UInt64(8 * i) }
        return v
    }()
    static let snapshotMagicValue: UInt64 = {
        var v: UInt64 = 0
        for (i, c) in "IMDCSNAP".utf8.enumerated() { v |= UInt64(c) << UInt64(8 * i) }
        return v
    }()

    /// One journal record.
    package enum Op: UInt8, Sendable {
        case put = 1, touch = 2, remove = 3, clear = 4
    }

    /// A journal record: what one process did to one entry (or, for `.clear`, to all).
    package struct Record: Sendable, Hashable {
        package var op: Op
        package var entry: DiskCacheIndex.Record

        package init(_ op: Op, _ entry: DiskCacheIndex.Record) {
            self.op = op
            self.entry = entry
        }

        /// A read at `time`, sealing the version read when `seal` is not 0.
        package static func touch(_ digest: SHA256Digest, at time: Double, seal: UInt64 = 0) -> Record {
            Record(.touch, .init(digest: digest, size: 0, storedAt: 0, lastAccess: time, seal: seal))
        }
        package static func remove(_ digest: SHA256Digest) -> Record {
            Record(.remove, .init(digest: digest, size: 0, storedAt: 0, lastAccess: 0))
        }
    }

    /// Applies `record` to `index`.
    package static func apply(_ record: Record, to index: inout DiskCacheIndex) {
        switch record.op {
        case .put: index.put(record.entry)
        case .touch:
            index.touch(record.entry.digest, at: record.entry.lastAccess)
            if record.entry.seal != 0 { index.seal(record.entry.digest, record.entry.seal) }
        case .remove: index.remove(record.entry.digest)
        case .clear: index.removeAll()
        }
    }

    // MARK: Journal

    /// A journal header of `generation` (`version`: this build's; another only for tests of the migration).
    package static func encodeJournalHeader(generation: UInt64, version: UInt32 = version) -> [UInt8] {
        var w = LittleEndianWriter(capacity: headerSize)
        w.u64(journalMagicValue)
        w.u32(version)
        w.u32(0)
        w.u64(generation)
        let checksum = w.bytes.withUnsafeBytes { XXH64.hash($0) }
        w.u64(checksum)
        return w.bytes
    }

    /// The generation of a journal header (of this version or ``shardedVersion``), or `nil` when the header is
    /// missing, damaged or of another version.
    package static func parseJournalHeader(_ buffer: UnsafeRawBufferPointer) -> UInt64? {
        let r = LittleEndianReader(buffer)
        guard r.u64(0) == journalMagicValue, let v = r.u32(8), v == version || v == shardedVersion,
            let generation = r.u64(16),
            let checksum = r.u64(24), let head = r.slice(0, 24), XXH64.hash(head) == checksum
        else { return nil }
        return generation
    }

    package static func encode(_ records: [Record]) -> [UInt8] {
        var w = LittleEndianWriter(capacity: records.count * recordSize)
        for record in records {
            let start = w.bytes.count
            w.u8(record.op.rawValue)
            w.raw(repeatElement(0 as UInt8, count: 7))
            w.digest(record.entry.digest)
            w.u64(record.entry.size)
            w.f64(record.entry.storedAt)
            w.f64(record.entry.lastAccess)
            w.u64(record.entry.seal)
            let checksum = w.bytes.withUnsafeBytes { XXH64.hash(UnsafeRawBufferPointer(rebasing: $0[start...])) }
            w.u64(checksum)
        }
        return w.bytes
    }

    /// Parses the record at `offset`, or `nil` when it is incomplete or damaged.
    static func record(in r: LittleEndianReader, at offset: Int) -> Record? {
        guard let body = r.slice(offset, 72), let checksum = r.u64(offset + 72), XXH64.hash(body) == checksum,
            let rawOp = r.u8(offset), let op = Op(rawValue: rawOp), let digest = r.digest(offset + 8),
            let size = r.u64(offset + 40), let storedAt = r.finiteF64(offset + 48),
            let lastAccess = r.finiteF64(offset + 56), let seal = r.u64(offset + 64)
        else { return nil }
        return Record(op, .init(digest: digest, size: size, storedAt: storedAt, lastAccess: lastAccess, seal: seal))
    }

    /// The records in `buffer` (journal bytes after the header). A damaged stretch (a torn append by a killed
    /// process) is skipped byte by byte until a valid record follows. Returns the records, how many bytes were
    /// consumed (an incomplete tail is left for the next read) and whether anything was skipped.
    package static func parseRecords(
        _ buffer: UnsafeRawBufferPointer
    ) -> (records: [Record], consumed: Int, damaged: Bool) {
        let r = LittleEndianReader(buffer)
        var records: [Record] = []
        records.reserveCapacity(buffer.count / recordSize)
        var offset = 0
        var damaged = false
        while buffer.count - offset >= recordSize {
            if let record = record(in: r, at: offset) {
                records.append(record)
                offset += recordSize
            } else {
                damaged = true
                offset += 1
            }
        }
        return (records, offset, damaged)
    }

    // MARK: Snapshot

    /// A snapshot of `records` (least recently used first) as `generation` (`version`: this build's; another only
    /// for tests of the migration).
    package static func encodeSnapshot(
        generation: UInt64, records: [DiskCacheIndex.Record], version: UInt32 = version
    ) -> [UInt8] {
        var w = LittleEndianWriter(capacity: headerSize + records.count * snapshotRecordSize + 8)
        w.u64(snapshotMagicValue)
        w.u32(version)
        w.u32(0)
        w.u64(generation)
        w.u64(UInt64(records.count))
        for record in records {
            w.digest(record.digest)
            w.u64(record.size)
            w.f64(record.storedAt)
            w.f64(record.lastAccess)
            w.u64(record.seal)
        }
        let checksum = w.bytes.withUnsafeBytes { XXH64.hash($0) }
        w.u64(checksum)
        return w.bytes
    }

    /// The generation, records (least recently used first) and format version (this one or ``shardedVersion``)
    /// of a snapshot, or the reason it is unusable.
    package static func parseSnapshot(
        _ buffer: UnsafeRawBufferPointer
    ) -> Result<
        (generation: UInt64, records: [DiskCacheIndex.Record], version: UInt32), DiskCacheEntryFile.Corruption
    > {
        let r = LittleEndianReader(buffer)
        guard r.count >= headerSize + 8 else { return .failure(.init("snapshot shorter than its header")) }
        guard r.u64(0) == snapshotMagicValue else { return .failure(.init("bad snapshot magic")) }
        guard let fileVersion = r.u32(8), fileVersion == version || fileVersion == shardedVersion else {
            return .failure(.init("snapshot format version \(r.u32(8) ?? 0), this build reads \(version)"))
        }
        guard let generation = r.u64(16), let count = r.u64(24) else { return .failure(.init("short header")) }
        let capacity = (r.count - headerSize - 8) / snapshotRecordSize
        guard count <= UInt64(capacity), headerSize + Int(count) * snapshotRecordSize + 8 == r.count else {
            return .failure(.init("snapshot length does not match its count \(count)"))
        }
        guard let body = r.slice(0, r.count - 8), let checksum = r.u64(r.count - 8), XXH64.hash(body) == checksum
        else { return .failure(.init("snapshot checksum mismatch")) }
        var records: [DiskCacheIndex.Record] = []
        records.reserveCapacity(Int(count))
        var offset = headerSize
        for _ in 0..<Int(count) {
            guard let digest = r.digest(offset), let size = r.u64(offset + 32), let storedAt = r.finiteF64(offset + 40),
                let lastAccess = r.finiteF64(offset + 48), let seal = r.u64(offset + 56)
            else { return .failure(.init("bad snapshot record")) }
            records.append(.init(digest: digest, size: size, storedAt: storedAt, lastAccess: lastAccess, seal: seal))
            offset += snapshotRecordSize
        }
        return .success((generation, records, fileVersion))
    }
}
