import Foundation
import ImagoTesting
import Testing

@testable import ImagoCore

/// A read may skip the payload checksum only for the very file version it verified before: any change made
/// through the file system (in-place write, truncation, replacement by another cache) is verified again.
@Suite struct DiskCacheVerifiedReadTests {
    static let key = "https://example.com/verified.jpg"

    /// Flips one payload byte inside the entry file in place (same inode), keeping the file's mtime.
    static func damagePayloadInPlace(_ path: String) throws {
        var st = stat()
        #expect(stat(path, &st) == 0)
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        let size = try handle.seekToEnd()
        try handle.seek(toOffset: size - 100)
        let byte = try #require(try handle.read(upToCount: 1)?.first)
        try handle.seek(toOffset: size - 100)
        try handle.write(contentsOf: [byte ^ 0x5A])
        try handle.close()
        // Put the modification time back as it was: only the status-change time (which no user call can set)
        // still tells this version from the verified one.
        var times = [st.st_atim, st.st_mtim]
        #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
    }

    /// Damages `path` in place (``damagePayloadInPlace(_:)``) and expects the next read of the key to miss and
    /// remove the file.
    static func expectDamageInPlaceIsCaught(_ cache: DiskCache, path: String) throws {
        try damagePayloadInPlace(path)
        #expect(cache.entry(for: key) == nil)
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func aVerifiedFileDamagedInPlaceIsCaughtOnTheNextRead() throws {
        // Given an entry read (and so verified) once
        let directory = makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        let cache = try DiskCache(directory: directory, configuration: testConfiguration())
        let payload = CachePayload.make(key: Self.key, version: 1)
        try cache.storeSynchronously(payload, for: Self.key)
        #expect(cache.entry(for: Self.key)?.data == payload)
        #expect(cache.entry(for: Self.key)?.data == payload)

        // When one payload byte is changed in place, with the modification time restored, Then the next read is
        // a miss and the damaged file is removed
        try Self.expectDamageInPlaceIsCaught(cache, path: entryPath(in: directory, key: Self.key))
    }

    @Test func aFileThisCacheWroteNeedsNoChecksumYetDamageInPlaceIsCaught() throws {
        // Given an entry this cache just wrote
        let directory = makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        let cache = try DiskCache(directory: directory, configuration: testConfiguration())
        let payload = CachePayload.make(key: Self.key, version: 1)
        try cache.storeSynchronously(payload, for: Self.key)
        let path = entryPath(in: directory, key: Self.key)

        // Then its version on disk counts as verified before any read, and reads serve it
        let written = try #require(DiskCacheDirectory.stamp(path: path))
        #expect(cache.isVerified(SHA256.hash(Self.key), written))
        #expect(cache.entry(for: Self.key)?.data == payload)

        // When one payload byte is changed in place, with the modification time restored, Then the next read is
        // a miss and the damaged file is removed
        try Self.expectDamageInPlaceIsCaught(cache, path: path)
    }

    @Test func aDamagedReplacementFromAnotherCacheIsVerified() throws {
        // Given cache A has verified the entry
        let directory = makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        let a = try DiskCache(directory: directory, configuration: testConfiguration())
        try a.storeSynchronously(CachePayload.make(key: Self.key, version: 1), for: Self.key)
        #expect(a.entry(for: Self.key) != nil)

        // When another cache on the same folder replaces it (a new file renamed over it), and that new file is
        // then damaged
        let b = try DiskCache(directory: directory, configuration: testConfiguration())
        try b.storeSynchronously(CachePayload.make(key: Self.key, version: 2), for: Self.key)
        b.close()
        try Self.damagePayloadInPlace(entryPath(in: directory, key: Self.key))

        // Then A checks the new version and reports a miss rather than returning damaged bytes
        #expect(a.entry(for: Self.key) == nil)
    }

    @Test func theMemoIsBounded() throws {
        // Given a cache, When more file versions are remembered than the memo holds
        let directory = makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        let cache = try DiskCache(directory: directory, configuration: testConfiguration())
        for i in 0..<(DiskCache.maxVerifiedFiles * 2 + 3) {
            var st = stat()
            st.st_ino = ino_t(i)
            cache.rememberVerified(SHA256.hash("k\(i)"), DiskCacheDirectory.FileStamp(st))
        }

        // Then it never holds more than its bound, and the latest is remembered
        let count = cache.verifiedFiles.withLock { $0.count }
        #expect(count > 0 && count <= DiskCache.maxVerifiedFiles)
        var last = stat()
        last.st_ino = ino_t(DiskCache.maxVerifiedFiles * 2 + 2)
        #expect(
            cache.isVerified(SHA256.hash("k\(DiskCache.maxVerifiedFiles * 2 + 2)"), DiskCacheDirectory.FileStamp(last)))
    }

    @Test func verifiesEveryReadRemembersNothing() throws {
        // Given a cache configured to check every read
        let directory = makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        var configuration = testConfiguration()
        configuration.verifiesEveryRead = true
        let cache = try DiskCache(directory: directory, configuration: configuration)
        try cache.storeSynchronously(Data("x".utf8), for: Self.key)

        // When it is read, Then it is served and no file version is remembered as verified
        #expect(cache.entry(for: Self.key)?.data == Data("x".utf8))
        #expect(cache.verifiedFiles.withLock { $0.isEmpty })
    }
}
