import Foundation
import ImagoTesting
import Testing

@testable import ImagoCore

#if canImport(Glibc)
    import Glibc
#endif

/// Crash safety and sharing across real processes, with the `imago-cache-stress` child.
@Suite(.serialized, .timeLimit(.minutes(3))) struct DiskCacheProcessTests {
    /// Kill rounds per run: 5, or `IMAGO_KILL_ROUNDS` (scripts/crash-consistency.sh runs 60).
    static let killRounds = Int(ProcessInfo.processInfo.environment["IMAGO_KILL_ROUNDS"] ?? "") ?? 5
    /// Seconds the two processes share the cache: 3, or `IMAGO_SHARE_SECONDS` (scripts/crash-consistency.sh: 60).
    static let shareSeconds = Int(ProcessInfo.processInfo.environment["IMAGO_SHARE_SECONDS"] ?? "") ?? 3
    static let sizeLimit = 1 << 20

    @Test func everyEntryReadableAfterSIGKILLIsWholeAndTheSizeAccountingMatchesTheFiles() async throws {
        let tool = try #require(stressToolURL(), "imago-cache-stress not found: run `swift build --build-tests` first")
        let directory = makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        var killedMidway = 0
        var entriesChecked = 0
        var bytesChecked = 0
        var damaged = 0
        var random = ImagoTesting.SeededGenerator(seed: 11)
        for round in 0..<Self.killRounds {
            // Given a child filling the cache (over 300 keys, replacing and evicting as it goes)
            let output = directory.deletingLastPathComponent().appendingPathComponent("fill-\(round).txt")
            let child = try StressChild(
                tool: tool, arguments: ["fill", directory.path, "1000000", "\(Self.sizeLimit)"], output: output)
            #expect(
                await ImagoTesting.eventually(timeout: .seconds(30)) {
                    child.text.contains("ready") || !child.process.isRunning
                }, "child started")
            // When it is killed at a random moment of its writing
            try await Task.sleep(for: .milliseconds(Int.random(in: 30...300, using: &random)))
            kill(child.process.processIdentifier, SIGKILL)
            #expect(await child.waitForExit())
            if child.process.terminationReason == .uncaughtSignal { killedMidway += 1 }
            #expect(!child.text.contains("error"), "\(child.text)")
            // Then a new cache opens cleanly, every entry it returns is complete and correct, and the index
            // accounts for exactly the files on disk
            let recorder = HookRecorder()
            let cache = try DiskCache(
                directory: directory, configuration: testConfiguration(recorder, sizeLimit: Self.sizeLimit))
            var found = 0
            for i in 0..<300 {
                let key = stressKey(i)
                guard let entry = cache.entry(for: key) else { continue }
                found += 1
                bytesChecked += entry.data.count
                if !CachePayload.isValid(entry.data, for: key) { damaged += 1 }
                #expect(CachePayload.isValid(entry.data, for: key), "round \(round): \(key) damaged")
            }
            let stats = cache.statistics
            let files = entryFiles(in: directory)
            #expect(stats.entryCount == files.count, "round \(round)")
            #expect(stats.totalBytes == files.reduce(0) { $0 + $1.size }, "round \(round)")
            #expect(found == files.count, "round \(round): every file is a readable entry")
            #expect(temporaryFiles(in: directory).isEmpty, "round \(round): orphaned temporary files removed")
            #expect(try cache.verify().corrupt == 0)
            #expect(!recorder.errors.value.contains { if case .indexRebuilt = $0 { true } else { false } })
            entriesChecked += found
            cache.close()
        }
        print(
            "crash-consistency: \(Self.killRounds) rounds, \(killedMidway) SIGKILLed mid-write, \(entriesChecked) "
                + "entries (\(bytesChecked) bytes) checked after reopening, \(damaged) damaged")
        #expect(killedMidway > 0, "no child was killed while writing; raise N")
    }

    @Test func twoProcessesWritingAndReadingOneDirectoryKeepItConsistentAndWithinTheLimit() async throws {
        let tool = try #require(stressToolURL(), "imago-cache-stress not found: run `swift build --build-tests` first")
        let directory = makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        let limit = 256 * 1024
        let children = try (0..<2).map { n in
            try StressChild(
                tool: tool, arguments: ["share", directory.path, "\(Self.shareSeconds)", "\(limit)"],
                output: directory.deletingLastPathComponent().appendingPathComponent("share-\(n).txt"))
        }
        for child in children {
            #expect(await child.waitForExit(seconds: 120))
            #expect(child.process.terminationStatus == 0, "\(child.text)")
            print("crash-consistency share (\(Self.shareSeconds) s): \(child.text.split(separator: "\n").last ?? "")")
            #expect(child.text.contains("ok reads="), "\(child.text)")
            #expect(!child.text.contains("error"), "\(child.text)")
        }
        let cache = try DiskCache(directory: directory, configuration: testConfiguration(sizeLimit: limit))
        #expect(
            try cache.verify()
                == DiskCache.VerifyReport(checked: entryFiles(in: directory).count, corrupt: 0, removed: 0))
        let stats = cache.statistics
        let files = entryFiles(in: directory)
        #expect(stats.entryCount == files.count && files.count > 0)
        #expect(stats.totalBytes == files.reduce(0) { $0 + $1.size })
        #expect(stats.totalBytes <= limit)
        print("crash-consistency share: \(files.count) entries, \(stats.totalBytes) bytes of a \(limit)-byte limit")
        for i in 0..<200 {
            if let entry = cache.entry(for: stressKey(i)) {
                #expect(CachePayload.isValid(entry.data, for: stressKey(i)))
            }
        }
    }
}
