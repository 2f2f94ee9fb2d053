import Foundation
import ImagoTesting
import Testing

@testable import ImagoCore

#if canImport(Glibc)
    import Glibc
#endif

@Suite(.serialized) struct DiskCacheDiskFullTests {
    @Test(
        .enabled(if: TmpfsMount.isAvailable, "needs root to mount a 1 MB tmpfs; the write-fault test covers the logic"))
    func reportsDiskFullOnARealFullFileSystemKeepsServingReadsAndRecovers() throws {
        let mountPoint = makeTemporaryDirectory("mnt")
        defer { removeTemporaryDirectory(mountPoint) }
        try FileManager.default.createDirectory(at: mountPoint, withIntermediateDirectories: true)
        try #require(TmpfsMount.mount(size: "1m", at: mountPoint))
        defer { TmpfsMount.unmount(mountPoint) }
        let recorder = HookRecorder()
        let cache = try DiskCache(
            directory: mountPoint.appendingPathComponent("cache"), configuration: testConfiguration(recorder))
        // When writing 64 KB entries until the file system is full
        var stored: [String] = []
        var failure: DiskCache.Error?
        for i in 0..<40 {
            let key = "k\(i)"
            do {
                try cache.storeSynchronously(
                    CachePayload.make(key: key, version: 1, minLength: 65_536, maxLength: 65_536), for: key)
                stored.append(key)
            } catch let error as DiskCache.Error {
                failure = error
                break
            }
        }
        // Then the failure is .diskFull, and the stored entries still read back
        guard case .diskFull = try #require(failure) else {
            Issue.record("expected diskFull, got \(String(describing: failure))")
            return
        }
        #expect(stored.count >= 5)
        for key in stored {
            let data = cache.entry(for: key)?.data ?? Data()
            #expect(CachePayload.isValid(data, for: key, minLength: 65_536, maxLength: 65_536))
        }
        // And a background store reports it through onError
        cache.store(CachePayload.make(key: "bg", version: 1, minLength: 65_536, maxLength: 65_536), for: "bg")
        cache.flush()
        #expect(recorder.errors.value.contains { if case .diskFull = $0 { true } else { false } })
        #expect(cache.statistics.writeErrors == 2)
        // When space returns, writes work again
        try cache.trim(toSize: 0)
        try cache.storeSynchronously(Data("fits".utf8), for: "after")
        #expect(cache.entry(for: "after")?.data == Data("fits".utf8))
        let stats = cache.statistics
        #expect(stats.entryCount == 1)
        #expect(
            stats.totalBytes == entryFiles(in: mountPoint.appendingPathComponent("cache")).reduce(0) { $0 + $1.size })
    }

    @Test func reportsDiskFullFromAWriteFaultKeepsServingReadsAndRecovers() throws {
        let directory = makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        let full = Locked(false)
        let recorder = HookRecorder()
        var configuration = testConfiguration(recorder)
        configuration.writeFault = { full.value ? ENOSPC : nil }
        let cache = try DiskCache(directory: directory, configuration: configuration)
        try cache.storeSynchronously(Data("before".utf8), for: "before")
        full.withLock { $0 = true }
        #expect(throws: DiskCache.Error.self) { try cache.storeSynchronously(Data("x".utf8), for: "x") }
        cache.store(Data("y".utf8), for: "y")
        cache.flush()
        #expect(recorder.errors.value.count == 1)
        if case .diskFull = recorder.errors.value.first {
        } else {
            Issue.record("expected diskFull: \(recorder.errors.value)")
        }
        #expect(cache.entry(for: "before")?.data == Data("before".utf8))
        #expect(cache.entry(for: "y") == nil)
        #expect(temporaryFiles(in: directory).isEmpty)
        full.withLock { $0 = false }
        try cache.storeSynchronously(Data("x".utf8), for: "x")
        #expect(cache.entry(for: "x")?.data == Data("x".utf8))
        #expect(cache.statistics.writeErrors == 2)
    }
}
