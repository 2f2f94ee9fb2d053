import Foundation
import ImagoTesting
import Testing

@testable import ImagoCore

/// A file version verified or written by any process during one boot of the machine is read by the others, and by
/// later processes of the same boot, without the payload checksum; after a restart of the machine (another boot
/// identity), or after any change through the file system, the first read computes it again.
@Suite(.timeLimit(.minutes(1))) struct DiskCacheSealTests {
    static let key = "https://example.com/sealed.jpg"
    static let bootX = Array("11111111-2222-3333-4444-555555555555".utf8)
    static let bootY = Array("66666666-7777-8888-9999-000000000000".utf8)

    static func configuration(boot: [UInt8]?, _ recorder: HookRecorder? = nil) -> DiskCache.Configuration {
        var configuration = testConfiguration(recorder)
        configuration.bootIdentityOverride = boot
        return configuration
    }

    /// The payload stored for `key` by ``writeAndClose(_:keys:readBack:)``.
    static func payload(_ key: String = key) -> Data { CachePayload.make(key: key, version: 1) }

    /// Stores ``payload(_:)`` for each of `keys` with a cache of boot X (reading each back when `readBack`), then
    /// closes it, which compacts its index into the snapshot.
    static func writeAndClose(_ directory: URL, keys: [String] = [key], readBack: Bool = false) throws {
        let writer = try DiskCache(directory: directory, configuration: configuration(boot: bootX))
        defer { writer.close() }
        for key in keys {
            try writer.storeSynchronously(payload(key), for: key)
            if readBack { #expect(writer.entry(for: key)?.data == payload(key)) }
        }
    }

    /// Opens a cache on `directory` in `boot`, reads `key` (expecting `payload`), closes it, and returns how many
    /// reads computed the payload checksum.
    static func checksOfOneRead(_ directory: URL, boot: [UInt8]?, payload: Data) throws -> Int {
        let cache = try DiskCache(directory: directory, configuration: configuration(boot: boot))
        defer { cache.close() }
        #expect(cache.entry(for: key)?.data == payload)
        return cache.payloadChecks
    }

    @Test func aFileWrittenByAnEarlierProcessThisBootIsReadWithoutAChecksum() throws {
        // Given an entry written by one cache, closed (its index compacted into the snapshot)
        let directory = makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        let payload = Self.payload()
        try Self.writeAndClose(directory)

        // When a new cache of the same boot reads it, Then no checksum is computed; in another boot, one is
        let sameBoot = try Self.checksOfOneRead(directory, boot: Self.bootX, payload: payload)
        #expect(sameBoot == 0)
        let otherBoot = try Self.checksOfOneRead(directory, boot: Self.bootY, payload: payload)
        #expect(otherBoot == 1)
    }

    @Test func afterARestartTheFirstReadChecksOnceAndSealsForTheNextProcesses() throws {
        // Given an entry written in boot X
        let directory = makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        let payload = Self.payload()
        try Self.writeAndClose(directory)

        // When a cache of boot Y reads it twice, Then it checks once (the second read trusts its own memo)
        let reader = try DiskCache(directory: directory, configuration: Self.configuration(boot: Self.bootY))
        #expect(reader.entry(for: Self.key)?.data == payload)
        #expect(reader.entry(for: Self.key)?.data == payload)
        #expect(reader.payloadChecks == 1)
        reader.close()

        // And the seal it recorded spares the next cache of boot Y the check, not one of boot X
        #expect(try Self.checksOfOneRead(directory, boot: Self.bootY, payload: payload) == 0)
        #expect(try Self.checksOfOneRead(directory, boot: Self.bootX, payload: payload) == 1)
    }

    @Test func aSealFromTheJournalOfAnOpenCacheIsTrusted() throws {
        // Given a cache that stays open and writes an entry (its put record, with the seal, is in the journal only)
        let directory = makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        let writer = try DiskCache(directory: directory, configuration: Self.configuration(boot: Self.bootX))
        defer { writer.close() }
        let payload = Self.payload()
        try writer.storeSynchronously(payload, for: Self.key)
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("journal").path))

        // When a cache opened after it reads the entry, Then no checksum is computed
        #expect(try Self.checksOfOneRead(directory, boot: Self.bootX, payload: payload) == 0)
    }

    @Test func aSealedFileDamagedInPlaceIsCaughtByTheNextProcess() throws {
        // Given an entry written and read in boot X, then closed
        let directory = makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        let path = entryPath(in: directory, key: Self.key)
        try Self.writeAndClose(directory, readBack: true)

        // When one payload byte is changed in place with the modification time restored (the status-change time
        // still moves)
        try DiskCacheVerifiedReadTests.damagePayloadInPlace(path)

        // Then a new cache of the same boot checks the file, reads a miss and removes it
        let reader = try DiskCache(directory: directory, configuration: Self.configuration(boot: Self.bootX))
        defer { reader.close() }
        #expect(reader.entry(for: Self.key) == nil)
        #expect(reader.payloadChecks == 1)
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func aReplacementByAnotherCacheCarriesItsOwnSeal() throws {
        // Given an entry sealed by cache A in boot X, When cache B replaces it
        let directory = makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        let a = try DiskCache(directory: directory, configuration: Self.configuration(boot: Self.bootX))
        try a.storeSynchronously(CachePayload.make(key: Self.key, version: 1), for: Self.key)
        let b = try DiskCache(directory: directory, configuration: Self.configuration(boot: Self.bootX))
        let replacement = CachePayload.make(key: Self.key, version: 2)
        try b.storeSynchronously(replacement, for: Self.key)
        b.close()

        // Then A, whose index still holds the old seal, checks the new file once (and returns it); a new cache
        // trusts B's seal
        #expect(a.entry(for: Self.key)?.data == replacement)
        #expect(a.payloadChecks == 1)
        a.close()
        #expect(try Self.checksOfOneRead(directory, boot: Self.bootX, payload: replacement) == 0)
    }

    @Test func withoutABootIdentityNothingIsSealed() throws {
        // Given a cache whose boot is unknown (no /proc), When it writes an entry
        let directory = makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        let payload = Self.payload()
        let writer = try DiskCache(directory: directory, configuration: Self.configuration(boot: []))
        try writer.storeSynchronously(payload, for: Self.key)
        #expect(writer.entry(for: Self.key)?.data == payload)

        // Then its index holds no seal, it trusts only its own memo, and every new cache checks the file
        #expect(writer.state.withLock { $0.index.record(for: SHA256.hash(Self.key))?.seal } == 0)
        #expect(writer.payloadChecks == 0)
        writer.close()
        #expect(try Self.checksOfOneRead(directory, boot: [], payload: payload) == 1)
        #expect(try Self.checksOfOneRead(directory, boot: [], payload: payload) == 1)
    }

    @Test func verifySealsTheFilesItFoundGood() throws {
        // Given two entries written in boot X
        let directory = makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        try Self.writeAndClose(directory, keys: [Self.key, Self.key + "?2"])

        // When a cache of boot Y verifies the directory
        let verifier = try DiskCache(directory: directory, configuration: Self.configuration(boot: Self.bootY))
        #expect(try verifier.verify() == DiskCache.VerifyReport(checked: 2, corrupt: 0, removed: 0))
        verifier.close()

        // Then a later cache of boot Y reads them without the checksum
        #expect(try Self.checksOfOneRead(directory, boot: Self.bootY, payload: Self.payload()) == 0)
    }

    @Test func readsAddingSealsStillAppendAtTheBoundOfPendingRecords() async throws {
        // Given entries written in boot X, and a cache of boot Y that would keep its reads for an hour
        let directory = makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        let keys = (0..<(DiskCache.maxPendingRecords / 2 + 1)).map { "\(Self.key)?\($0)" }
        try Self.writeAndClose(directory, keys: keys)
        var configuration = Self.configuration(boot: Self.bootY)
        configuration.accessPersistenceDelay = .seconds(3600)
        let reader = try DiskCache(directory: directory, configuration: configuration)
        defer { reader.close() }
        let journal = directory.appendingPathComponent("journal").path
        func journalSize() -> Int { (try? FileManager.default.attributesOfItem(atPath: journal)[.size] as? Int) ?? 0 }
        let before = journalSize()

        // When it reads every entry twice, the first read of each sealing the version it read (one touch record per
        // read, the first carrying the seal), so that more records are pending than the bound
        for key in keys {
            #expect(reader.entry(for: key) != nil)
            #expect(reader.entry(for: key) != nil)
        }

        // Then the pending records are appended to the journal at once, not an hour later
        let appended = await ImagoTesting.eventually {
            journalSize() >= before + DiskCache.maxPendingRecords * DiskCacheJournal.recordSize
        }
        #expect(appended)
    }

    @Test func verifiesEveryReadChecksASealedFileEveryTime() throws {
        // Given an entry sealed in boot X
        let directory = makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        let payload = Self.payload()
        try Self.writeAndClose(directory)

        // When a cache of boot X that verifies every read reads it twice, Then it checks it twice
        var configuration = Self.configuration(boot: Self.bootX)
        configuration.verifiesEveryRead = true
        let reader = try DiskCache(directory: directory, configuration: configuration)
        defer { reader.close() }
        #expect(reader.entry(for: Self.key)?.data == payload)
        #expect(reader.entry(for: Self.key)?.data == payload)
        #expect(reader.payloadChecks == 2)
    }

    #if os(Linux)
        @Test func theBootIdentityIsTheKernelsBootID() throws {
            // /proc reports a size of 0 for the file: the identity must come from reading it, not from its size.
            let text = try String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8)
            let expected = Array(text.trimmingCharacters(in: .whitespacesAndNewlines).utf8)
            #expect(expected.count == 36)
            #expect(DiskCache.currentBootIdentity == expected)
        }
    #endif

    @Test func theSealNamesTheBootAndEveryPartOfTheStamp() throws {
        // Given caches of two boots and one file's stamp
        let directory = makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        let x = try DiskCache(directory: directory, configuration: Self.configuration(boot: Self.bootX))
        let y = try DiskCache(directory: directory, configuration: Self.configuration(boot: Self.bootY))
        defer {
            x.close()
            y.close()
        }
        var st = stat()
        st.st_dev = 1
        st.st_ino = 2
        st.st_size = 3
        st.st_mtim = timespec(tv_sec: 4, tv_nsec: 5)
        st.st_ctim = timespec(tv_sec: 6, tv_nsec: 7)
        let stamp = DiskCacheDirectory.FileStamp(st)
        let seal = try #require(x.seal(of: stamp))

        // Then the seal is stable, never 0, and changes with the boot and with each field of the stamp
        #expect(seal != 0 && x.seal(of: stamp) == seal)
        #expect(y.seal(of: stamp) != seal)
        var variants: [stat] = []
        for change in 0..<6 {
            var other = st
            switch change {
            case 0: other.st_dev = 9
            case 1: other.st_ino = 9
            case 2: other.st_size = 9
            case 3: other.st_mtim.tv_nsec = 9
            case 4: other.st_ctim.tv_nsec = 9
            default: other.st_ctim.tv_sec = 9
            }
            variants.append(other)
        }
        for other in variants { #expect(x.seal(of: DiskCacheDirectory.FileStamp(other)) != seal) }
    }

    @Test func anIndexOfTheFormerFormatIsRebuiltWithItsEntries() throws {
        // Given a cache of 3 entries whose index snapshot says format version 1 (as stop 14's caches wrote)
        let directory = makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        let keys = (0..<3).map { "\(Self.key)?\($0)" }
        try Self.writeAndClose(directory, keys: keys)
        let index = directory.appendingPathComponent("index")
        var bytes = try Data(contentsOf: index)
        bytes[8] = 1
        try bytes.write(to: index)

        // When a cache opens it, Then it says why it rebuilt the index, and every entry reads back
        let recorder = HookRecorder()
        let reader = try DiskCache(directory: directory, configuration: Self.configuration(boot: Self.bootX, recorder))
        defer { reader.close() }
        #expect(recorder.logs.value.contains { $0.contains("snapshot format version 1, this build reads 3") })
        for key in keys { #expect(reader.entry(for: key)?.data == Self.payload(key)) }
        #expect(reader.statistics.entryCount == 3)
    }
}
