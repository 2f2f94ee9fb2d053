import Foundation
import ImagoTesting
import Testing

@testable import ImagoCore

/// Format version 2 kept entry files in folders named by their first byte (`entries/ab/<sha256>`); version 3 keeps
/// them in `entries/`. A version-2 cache is moved on open: no entry lost, no folder or file left behind.
@Suite struct DiskCacheLayoutMigrationTests {
    static let keys = (0..<40).map { "k\($0)" }

    /// A closed cache of `keys`, turned into the version-2 layout on disk: files moved into prefix folders and,
    /// when `keepsIndex`, the snapshot and journal rewritten as version 2 (else the index removed).
    static func makeVersion2Cache(_ directory: URL, keepsIndex: Bool) throws -> [DiskCacheIndex.Record] {
        do {
            let cache = try DiskCache(directory: directory, configuration: testConfiguration())
            for key in keys { try cache.storeSynchronously(CachePayload.make(key: key, version: 1), for: key) }
            // Read the first ten again, so that the LRU order differs from the order of the writes.
            for key in keys.prefix(10) { _ = cache.entry(for: key) }
            cache.close()
        }
        let layout = DiskCacheDirectory(root: directory.path)
        for key in keys {
            let hex = SHA256.hash(key).hex
            let shard = layout.entriesPath + "/" + String(hex.prefix(2))
            mkdir(shard, 0o700)
            #expect(rename(layout.entriesPath + "/" + hex, shard + "/" + hex) == 0)
        }
        let snapshot = try DiskCacheDirectory.readFile(path: layout.indexPath).get()
        let parsed = try snapshot.withUnsafeBytes { try DiskCacheJournal.parseSnapshot($0).get() }
        #expect(parsed.version == 3)
        if keepsIndex {
            let old = DiskCacheJournal.encodeSnapshot(
                generation: parsed.generation, records: parsed.records, version: DiskCacheJournal.shardedVersion)
            try Data(old).write(to: URL(fileURLWithPath: layout.indexPath))
            let journal = DiskCacheJournal.encodeJournalHeader(
                generation: parsed.generation, version: DiskCacheJournal.shardedVersion)
            try Data(journal).write(to: URL(fileURLWithPath: layout.journalPath))
        } else {
            unlink(layout.indexPath)
            unlink(layout.journalPath)
        }
        return parsed.records
    }

    /// Everything under `entries/`, as paths relative to it.
    static func everythingUnderEntries(_ directory: URL) -> [String] {
        FileManager.default.subpaths(atPath: directory.appendingPathComponent("entries").path) ?? []
    }

    @Test func movesAVersion2CacheKeepingItsEntriesAndLRUOrder() throws {
        let directory = makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        // Given a version-2 cache: 40 entries in prefix folders, its index in the version-2 format
        let records = try Self.makeVersion2Cache(directory, keepsIndex: true)
        #expect(Self.everythingUnderEntries(directory).contains { $0.contains("/") })
        // When it is opened
        let recorder = HookRecorder()
        let cache = try DiskCache(directory: directory, configuration: testConfiguration(recorder))
        defer { cache.close() }
        // Then every entry reads back byte for byte from entries/<sha256>, nothing else is left under entries/,
        // the LRU order is the one the old index had, and the index was not reported as damaged
        let expected = Set(Self.keys.map { SHA256.hash($0).hex })
        #expect(Set(Self.everythingUnderEntries(directory)) == expected)
        #expect(cache.state.withLock { $0.index.recordsInLRUOrder().map(\.digest) } == records.map(\.digest))
        for key in Self.keys {
            #expect(cache.fileURL(for: key)?.path == directory.path + "/entries/" + SHA256.hash(key).hex)
            #expect(CachePayload.isValid(cache.entry(for: key)?.data ?? Data(), for: key))
        }
        #expect(cache.statistics.entryCount == Self.keys.count)
        #expect(cache.statistics.totalBytes == entryFiles(in: directory).reduce(0) { $0 + $1.size })
        #expect(recorder.errors.value.isEmpty)
        #expect(recorder.logs.value.contains { $0.contains("format version 2") && $0.contains("40 moved") })
        // And the index on disk is version 3 now
        let snapshot = try DiskCacheDirectory.readFile(path: cache.layout.indexPath).get()
        #expect(try snapshot.withUnsafeBytes { try DiskCacheJournal.parseSnapshot($0).get() }.version == 3)
    }

    @Test func movesAVersion2CacheWithoutAnIndex() throws {
        let directory = makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        // Given the files of a version-2 cache, its index lost
        _ = try Self.makeVersion2Cache(directory, keepsIndex: false)
        // When it is opened, then every entry is there, in entries/ itself
        let cache = try DiskCache(directory: directory, configuration: testConfiguration())
        defer { cache.close() }
        #expect(Set(Self.everythingUnderEntries(directory)) == Set(Self.keys.map { SHA256.hash($0).hex }))
        for key in Self.keys { #expect(CachePayload.isValid(cache.entry(for: key)?.data ?? Data(), for: key)) }
        #expect(cache.statistics.entryCount == Self.keys.count)
    }

    @Test func finishesAMoveThatWasInterruptedAndRemovesWhatIsNotAnEntry() throws {
        let directory = makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        // Given a version-2 cache whose move stopped halfway (a process killed during it): half the files moved,
        // one of them moved while its old copy is still there, plus a stray file and a stray folder in a prefix
        // folder, and a folder that is no prefix folder at all
        _ = try Self.makeVersion2Cache(directory, keepsIndex: true)
        let layout = DiskCacheDirectory(root: directory.path)
        for key in Self.keys.prefix(20) {
            let hex = SHA256.hash(key).hex
            #expect(
                rename(layout.entriesPath + "/" + String(hex.prefix(2)) + "/" + hex, layout.entriesPath + "/" + hex)
                    == 0)
        }
        let twice = SHA256.hash(Self.keys[0]).hex
        let oldCopy = layout.entriesPath + "/" + String(twice.prefix(2)) + "/" + twice
        mkdir(layout.entriesPath + "/" + String(twice.prefix(2)), 0o700)
        try FileManager.default.copyItem(atPath: layout.entriesPath + "/" + twice, toPath: oldCopy)
        let someShard = layout.entriesPath + "/" + String(SHA256.hash(Self.keys[30]).hex.prefix(2))
        try Data("junk".utf8).write(to: URL(fileURLWithPath: someShard + "/not-an-entry"))
        try FileManager.default.createDirectory(
            atPath: someShard + "/deep/er", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(
            atPath: layout.entriesPath + "/Not-A-Shard/x", withIntermediateDirectories: true)
        // When it is opened
        let cache = try DiskCache(directory: directory, configuration: testConfiguration())
        defer { cache.close() }
        // Then all 40 entries are readable and only their 40 files remain under entries/
        #expect(Set(Self.everythingUnderEntries(directory)) == Set(Self.keys.map { SHA256.hash($0).hex }))
        for key in Self.keys { #expect(CachePayload.isValid(cache.entry(for: key)?.data ?? Data(), for: key)) }
        #expect(cache.statistics.entryCount == Self.keys.count)
        #expect(cache.statistics.totalBytes == entryFiles(in: directory).reduce(0) { $0 + $1.size })
    }

    @Test func aColdCacheCreatesNoFolderUnderEntries() throws {
        let directory = makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        // Given an empty cache, when 300 keys (every first byte, almost surely) are stored
        let cache = try DiskCache(directory: directory, configuration: testConfiguration())
        defer { cache.close() }
        for i in 0..<300 { try cache.storeSynchronously(Data("v\(i)".utf8), for: "key \(i)") }
        // Then entries/ holds exactly the 300 files and no folder
        let names = Self.everythingUnderEntries(directory)
        #expect(names.count == 300 && !names.contains { $0.contains("/") })
        #expect(entryFiles(in: directory).count == 300)
    }
}
