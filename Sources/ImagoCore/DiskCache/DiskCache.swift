import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

// @unchecked Sendable: the lets are immutable; every mutable value is behind `state` or `io` (Locked), and the
// dispatch queue is thread-safe.
/// The default ``DataCaching``: one file per entry under a directory, crash-safe and shareable between processes.
///
/// - Files are named by the SHA-256 of the key, all in one folder; each stores the full key (checked on
///   read), the payload's length and checksum, the times and the HTTP validators. A damaged file reads as a
///   miss and is removed.
/// - Writes go to a temporary file renamed into place, so an entry is either wholly there or not at all, even if
///   the process is killed. `store` returns at once: the bytes are staged in memory (and visible to `entry(for:)`
///   immediately) and written by a background queue; ``flush()`` waits for them.
/// - An index (a snapshot plus an append-only journal) keeps the size and LRU order of every entry, so opening
///   does not stat every file and the LRU order survives restarts. It is rebuilt from the files if damaged.
/// - ``Configuration/sizeLimit`` and ``Configuration/maxAge`` are enforced as writes happen.
/// - Several processes may open the same directory: mutations of the index happen under `flock(2)` on `lock`;
///   each process appends what it did (stores, removals, evictions, and lazily its reads) to the shared journal
///   and replays what the others appended each time it takes the lock (at every write, and at most
///   ``Configuration/accessPersistenceDelay`` after a read). Entry files are immutable once renamed, so a read
///   always sees a whole entry of some process; a size limit is enforced over the shared index.
///
/// - Every read checks the header, the lengths and the key. The payload checksum is computed on the first read
///   of a file version in each boot of the machine: a version verified or written by any process since the boot
///   is sealed in the index (see ``Configuration/verifiesEveryRead``), so the processes after it skip the pass.
///
/// Thread-safe. Reads are synchronous: one open and one read of the file.
///
/// ```swift
/// let cache = try DiskCache(directory: URL(fileURLWithPath: "/var/cache/myapp/images"))
/// cache.store(data, for: url.absoluteString, metadata: DataCacheMetadata(validators: .init(etag: etag)))
/// let hit = cache.entry(for: url.absoluteString)
/// ```
public final class DiskCache: DataCaching, @unchecked Sendable {
    /// The directory holding the cache.
    public let directory: URL
    /// The limits and hooks this cache was opened with.
    public let configuration: Configuration

    let layout: DiskCacheDirectory
    let token: String
    let state: Locked<State>
    let io: Locked<IOState>
    /// Digests of recently used keys (see `digest(for:)`).
    let digests = Locked<[ImageCacheKey: SHA256Digest]>([:])
    /// Entry file versions whose payload checksum passed in this process (see `DiskCache+Verified.swift`).
    let verifiedFiles = Locked<[SHA256Digest: DiskCacheDirectory.FileStamp]>([:])
    /// The boot every seal this cache makes or trusts names (see `DiskCache+Verified.swift`); `nil`: unknown.
    let bootIdentity: [UInt8]?
    /// Interrupted download bodies in this cache's staging area, for the loaders of a pipeline using this cache.
    package let resumeStore: DiskResumeStore
    let queue: DispatchQueue
    let queueKey = DispatchSpecificKey<Bool>()

    /// A staged write (or removal when `data` is nil) not yet on disk.
    struct Staged {
        var key: String
        var data: Data?
        var metadata: DataCacheMetadata
        var sequence: UInt64
    }

    /// What reads and writes share in this process. Short critical sections only.
    struct State {
        var index = DiskCacheIndex()
        var staged: [SHA256Digest: Staged] = [:]
        var stagedBytes = 0
        var sequence: UInt64 = 0
        var tempNumber: UInt64 = 0
        /// Reads (touch records, each with the seal of the version read when it sealed one) not yet appended to
        /// the journal.
        var pending: [DiskCacheJournal.Record] = []
        var isPersistScheduled = false
        var isClosed = false
        var hits = 0
        var misses = 0
        var writeErrors = 0
        var corruptRemoved = 0
        /// Reads that computed the payload checksum (the file version was not known good).
        var payloadChecks = 0
    }

    /// Opens (creating if needed) the cache in `directory`: loads the index (rebuilding it from the files if it
    /// is missing or damaged), removes temporary files left by dead processes, and repairs the index if a
    /// process died while changing it.
    ///
    /// - Throws: ``Error/directoryNotWritable(path:errno:)`` when the directory cannot be created or written.
    public init(directory: URL, configuration: Configuration = Configuration()) throws {
        self.directory = directory.standardizedFileURL
        self.configuration = configuration
        layout = DiskCacheDirectory(root: self.directory.path)
        bootIdentity = configuration.bootIdentityOverride.map(Self.bootIdentity) ?? Self.currentBootIdentity
        if let failure = layout.createDirectories() {
            throw Error.directoryNotWritable(path: failure.path, errno: failure.errno)
        }
        let lockFD = open(layout.lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard lockFD >= 0 else { throw Error.directoryNotWritable(path: layout.lockPath, errno: errno) }
        token = String(UInt64.random(in: 0...UInt64.max), radix: 16)
        resumeStore = DiskResumeStore(directory: layout.tmpPath, token: token)
        state = Locked(State())
        io = Locked(IOState(lockFD: lockFD))
        queue = DispatchQueue(label: "imago.diskcache.writer", qos: .utility)
        queue.setSpecific(key: queueKey, value: true)
        var outbox = Outbox()
        do {
            try exclusive(&outbox) { io, outbox in try self.registerAndRemoveLeftovers(&io, &outbox) }
        } catch {
            deliver(outbox)
            state.withLock { $0.isClosed = true }
            io.withLock { io in
                io.isClosed = true
                io.closeFiles()
            }
            unlink(layout.procsPath + "/" + token)
            throw error
        }
        deliver(outbox)
    }

    deinit {
        // No job holds `self` any more, so nothing is staged: persist reads and compact, inline.
        shutDown()
    }

    // MARK: DataCaching

    /// The bytes and metadata stored for `key`, or `nil` when absent, unused for longer than `maxAge`, or
    /// found damaged (the file is then removed). Sees writes staged by this process immediately.
    public func entry(for key: String) -> DataCacheEntry? {
        let digest = self.digest(for: key)
        let now = configuration.clock()
        enum Fast {
            case staged(Staged)
            case disk(indexed: DiskCacheIndex.Record?)
        }
        let fast = state.withLock { state -> Fast in
            if let staged = state.staged[digest] {
                if staged.data != nil && staged.key == key { state.hits += 1 } else { state.misses += 1 }
                return .staged(staged)
            }
            return .disk(indexed: state.index.record(for: digest))
        }
        let indexed: DiskCacheIndex.Record?
        switch fast {
        case .staged(let staged):
            guard let data = staged.data, staged.key == key else { return nil }
            return DataCacheEntry(data: data, metadata: staged.metadata)
        case .disk(let record):
            indexed = record
        }
        if let access = indexed?.lastAccess, isExpired(lastAccess: access, now: now) {
            countMiss()
            queue.async { self.removeIfExpired(digest) }
            return nil
        }
        let path = layout.entryPath(digest)
        var seal: UInt64?  // of the version read, computed once
        switch DiskCacheDirectory.readEntry(
            at: path, maxFileSize: maxEntryFileSize,
            isVerified: { stamp in
                seal = self.seal(of: stamp)
                guard isVerified(digest, stamp, sealed: seal != nil && seal == indexed?.seal) else {
                    state.withLock { $0.payloadChecks += 1 }
                    return false
                }
                return true
            })
        {
        case .valid(let header, let data, _, let stamp):
            guard header.key == key else {
                countMiss()
                return nil
            }
            rememberVerified(digest, stamp)
            if indexed == nil, isExpired(lastAccess: header.lastAccess, now: now) {
                countMiss()
                queue.async { self.removeIfExpired(digest) }
                return nil
            }
            // Verified now or before: seal this version for the other processes and the next start, once.
            recordHit(digest, at: now, seal: seal == indexed?.seal ? 0 : seal ?? 0)
            return DataCacheEntry(data: data, metadata: header.metadata)
        case .missing:
            // Dropped from this process's index only: whoever removed the file journaled it (a remove record
            // from here could land after a newer store by another process and hide that file from the index).
            state.withLock { state in
                state.misses += 1
                state.index.remove(digest)
            }
            return nil
        case .corrupt(let reason, let file):
            forgetVerified(digest)
            countMiss()
            removeCorrupt(digest, file: file, reason: reason)
            return nil
        case .failed(let code):
            countMiss()
            configuration.onError?(.readFailed(path: path, errno: code))
            return nil
        }
    }

    /// Stages `data` for `key` and returns; the background queue writes it. Visible to ``entry(for:)`` at once.
    /// Failures (full disk …) go to ``Configuration/onError`` and ``Statistics/writeErrors``.
    public func store(_ data: Data, for key: String, metadata: DataCacheMetadata) {
        stage(key: key, data: data, metadata: metadata)
    }

    /// Rewrites the entry for `key` with `metadata` (after a 304 revalidation); does nothing if absent.
    public func updateMetadata(_ metadata: DataCacheMetadata, for key: String) {
        guard let entry = entry(for: key) else { return }
        stage(key: key, data: entry.data, metadata: metadata)
    }

    /// Whether an entry exists for `key` (staged, or its file exists and it is not past `maxAge`), without
    /// reading its bytes.
    public func containsData(for key: String) -> Bool {
        let digest = self.digest(for: key)
        let now = configuration.clock()
        let known = state.withLock { state -> Bool? in
            if let staged = state.staged[digest] { return staged.data != nil && staged.key == key }
            if let record = state.index.record(for: digest) {
                return isExpired(lastAccess: record.lastAccess, now: now) ? false : nil
            }
            return nil
        }
        if let known { return known }
        return access(layout.entryPath(digest), F_OK) == 0
    }

    /// Removes the entry for `key` (at once for readers in this process; from disk by the background queue).
    public func removeData(for key: String) {
        stage(key: key, data: nil, metadata: DataCacheMetadata())
    }

    /// Removes every entry, waiting until they are gone from disk. Errors go to ``Configuration/onError``.
    public func removeAll() {
        do { try removeAllSynchronously() } catch let error as Error { configuration.onError?(error) } catch {}
    }

    // MARK: Synchronous API

    /// Writes `data` for `key` now, on the caller's thread, after the writes staged before it, and throws on
    /// failure (``Error/diskFull(path:)`` …). For tests, tools and shutdown paths.
    public func storeSynchronously(
        _ data: Data, for key: String, metadata: DataCacheMetadata = DataCacheMetadata()
    )
        throws
    {
        let digest = self.digest(for: key)
        var outbox = Outbox()
        defer { deliver(outbox) }
        try onQueue {
            writeStagedSoFar()
            do {
                try writeEntry(key: key, digest: digest, data: data, metadata: metadata, &outbox)
            } catch {
                state.withLock { $0.writeErrors += 1 }
                throw error
            }
        }
    }

    /// Blocks until every write staged so far is on disk and recorded reads are appended to the journal.
    public func flush() {
        onQueue {
            writeStagedSoFar()
            persistPending()
        }
    }

    /// ``flush()`` of `cache` when it is a disk cache (other caches hold nothing back), on the queue for blocking
    /// work: the flush waits on the cache's writer queue, off the threads of Swift's executor.
    package static func flush(_ cache: (any DataCaching)?) async {
        guard let disk = cache as? DiskCache else { return }
        await WorkQueue.blocking.value(priority: .normal) { disk.flush() }
    }

    /// Flushes, compacts the journal into the snapshot and releases this process's registration. Later calls
    /// read what is on disk but store nothing (they report ``Error/closed``). Called by `deinit` if needed.
    public func close() {
        flush()
        shutDown()
    }

    // MARK: Helpers

    static let maxPendingRecords = 4096

    var maxEntryFileSize: Int { max(configuration.sizeLimit, 0) + 256 * 1024 }

    func isExpired(lastAccess: Double, now: Double) -> Bool {
        guard let maxAge = configuration.maxAge else { return false }
        return now - lastAccess > maxAge.timeInterval
    }

    private func countMiss() { state.withLock { $0.misses += 1 } }
}

extension DiskCache {
    /// Where the entry for `key` lives on disk, for tools that must inspect it; `nil` when no file holds it
    /// (never stored, removed, or still staged in memory: call ``flush()`` first). The file's format is
    /// Imago's own (a header with the key and metadata, then the payload); do not write to it.
    public func fileURL(for key: String) -> URL? {
        let path = layout.entryPath(digest(for: key))
        guard access(path, F_OK) == 0 else { return nil }
        return URL(fileURLWithPath: path)
    }
}
