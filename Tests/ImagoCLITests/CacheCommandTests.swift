import Foundation
import Imago
import ImagoTesting
import Testing

@testable import ImagoCLI

/// A cache directory filled by fetching the fixture's two images.
func filledCache(_ f: FetchFixture) async throws {
    let run = await runCLI(["fetch", f.a.absoluteString, f.b.absoluteString, "--cache-dir", f.cacheDir])
    try #require(run.status == 0)
}

/// Every regular file under `directory/entries`.
func cacheEntryFiles(_ directory: String) -> [URL] {
    let entries = URL(fileURLWithPath: directory).appendingPathComponent("entries")
    guard let enumerator = FileManager.default.enumerator(at: entries, includingPropertiesForKeys: [.isRegularFileKey])
    else { return [] }
    return enumerator.compactMap { item in
        guard let url = item as? URL, (try? url.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true
        else { return nil }
        return url
    }
}

func jsonObject(_ run: CLIRun) throws -> [String: Any] {
    try #require(run.jsonObjects.count == 1, "output: \(run.stdout) \(run.stderr)")
    return run.jsonObjects[0]
}

@Suite struct CacheStatsTests {
    @Test func statsCountEntriesBytesAndDates() async throws {
        let f = try FetchFixture()
        defer { f.finish() }
        let before = Date().addingTimeInterval(-1)
        try await filledCache(f)
        let stats = try jsonObject(await runCLI(["cache", "stats", "--cache-dir", f.cacheDir, "--json"]))
        #expect(stats["entries"] as? Int == 2)
        let fileBytes = cacheEntryFiles(f.cacheDir).reduce(0) {
            $0 + ((try? $1.resourceValues(forKeys: [.fileSizeKey]).fileSize) ?? 0)
        }
        #expect(stats["bytes"] as? Int == fileBytes)
        #expect(fileBytes > f.jpeg.count + f.png.count)
        let oldest = try #require((stats["oldest"] as? String).flatMap { try? Date($0, strategy: .iso8601) })
        let newest = try #require((stats["newest"] as? String).flatMap { try? Date($0, strategy: .iso8601) })
        #expect(oldest >= before && oldest <= newest && newest <= Date().addingTimeInterval(1))
    }

    @Test func statsOfAMissingDirectoryAreZeroAndCreateNothing() async throws {
        let scratch = try makeScratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let missing = scratch.appendingPathComponent("no-cache").path
        let run = await runCLI(["cache", "stats", "--cache-dir", missing])
        #expect(run.status == 0)
        #expect(run.stdout == "{\"entries\":0,\"bytes\":0,\"oldest\":null,\"newest\":null}\n")
        #expect(!FileManager.default.fileExists(atPath: missing))
        for action in ["verify", "clear"] {
            let other = await runCLI(["cache", action, "--cache-dir", missing])
            #expect(other.status == 0)
        }
        #expect(!FileManager.default.fileExists(atPath: missing))
    }

    @Test func aDirectoryThatHoldsNoCacheIsLeftAlone() async throws {
        let scratch = try makeScratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        try Data("keep".utf8).write(to: scratch.appendingPathComponent("notes.txt"))
        for action in ["stats", "verify", "clear"] {
            let run = await runCLI(["cache", action, "--cache-dir", scratch.path])
            #expect(run.status == 0)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path) == ["notes.txt"])
    }

    @Test func humanReadableStatsOnATerminal() async throws {
        let f = try FetchFixture()
        defer { f.finish() }
        try await filledCache(f)
        let run = await runCLI(["cache", "stats", "--cache-dir", f.cacheDir], isTerminal: true)
        #expect(run.stdout.hasPrefix("\(f.cacheDir): 2 entries, "))
        #expect(run.stdout.contains("oldest 20"))
    }
}

@Suite struct CacheVerifyTests {
    @Test func verifyReportsAndRemovesACorruptedEntryThenFindsNone() async throws {
        // Given a cache with two entries, one of which has a flipped byte on disk
        let f = try FetchFixture()
        defer { f.finish() }
        try await filledCache(f)
        let files = cacheEntryFiles(f.cacheDir)
        try #require(files.count == 2)
        var bytes = try Data(contentsOf: files[0])
        bytes[bytes.count - 10] ^= 0xFF
        try bytes.write(to: files[0])
        // When verify runs
        let first = await runCLI(["cache", "verify", "--cache-dir", f.cacheDir, "--json"])
        // Then it reports the corrupt entry, removes it and exits 1; a second run finds nothing
        #expect(first.status == 1)
        #expect(first.stdout == "{\"checked\":2,\"corrupt\":1,\"removed\":1}\n")
        #expect(!FileManager.default.fileExists(atPath: files[0].path))
        let second = await runCLI(["cache", "verify", "--cache-dir", f.cacheDir, "--json"])
        #expect(second.status == 0)
        #expect(second.stdout == "{\"checked\":1,\"corrupt\":0,\"removed\":0}\n")
        let stats = try jsonObject(await runCLI(["cache", "stats", "--cache-dir", f.cacheDir]))
        #expect(stats["entries"] as? Int == 1)
    }
}

@Suite struct CacheTrimAndClearTests {
    @Test func trimLeavesAtMostTheGivenSize() async throws {
        let f = try FetchFixture()
        defer { f.finish() }
        try await filledCache(f)
        let before = try jsonObject(await runCLI(["cache", "stats", "--cache-dir", f.cacheDir]))
        let total = try #require(before["bytes"] as? Int)
        let limit = total - 1
        let trim = try jsonObject(
            await runCLI(["cache", "trim", "--max-size", "\(limit)", "--cache-dir", f.cacheDir, "--json"]))
        let removed = try #require(trim["removed"] as? Int)
        let left = try #require(trim["bytes"] as? Int)
        #expect(removed >= 1 && removed + (trim["entries"] as? Int ?? -1) == 2)
        #expect(left <= limit)
        #expect(trim["removedBytes"] as? Int == total - left)
        #expect(cacheEntryFiles(f.cacheDir).count == 2 - removed)
        let everything = try jsonObject(
            await runCLI(["cache", "trim", "--max-size", "0K", "--cache-dir", f.cacheDir]))
        #expect(everything["entries"] as? Int == 0 && everything["bytes"] as? Int == 0)
    }

    @Test func clearRemovesEveryEntry() async throws {
        let f = try FetchFixture()
        defer { f.finish() }
        try await filledCache(f)
        let before = try jsonObject(await runCLI(["cache", "stats", "--cache-dir", f.cacheDir]))
        let clear = try jsonObject(await runCLI(["cache", "clear", "--cache-dir", f.cacheDir]))
        #expect(clear["removed"] as? Int == 2)
        #expect(clear["removedBytes"] as? Int == before["bytes"] as? Int)
        #expect(cacheEntryFiles(f.cacheDir).isEmpty)
        let after = try jsonObject(await runCLI(["cache", "stats", "--cache-dir", f.cacheDir]))
        #expect(after["entries"] as? Int == 0 && after["bytes"] as? Int == 0)
        // And the next fetch goes to the network again
        let refetch = await runCLI(["fetch", f.a.absoluteString, "--cache-dir", f.cacheDir])
        #expect(refetch.object(for: f.a)?["source"] as? String == "network")
    }
}
