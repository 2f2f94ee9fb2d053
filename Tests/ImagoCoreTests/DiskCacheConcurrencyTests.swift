import Foundation
import ImagoTesting
import Testing

@testable import ImagoCore

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct DiskCacheConcurrencyTests {
    @Test func servesManyTasksAtOnceWithoutCorruption() async throws {
        let directory = makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        let cache = try DiskCache(directory: directory, configuration: testConfiguration(sizeLimit: 200_000))
        // Given two caches on one directory (they coordinate like two processes) and 16 tasks using them
        let other = try DiskCache(directory: directory, configuration: testConfiguration(sizeLimit: 200_000))
        let bad = await withTaskGroup(of: Int.self) { group in
            for task in 0..<16 {
                group.addTask {
                    let cache = task % 4 == 3 ? other : cache
                    var bad = 0
                    for step in 0..<150 {
                        let key = "https://example.com/\((task * 7 + step * 13) % 40).png"
                        switch (task + step) % 5 {
                        case 0, 1:
                            cache.store(CachePayload.make(key: key, version: UInt64(task * 1000 + step)), for: key)
                        case 2: cache.removeData(for: key)
                        default:
                            if let entry = cache.entry(for: key), !CachePayload.isValid(entry.data, for: key) {
                                bad += 1
                            }
                        }
                    }
                    return bad
                }
            }
            return await group.reduce(0, +)
        }
        #expect(bad == 0)
        other.flush()
        cache.flush()
        let report = try cache.verify()
        #expect(report.corrupt == 0)
        let stats = cache.statistics
        let files = entryFiles(in: directory)
        #expect(stats.entryCount == files.count)
        #expect(stats.totalBytes == files.reduce(0) { $0 + $1.size })
        #expect(stats.totalBytes <= 200_000)
        for i in 0..<40 {
            let key = "https://example.com/\(i).png"
            if let entry = cache.entry(for: key) { #expect(CachePayload.isValid(entry.data, for: key)) }
        }
    }

    @Test func twoCachesOnOneDirectorySeeEachOthersWritesAndEvictions() throws {
        let directory = makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        let a = try DiskCache(directory: directory, configuration: testConfiguration(sizeLimit: 10_000))
        let b = try DiskCache(directory: directory, configuration: testConfiguration(sizeLimit: 10_000))
        for i in 0..<5 { try a.storeSynchronously(Data(repeating: 1, count: 1000), for: "a\(i)") }
        for i in 0..<4 { try b.storeSynchronously(Data(repeating: 2, count: 1000), for: "b\(i)") }
        // b has replayed a's stores before its own: the shared total is known to both
        #expect(b.statistics.entryCount == 9)
        #expect(a.statistics.entryCount == 9)
        #expect(b.entry(for: "a4")?.data == Data(repeating: 1, count: 1000))
        // a write in b takes the shared total over the limit: b evicts a's oldest entries (a4 was just read)
        try b.storeSynchronously(Data(repeating: 2, count: 1000), for: "b4")
        for key in ["a0", "a1", "a2"] { #expect(a.entry(for: key) == nil, "\(key)") }
        #expect(a.entry(for: "a4") != nil && a.entry(for: "a3") != nil)
        let stats = a.statistics
        #expect(stats.totalBytes <= 8000)
        #expect(stats.totalBytes == entryFiles(in: directory).reduce(0) { $0 + $1.size })
    }

    /// What a thread that sees a store in progress finds on disk once it flushes (or stores synchronously) in the
    /// window between the store being staged and its write being queued.
    private static func seenInTheStagingWindow(
        _ settle: @escaping @Sendable (DiskCache) throws -> Void
    ) throws -> (onDisk: Bool, entries: Int, staged: Int) {
        let directory = makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        let cacheBox = Locked<DiskCache?>(nil)
        let seen = Locked<(onDisk: Bool, entries: Int, staged: Int)?>(nil)
        var configuration = testConfiguration()
        configuration.afterStaging = {
            guard let cache = cacheBox.value, seen.value == nil else { return }
            // Another thread, here: it sees the entry (the store is staged) and settles the cache.
            #expect(cache.containsData(for: "seen"))
            do { try settle(cache) } catch { Issue.record("settling failed: \(error)") }
            let stats = cache.statistics
            let onDisk = cache.fileURL(for: "seen").map { FileManager.default.fileExists(atPath: $0.path) } ?? false
            seen.withLock { $0 = (onDisk, stats.entryCount, stats.stagedWrites) }
        }
        let cache = try DiskCache(directory: directory, configuration: configuration)
        defer { cache.close() }
        cacheBox.withLock { $0 = cache }
        cache.store(Data("seen by another thread".utf8), for: "seen")
        return try #require(seen.value)
    }

    @Test func aFlushWritesAStoreItsCallerSawStagedBeforeTheStoreQueuedIt() throws {
        let seen = try Self.seenInTheStagingWindow { $0.flush() }
        #expect(seen.onDisk, "flush returned before the store it could see was written")
        #expect(seen.entries == 1)
        #expect(seen.staged == 0)
    }

    @Test func aSynchronousStoreWritesTheStoresStagedBeforeIt() throws {
        let seen = try Self.seenInTheStagingWindow { try $0.storeSynchronously(Data("barrier".utf8), for: "barrier") }
        #expect(seen.onDisk, "the synchronous store overtook a store staged before it")
        #expect(seen.entries == 2)
        #expect(seen.staged == 0)
    }
}
