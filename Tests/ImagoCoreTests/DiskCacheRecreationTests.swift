import Foundation
import ImagoTesting
import Testing

@testable import ImagoCore

extension DiskCacheRecoveryTests {
    @Test("Issue 23 item 4: a cache directory removed while open is recreated by the next write, silently")
    func removedDirectoryIsRecreatedByTheNextWrite() throws {
        // Given an open cache holding an entry
        let directory = makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        let hooks = HookRecorder()
        var configuration = DiskCache.Configuration()
        hooks.install(in: &configuration)
        let cache = try DiskCache(directory: directory, configuration: configuration)
        try cache.storeSynchronously(Data(repeating: 1, count: 5000), for: "old")
        #expect(cache.statistics.totalBytes > 5000)

        // When its whole directory is removed while it runs
        try FileManager.default.removeItem(at: directory)
        #expect(cache.entry(for: "old") == nil)
        #expect(cache.statistics.totalBytes == 0)

        // Then the next writes recreate the tree and succeed, with nothing reported as an error
        try cache.storeSynchronously(Data(repeating: 2, count: 300), for: "new")
        cache.store(Data(repeating: 3, count: 200), for: "staged", metadata: DataCacheMetadata())
        cache.flush()
        #expect(cache.entry(for: "new")?.data == Data(repeating: 2, count: 300))
        #expect(cache.entry(for: "staged")?.data == Data(repeating: 3, count: 200))
        #expect(entryFiles(in: directory).count == 2)
        let stats = cache.statistics
        #expect(stats.entryCount == 2 && stats.writeErrors == 0)
        #expect(stats.totalBytes == entryFiles(in: directory).reduce(0) { $0 + $1.size })
        #expect(hooks.errors.value.isEmpty, "\(hooks.errors.value)")
        cache.close()

        // and another process (a reopen) sees a consistent cache
        let reopened = try DiskCache(directory: directory, configuration: configuration)
        #expect(reopened.entry(for: "new") != nil)
        #expect(reopened.statistics.entryCount == 2)
        #expect(hooks.errors.value.isEmpty, "\(hooks.errors.value)")
        reopened.close()
    }
}
