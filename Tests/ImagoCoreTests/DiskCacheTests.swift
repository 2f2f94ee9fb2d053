import Foundation
import ImagoTesting
import Testing

@testable import ImagoCore

@Suite struct DiskCacheEntryTests {
    @Test func roundTripsBytesAndMetadataAcrossReopen() throws {
        let directory = makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        let metadata = DataCacheMetadata(
            storedAt: Date(timeIntervalSinceReferenceDate: 700_000_000.25),
            expiresAt: Date(timeIntervalSinceReferenceDate: 700_003_600),
            validators: HTTPValidators(
                etag: "\"v1\"",
                lastModified: "Wed, 21 Oct 2015 07:28:00 GMT"), contentType: "image/png")
        let data = CachePayload.make(key: "a", version: 1)
        do {
            let cache = try DiskCache(directory: directory, configuration: testConfiguration())
            try cache.storeSynchronously(data, for: "https://example.com/a.png", metadata: metadata)
            #expect(cache.entry(for: "https://example.com/a.png") == DataCacheEntry(data: data, metadata: metadata))
            #expect(cache.containsData(for: "https://example.com/a.png"))
            #expect(!cache.containsData(for: "https://example.com/b.png"))
            #expect(cache.entry(for: "https://example.com/b.png") == nil)
        }
        let reopened = try DiskCache(directory: directory, configuration: testConfiguration())
        #expect(reopened.entry(for: "https://example.com/a.png") == DataCacheEntry(data: data, metadata: metadata))
        #expect(reopened.statistics.entryCount == 1)
    }

    @Test func updatesMetadataAndRemovesEntries() throws {
        let directory = makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        let cache = try DiskCache(directory: directory, configuration: testConfiguration())
        let data = Data("bytes".utf8)
        cache.store(data, for: "k")
        let revalidated = DataCacheMetadata(validators: HTTPValidators(etag: "\"2\""))
        cache.updateMetadata(revalidated, for: "k")
        cache.updateMetadata(revalidated, for: "absent")
        cache.flush()
        #expect(cache.entry(for: "k") == DataCacheEntry(data: data, metadata: revalidated))
        #expect(cache.entry(for: "absent") == nil)
        cache.removeData(for: "k")
        #expect(cache.entry(for: "k") == nil)
        cache.flush()
        #expect(!FileManager.default.fileExists(atPath: entryPath(in: directory, key: "k")))
        #expect(cache.statistics.entryCount == 0)
    }

    @Test func readsAFileWrittenUnderAnotherKeysNameAsAMiss() throws {
        let directory = makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        let cache = try DiskCache(directory: directory, configuration: testConfiguration())
        try cache.storeSynchronously(Data("A".utf8), for: "key-a")
        // Given the file of key-a copied by hand to the path of key-b
        let pathB = entryPath(in: directory, key: "key-b")
        try FileManager.default.createDirectory(
            atPath: (pathB as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: entryPath(in: directory, key: "key-a"), toPath: pathB)
        // Then key-b misses, and key-a still hits
        #expect(cache.entry(for: "key-b") == nil)
        #expect(cache.entry(for: "key-a")?.data == Data("A".utf8))
        // And verify() removes the misplaced file
        let report = try cache.verify()
        #expect(report == DiskCache.VerifyReport(checked: 2, corrupt: 1, removed: 1))
        #expect(!FileManager.default.fileExists(atPath: pathB))
    }

    @Test(arguments: ["flip payload", "flip header", "truncate", "empty"])
    func readsADamagedFileAsAMissAndRemovesIt(damage: String) throws {
        let directory = makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        let recorder = HookRecorder()
        let cache = try DiskCache(directory: directory, configuration: testConfiguration(recorder))
        let data = CachePayload.make(key: "k", version: 3, minLength: 500, maxLength: 500)
        try cache.storeSynchronously(data, for: "k")
        try cache.storeSynchronously(Data("other".utf8), for: "other")
        let path = entryPath(in: directory, key: "k")
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        switch damage {
        case "flip payload": bytes[bytes.count - 100] ^= 0x01
        case "flip header": bytes[30] ^= 0x80
        case "truncate": bytes.removeLast(7)
        default: bytes = []
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        #expect(cache.entry(for: "k") == nil)
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(cache.entry(for: "other")?.data == Data("other".utf8))
        let stats = cache.statistics
        #expect(stats.corruptEntriesRemoved == 1)
        #expect(stats.entryCount == 1)
        #expect(stats.totalBytes == entryFiles(in: directory).reduce(0) { $0 + $1.size })
        #expect(recorder.logs.value.contains { $0.contains("damaged") })
    }

    @Test func readsLeaveTheFileAccessTimeAlone() throws {
        // Given an entry whose access time is older than its modification time (so that `relatime` would update
        // it on the next read)
        let directory = makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        var configuration = testConfiguration()
        configuration.verifiesEveryRead = true
        let cache = try DiskCache(directory: directory, configuration: configuration)
        try cache.storeSynchronously(Data("payload".utf8), for: "k")
        let path = entryPath(in: directory, key: "k")
        var before = stat()
        #expect(stat(path, &before) == 0)
        var times = [timespec(tv_sec: before.st_mtim.tv_sec - 3600, tv_nsec: 0), before.st_mtim]
        #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)

        // When the cache reads it
        #expect(cache.entry(for: "k")?.data == Data("payload".utf8))

        // Then the access time is untouched: the cache keeps its own recency order, and a read dirties no inode
        var after = stat()
        #expect(stat(path, &after) == 0)
        #expect(after.st_atim.tv_sec == before.st_mtim.tv_sec - 3600)
    }

    @Test func createsTheDirectory0700AndFiles0600() throws {
        let directory = makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        let cache = try DiskCache(directory: directory, configuration: testConfiguration())
        try cache.storeSynchronously(Data("x".utf8), for: "k")
        cache.close()
        let path = entryPath(in: directory, key: "k")
        #expect(permissions(directory.path) == 0o700)
        #expect(permissions((path as NSString).deletingLastPathComponent) == 0o700)
        for name in ["entries", "tmp", "procs"] {
            #expect(permissions(directory.appendingPathComponent(name).path) == 0o700)
        }
        #expect(permissions(path) == 0o600)
        for name in ["index", "journal", "lock"] {
            #expect(permissions(directory.appendingPathComponent(name).path) == 0o600)
        }
    }

    @Test func throwsDirectoryNotWritableWithPathAndErrno() throws {
        let directory = makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        // A regular file where the cache directory should go: mkdir fails with ENOTDIR.
        _ = FileManager.default.createFile(atPath: directory.path, contents: Data())
        let target = directory.appendingPathComponent("sub")
        #expect(throws: DiskCache.Error.directoryNotWritable(path: target.path, errno: ENOTDIR)) {
            _ = try DiskCache(directory: target)
        }
        #expect("\(DiskCache.Error.directoryNotWritable(path: "/x", errno: EACCES))".contains("/x"))
    }

    @Test func removesOrphanedTemporaryFilesAtOpen() throws {
        let directory = makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        do { _ = try DiskCache(directory: directory, configuration: testConfiguration()) }
        for name in ["0123abcd.1.tmp", "garbage", "feedface.99.tmp"] {
            _ = FileManager.default.createFile(
                atPath: directory.appendingPathComponent("tmp/\(name)").path, contents: Data("x".utf8))
        }
        let recorder = HookRecorder()
        let cache = try DiskCache(directory: directory, configuration: testConfiguration(recorder))
        #expect(temporaryFiles(in: directory).isEmpty)
        #expect(recorder.logs.value.contains { $0.contains("removed 3 temporary files") })
        // A second open does not touch the temporary files of the first, which is alive.
        _ = FileManager.default.createFile(
            atPath: directory.appendingPathComponent("tmp/\(cache.token).5.tmp").path, contents: nil)
        let second = try DiskCache(directory: directory, configuration: testConfiguration())
        #expect(temporaryFiles(in: directory) == ["\(cache.token).5.tmp"])
        second.close()
    }

    @Test func seesStagedWritesAndRemovalsBeforeTheyReachTheDisk() throws {
        let directory = makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        let cache = try DiskCache(directory: directory, configuration: testConfiguration())
        try cache.storeSynchronously(Data("old".utf8), for: "removed")
        // Given the background writer held up
        let gate = DispatchSemaphore(value: 0)
        cache.queue.async { gate.wait() }
        // When storing and removing
        cache.store(Data("new".utf8), for: "k")
        cache.removeData(for: "removed")
        // Then reads see both at once, while the disk has neither yet
        #expect(cache.entry(for: "k")?.data == Data("new".utf8))
        #expect(cache.containsData(for: "k"))
        #expect(cache.entry(for: "removed") == nil)
        #expect(!cache.containsData(for: "removed"))
        #expect(!FileManager.default.fileExists(atPath: entryPath(in: directory, key: "k")))
        #expect(FileManager.default.fileExists(atPath: entryPath(in: directory, key: "removed")))
        #expect(cache.statistics.stagedWrites == 2)
        gate.signal()
        cache.flush()
        #expect(FileManager.default.fileExists(atPath: entryPath(in: directory, key: "k")))
        #expect(!FileManager.default.fileExists(atPath: entryPath(in: directory, key: "removed")))
        #expect(cache.statistics.stagedWrites == 0)
        #expect(cache.entry(for: "k")?.data == Data("new".utf8))
    }

    @Test func reportsStatsAndTrimsAndVerifies() throws {
        let directory = makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        let cache = try DiskCache(directory: directory, configuration: testConfiguration())
        for i in 0..<10 {
            cache.store(
                Data(repeating: UInt8(i), count: 1000), for: "k\(i)",
                metadata: DataCacheMetadata(storedAt: Date(timeIntervalSinceReferenceDate: Double(i))))
        }
        cache.flush()
        _ = cache.entry(for: "k1")
        _ = cache.entry(for: "k2")
        _ = cache.entry(for: "nope")
        var stats = cache.statistics
        #expect(stats.entryCount == 10)
        #expect(stats.totalBytes == entryFiles(in: directory).reduce(0) { $0 + $1.size })
        #expect(stats.oldestStoredAt == Date(timeIntervalSinceReferenceDate: 0))
        #expect(stats.newestStoredAt == Date(timeIntervalSinceReferenceDate: 9))
        #expect(stats.hits == 2 && stats.misses == 1)
        #expect(abs(stats.hitRatio - 2.0 / 3.0) < 1e-9)
        // trim keeps the most recently used (k1, k2 were read last)
        let removed = try cache.trim(toSize: stats.totalBytes / 2)
        stats = cache.statistics
        #expect(removed == 5 && stats.entryCount == 5)
        #expect(stats.totalBytes == entryFiles(in: directory).reduce(0) { $0 + $1.size })
        #expect(cache.containsData(for: "k1") && cache.containsData(for: "k2") && !cache.containsData(for: "k0"))
        // verify finds two damaged files
        for key in ["k1", "k9"] {
            let path = entryPath(in: directory, key: key)
            var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
            bytes[bytes.count - 1] ^= 0xFF
            try Data(bytes).write(to: URL(fileURLWithPath: path))
        }
        #expect(try cache.verify() == DiskCache.VerifyReport(checked: 5, corrupt: 2, removed: 2))
        #expect(cache.statistics.entryCount == 3)
        #expect(cache.statistics.totalBytes == entryFiles(in: directory).reduce(0) { $0 + $1.size })
        cache.removeAll()
        #expect(cache.statistics.entryCount == 0 && entryFiles(in: directory).isEmpty)
        #expect(cache.entry(for: "k2") == nil)
    }
}
