import Foundation
import ImagoTesting
import Testing

@testable import ImagoCore

@Suite struct DiskCacheEntryFormatTests {
    static func file(
        key: String = "https://example.com/a.jpg", payload: [UInt8], metadata: DataCacheMetadata
    ) -> [UInt8] {
        let checksum = payload.withUnsafeBytes { LaneChecksum.hash($0) }
        let header = try! DiskCacheEntryFile.encodeHeader(
            key: key, dataLength: payload.count, dataChecksum: checksum, metadata: metadata, lastAccess: 12.5
        ).get()
        return header + payload
    }

    static let metadata = DataCacheMetadata(
        storedAt: Date(timeIntervalSinceReferenceDate: 1234.5), expiresAt: Date(timeIntervalSinceReferenceDate: 9999),
        validators: HTTPValidators(etag: "W/\"abc\"", lastModified: "Tue, 15 Nov 1994 12:45:26 GMT"),
        contentType: "image/jpeg")
    /// ``metadata`` with extra bytes, so the damage tests cover them too.
    static let metadataWithExtra: DataCacheMetadata = {
        var metadata = Self.metadata
        metadata.extra = Data("{\"resultSize\":{\"width\":1}}".utf8)
        return metadata
    }()

    @Test func roundTripsEveryField() throws {
        let payload = (0..<1000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let bytes = Self.file(payload: payload, metadata: Self.metadata)
        let header = try bytes.withUnsafeBytes { try DiskCacheEntryFile.parse($0).get() }
        #expect(header.key == "https://example.com/a.jpg")
        #expect(header.metadata == Self.metadata)
        #expect(header.lastAccess == 12.5)
        #expect(header.dataLength == 1000)
        #expect(Array(bytes[header.headerLength...]) == payload)
    }

    @Test func keepsExtraBytesAndReadsFilesFromBeforeThem() throws {
        var metadata = Self.metadata
        metadata.extra = Data((0..<300).map { UInt8(truncatingIfNeeded: $0) })
        let bytes = Self.file(payload: [1, 2, 3], metadata: metadata)
        let header = try bytes.withUnsafeBytes { try DiskCacheEntryFile.parse($0).get() }
        #expect(header.metadata == metadata && Array(bytes[header.headerLength...]) == [1, 2, 3])
        // A file written before `extra` existed held 0 at its offset (60): no extra bytes
        let older = Self.file(payload: [1, 2, 3], metadata: Self.metadata)
        #expect(older[60..<64].allSatisfy { $0 == 0 })
        #expect(try older.withUnsafeBytes { try DiskCacheEntryFile.parse($0).get() }.metadata.extra == nil)
        // Empty is kept as none; over the bound, the entry is refused
        metadata.extra = Data()
        let empty = Self.file(payload: [], metadata: metadata)
        #expect(try empty.withUnsafeBytes { try DiskCacheEntryFile.parse($0).get() }.metadata.extra == nil)
        metadata.extra = Data(count: DataCacheMetadata.maximumExtraLength + 1)
        #expect(throws: DiskCache.Error.self) {
            try DiskCacheEntryFile.encodeHeader(
                key: "k", dataLength: 0, dataChecksum: 0, metadata: metadata, lastAccess: 0
            ).get()
        }
    }

    @Test func keepsAbsentFieldsAbsent() throws {
        let metadata = DataCacheMetadata(storedAt: Date(timeIntervalSinceReferenceDate: 1))
        let bytes = Self.file(payload: [], metadata: metadata)
        let header = try bytes.withUnsafeBytes { try DiskCacheEntryFile.parse($0).get() }
        #expect(header.metadata == metadata)
        #expect(header.metadata.expiresAt == nil && header.metadata.contentType == nil)
        #expect(header.metadata.validators.isEmpty)
    }

    @Test func rejectsEveryTruncationAndEveryExtension() {
        let bytes = Self.file(payload: Array(repeating: 7, count: 40), metadata: Self.metadataWithExtra)
        for length in 0..<bytes.count {
            let result = Array(bytes.prefix(length)).withUnsafeBytes { DiskCacheEntryFile.parse($0) }
            #expect(throws: DiskCacheEntryFile.Corruption.self, "prefix \(length)") { try result.get() }
        }
        let longer = bytes + [0]
        #expect(throws: DiskCacheEntryFile.Corruption.self) {
            try longer.withUnsafeBytes { try DiskCacheEntryFile.parse($0).get() }
        }
    }

    @Test func rejectsEverySingleBitFlip() {
        let bytes = Self.file(payload: Array(repeating: 7, count: 40), metadata: Self.metadataWithExtra)
        for index in bytes.indices {
            for bit in 0..<8 {
                var damaged = bytes
                damaged[index] ^= 1 << bit
                let result = damaged.withUnsafeBytes { DiskCacheEntryFile.parse($0) }
                #expect(throws: DiskCacheEntryFile.Corruption.self, "byte \(index) bit \(bit)") { try result.get() }
            }
        }
    }

    @Test func neverTrapsOnRandomMutations() {
        // A small in-test fuzzer: random overwrites, inserted and deleted runs, on a valid file and on noise.
        var generator = ImagoTesting.SeededGenerator(seed: 2026)
        let valid = Self.file(payload: Array(repeating: 1, count: 300), metadata: Self.metadata)
        var accepted = 0
        for round in 0..<3000 {
            var bytes =
                round % 10 == 0
                ? (0..<Int.random(in: 0..<200, using: &generator)).map { _ in
                    UInt8.random(in: 0...255, using: &generator)
                } : valid
            for _ in 0..<Int.random(in: 1...4, using: &generator) where !bytes.isEmpty {
                let at = Int.random(in: 0..<bytes.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: bytes[at] = UInt8.random(in: 0...255, using: &generator)
                case 1:
                    bytes.insert(
                        contentsOf: [UInt8](repeating: 0xFF, count: Int.random(in: 1...8, using: &generator)), at: at)
                default: bytes.removeSubrange(at..<min(bytes.count, at + Int.random(in: 1...8, using: &generator)))
                }
            }
            if case .success = bytes.withUnsafeBytes({ DiskCacheEntryFile.parse($0) }) {
                accepted += 1
                #expect(bytes == valid)
            }
        }
        #expect(accepted < 3000)
    }

    @Test func refusesKeysAndFieldsOverTheirBounds() {
        let long = String(repeating: "k", count: DiskCacheEntryFile.maxKeyLength + 1)
        let result = DiskCacheEntryFile.encodeHeader(
            key: long, dataLength: 0, dataChecksum: 0, metadata: DataCacheMetadata(), lastAccess: 0)
        #expect(throws: DiskCache.Error.self) { try result.get() }
        let etag = String(repeating: "e", count: DiskCacheEntryFile.maxFieldLength + 1)
        let result2 = DiskCacheEntryFile.encodeHeader(
            key: "k", dataLength: 0, dataChecksum: 0,
            metadata: DataCacheMetadata(validators: HTTPValidators(etag: etag)), lastAccess: 0)
        #expect(throws: DiskCache.Error.self) { try result2.get() }
    }
}

@Suite struct DiskCacheJournalFormatTests {
    /// Five records; all but the first with a seal.
    static let records = (0..<5).map { (i: Int) -> DiskCacheIndex.Record in
        let seal: UInt64 = i == 0 ? 0 : 0x9E37_79B9_7F4A_7C15 &* UInt64(i)
        return DiskCacheIndex.Record(
            digest: SHA256.hash("key \(i)"), size: UInt64(100 + i), storedAt: Double(i), lastAccess: Double(i) + 0.5,
            seal: seal)
    }

    @Test func snapshotRoundTripsAndRejectsDamage() throws {
        let bytes = DiskCacheJournal.encodeSnapshot(generation: 7, records: Self.records)
        let parsed = try bytes.withUnsafeBytes { try DiskCacheJournal.parseSnapshot($0).get() }
        #expect(parsed.generation == 7)
        #expect(parsed.records == Self.records)
        for index in stride(from: 0, to: bytes.count, by: 3) {
            var damaged = bytes
            damaged[index] ^= 0x10
            #expect(throws: DiskCacheEntryFile.Corruption.self) {
                try damaged.withUnsafeBytes { try DiskCacheJournal.parseSnapshot($0).get() }
            }
        }
        for length in [0, 10, 39, bytes.count - 1] {
            #expect(throws: DiskCacheEntryFile.Corruption.self) {
                try Array(bytes.prefix(length)).withUnsafeBytes { try DiskCacheJournal.parseSnapshot($0).get() }
            }
        }
    }

    @Test func journalSkipsATornRecordAndKeepsTheOnesAfterIt() {
        var records = Self.records.map { DiskCacheJournal.Record(.put, $0) }
        records[3] = .touch(Self.records[1].digest, at: 9.5, seal: 0xFEED_FACE_CAFE_BEEF)
        let first = DiskCacheJournal.encode(Array(records.prefix(2)))
        let torn = Array(DiskCacheJournal.encode([records[2]]).prefix(30))
        let rest = DiskCacheJournal.encode(Array(records.suffix(2)))
        let parsed = (first + torn + rest).withUnsafeBytes { DiskCacheJournal.parseRecords($0) }
        #expect(parsed.records == Array(records.prefix(2)) + Array(records.suffix(2)))
        #expect(parsed.damaged)
        let clean = (first + rest).withUnsafeBytes { DiskCacheJournal.parseRecords($0) }
        #expect(!clean.damaged && clean.consumed == first.count + rest.count)
    }

    @Test func aTouchWithASealSetsItAndOneWithoutLeavesIt() {
        var index = DiskCacheIndex()
        for record in Self.records.prefix(3) { index.put(record) }
        DiskCacheJournal.apply(.touch(Self.records[0].digest, at: 10, seal: 42), to: &index)
        DiskCacheJournal.apply(.touch(Self.records[1].digest, at: 11), to: &index)
        DiskCacheJournal.apply(.touch(Self.records[4].digest, at: 12, seal: 43), to: &index)  // not in the index
        #expect(index.record(for: Self.records[0].digest)?.seal == 42)
        #expect(index.record(for: Self.records[1].digest)?.seal == Self.records[1].seal)
        #expect(index.recordsInLRUOrder().map(\.digest) == [2, 0, 1].map { Self.records[$0].digest })
        #expect(index.count == 3 && index.record(for: Self.records[4].digest) == nil)
    }

    @Test func journalHeaderRoundTripsAndRejectsDamage() {
        let header = DiskCacheJournal.encodeJournalHeader(generation: 42)
        #expect(header.withUnsafeBytes { DiskCacheJournal.parseJournalHeader($0) } == 42)
        var damaged = header
        damaged[17] ^= 1
        #expect(damaged.withUnsafeBytes { DiskCacheJournal.parseJournalHeader($0) } == nil)
        #expect([UInt8]().withUnsafeBytes { DiskCacheJournal.parseJournalHeader($0) } == nil)
    }

    @Test func neverTrapsOnNoise() {
        var generator = ImagoTesting.SeededGenerator(seed: 400)
        for length in 0..<400 {
            let noise = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            noise.withUnsafeBytes { buffer in
                _ = DiskCacheJournal.parseSnapshot(buffer)
                _ = DiskCacheJournal.parseRecords(buffer)
                _ = DiskCacheJournal.parseJournalHeader(buffer)
            }
        }
    }
}
