import Foundation
import ImagoTesting
import Testing

@testable import ImagoCore

@Suite struct DiskCacheLimitTests {
    static func keys(_ cache: DiskCache) -> [SHA256Digest] {
        cache.state.withLock { $0.index.recordsInLRUOrder().map(\.digest) }
    }

    @Test func evictsLeastRecentlyUsedDownToTheLowWaterMarkAsWritesHappen() throws {
        let directory = makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        let cache = try DiskCache(directory: directory, configuration: testConfiguration(sizeLimit: 10_000))
        let fileSize = 1000 + 80 + 2  // payload + fixed header + checksum + 2-byte key
        for i in 0..<9 { try cache.storeSynchronously(Data(repeating: 1, count: 1000), for: "k\(i)") }
        #expect(cache.statistics.totalBytes == 9 * fileSize)
        _ = cache.entry(for: "k0")  // k0 becomes the most recently used
        // When a write takes the total over 10,000 bytes
        try cache.storeSynchronously(Data(repeating: 1, count: 1000), for: "k9")
        // Then the least recently used go until at most 8,000 bytes remain
        let stats = cache.statistics
        #expect(stats.totalBytes <= 8000)
        #expect(stats.entryCount == 7)
        #expect(stats.totalBytes == entryFiles(in: directory).reduce(0) { $0 + $1.size })
        for key in ["k1", "k2", "k3"] { #expect(cache.entry(for: key) == nil, "\(key) evicted") }
        for key in ["k0", "k4", "k9"] { #expect(cache.entry(for: key) != nil, "\(key) kept") }
    }

    @Test func rejectsAnEntryLargerThanTheSizeLimit() throws {
        let directory = makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        let recorder = HookRecorder()
        let cache = try DiskCache(directory: directory, configuration: testConfiguration(recorder, sizeLimit: 1000))
        #expect(throws: DiskCache.Error.self) { try cache.storeSynchronously(Data(count: 1001), for: "big") }
        cache.store(Data(count: 1001), for: "big")
        cache.flush()
        #expect(recorder.errors.value.count == 1)
        #expect(cache.statistics.writeErrors == 2)
        #expect(cache.entry(for: "big") == nil)
    }

    @Test func expiresEntriesUnusedForMaxAgeOnReadAndOnWrite() throws {
        let directory = makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        let clock = DiskTestClock()
        var configuration = testConfiguration()
        configuration.maxAge = .seconds(3600)
        configuration.clock = clock.function
        let cache = try DiskCache(directory: directory, configuration: configuration)
        try cache.storeSynchronously(Data("a".utf8), for: "a")
        try cache.storeSynchronously(Data("b".utf8), for: "b")
        try cache.storeSynchronously(Data("c".utf8), for: "c")
        clock.advance(by: 3000)
        #expect(cache.entry(for: "c") != nil)  // a read renews c
        clock.advance(by: 1000)  // a and b are now 4,000 s old, c 1,000 s
        // Then a read of an expired entry misses
        #expect(cache.entry(for: "a") == nil)
        #expect(!cache.containsData(for: "a"))
        // And the next write evicts every expired entry
        try cache.storeSynchronously(Data("d".utf8), for: "d")
        cache.flush()
        #expect(!FileManager.default.fileExists(atPath: entryPath(in: directory, key: "a")))
        #expect(!FileManager.default.fileExists(atPath: entryPath(in: directory, key: "b")))
        #expect(cache.statistics.entryCount == 2)
        #expect(cache.entry(for: "c") != nil && cache.entry(for: "d") != nil)
    }

    @Test func keepsTheLRUOrderAcrossReopen() throws {
        let directory = makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        let order: [SHA256Digest]
        do {
            let cache = try DiskCache(directory: directory, configuration: testConfiguration(sizeLimit: 10_000))
            for i in 0..<8 { try cache.storeSynchronously(Data(repeating: 1, count: 1000), for: "k\(i)") }
            for i in [5, 1, 7, 0] { _ = cache.entry(for: "k\(i)") }  // reads, persisted lazily
            order = Self.keys(cache)
            #expect(order.suffix(4) == [5, 1, 7, 0].map { SHA256.hash("k\($0)") })
        }
        // Reopen (the first cache was released, which compacted the journal) and reopen again from the journal
        let reopened = try DiskCache(directory: directory, configuration: testConfiguration(sizeLimit: 10_000))
        #expect(Self.keys(reopened) == order)
        _ = reopened.entry(for: "k2")
        reopened.flush()  // the read goes to the journal only
        let third = try DiskCache(directory: directory, configuration: testConfiguration(sizeLimit: 10_000))
        #expect(Self.keys(third).last == SHA256.hash("k2"))
        // And eviction follows it: two more entries take the total over the limit, and the least recently used
        // (k3, k4, k6) go down to 8,000 bytes
        try third.storeSynchronously(Data(repeating: 1, count: 1000), for: "n1")
        try third.storeSynchronously(Data(repeating: 1, count: 1000), for: "n2")
        #expect(third.entry(for: "k3") == nil && third.entry(for: "k4") == nil && third.entry(for: "k6") == nil)
        #expect(third.entry(for: "k0") != nil && third.entry(for: "k5") != nil)
    }

    @Test func rebuildsADeletedOrDamagedIndexWithTheSameEntriesAndSizes() throws {
        let directory = makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        var before: DiskCache.Statistics
        do {
            let cache = try DiskCache(directory: directory, configuration: testConfiguration())
            for i in 0..<20 { cache.store(CachePayload.make(key: "k\(i)", version: 1), for: "k\(i)") }
            cache.flush()
            before = cache.statistics
        }
        for damage in ["delete index", "garbage index", "delete journal"] {
            let index = directory.appendingPathComponent(damage.hasSuffix("journal") ? "journal" : "index")
            if damage.hasPrefix("delete") {
                try FileManager.default.removeItem(at: index)
            } else {
                try Data("not an index".utf8).write(to: index)
            }
            let recorder = HookRecorder()
            let cache = try DiskCache(directory: directory, configuration: testConfiguration(recorder))
            let after = cache.statistics
            #expect(after.entryCount == before.entryCount, "\(damage)")
            #expect(after.totalBytes == before.totalBytes, "\(damage)")
            #expect(recorder.logs.value.contains { $0.contains("rebuilt") }, "\(damage)")
            for i in 0..<20 { #expect(CachePayload.isValid(cache.entry(for: "k\(i)")?.data ?? Data(), for: "k\(i)")) }
        }
    }
}
