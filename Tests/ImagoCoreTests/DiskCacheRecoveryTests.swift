import Foundation
import ImagoTesting
import Testing

@testable import ImagoCore

@Suite struct DiskCacheRecoveryTests {
    static func fill(_ directory: URL, count: Int = 10) throws {
        let cache = try DiskCache(directory: directory, configuration: testConfiguration())
        for i in 0..<count { try cache.storeSynchronously(CachePayload.make(key: "k\(i)", version: 1), for: "k\(i)") }
        // Not closed: the journal keeps the records, as after a process that simply exited.
        cache.state.withLock { $0.isClosed = true }
        cache.io.withLock { io in
            io.isClosed = true
            io.closeFiles()
        }
    }

    @Test func reconcilesTheIndexWhenAProcessDiedMidChange() throws {
        let directory = makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        try Self.fill(directory)
        // Given the dirty flag left set, one file gone and one file unknown to the index
        let lock = try FileHandle(forWritingTo: directory.appendingPathComponent("lock"))
        try lock.write(contentsOf: [1])
        try lock.close()
        try FileManager.default.removeItem(atPath: entryPath(in: directory, key: "k3"))
        let other = makeTemporaryDirectory()
        defer { removeTemporaryDirectory(other) }
        do {
            let cache = try DiskCache(directory: other, configuration: testConfiguration())
            try cache.storeSynchronously(CachePayload.make(key: "new", version: 2), for: "new")
        }
        let newPath = entryPath(in: directory, key: "new")
        try FileManager.default.createDirectory(
            atPath: (newPath as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: entryPath(in: other, key: "new"), toPath: newPath)
        // When the cache opens
        let recorder = HookRecorder()
        let cache = try DiskCache(directory: directory, configuration: testConfiguration(recorder))
        // Then the index matches the files again
        let stats = cache.statistics
        let files = entryFiles(in: directory)
        #expect(stats.entryCount == 10 && files.count == 10)
        #expect(stats.totalBytes == files.reduce(0) { $0 + $1.size })
        #expect(CachePayload.isValid(cache.entry(for: "new")?.data ?? Data(), for: "new"))
        #expect(recorder.logs.value.contains { $0.contains("died while changing") })
        #expect(try Data(contentsOf: directory.appendingPathComponent("lock")).first == 0)
    }

    @Test func skipsATornJournalAppendAndRepairs() throws {
        let directory = makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        try Self.fill(directory)
        let journal = try FileHandle(forWritingTo: directory.appendingPathComponent("journal"))
        try journal.seekToEnd()
        try journal.write(contentsOf: [UInt8](repeating: 0xAB, count: 30))
        try journal.close()
        let recorder = HookRecorder()
        let cache = try DiskCache(directory: directory, configuration: testConfiguration(recorder))
        let stats = cache.statistics
        #expect(stats.entryCount == 10)
        #expect(stats.totalBytes == entryFiles(in: directory).reduce(0) { $0 + $1.size })
        #expect(recorder.logs.value.contains { $0.contains("damaged records") })
        for i in 0..<10 { #expect(CachePayload.isValid(cache.entry(for: "k\(i)")?.data ?? Data(), for: "k\(i)")) }
    }

    @Test func writesAndReadsWithPowerLossDurability() throws {
        let directory = makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        var configuration = testConfiguration()
        configuration.durability = .powerLoss
        do {
            let cache = try DiskCache(directory: directory, configuration: configuration)
            try cache.storeSynchronously(Data("durable".utf8), for: "k")
        }
        let cache = try DiskCache(directory: directory, configuration: configuration)
        #expect(cache.entry(for: "k")?.data == Data("durable".utf8))
        #expect(cache.statistics.entryCount == 1)
    }
}
