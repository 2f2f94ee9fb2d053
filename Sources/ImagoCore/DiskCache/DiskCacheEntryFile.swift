import Foundation

/// The binary format of one entry file, version 1. All integers little-endian; times are the bit patterns of
/// `Date.timeIntervalSinceReferenceDate` doubles (so they round-trip exactly).
///
/// ```
/// offset size field
///  0      4   magic "IMDC"
///  4      2   version (1)
///  6      2   flags: bit 0 = expiresAt present; other bits must be 0
///  8      4   headerLength: bytes from offset 0 to the first payload byte
/// 12      4   keyLength
/// 16      8   dataLength: payload bytes; file size = headerLength + dataLength exactly
/// 24      8   storedAt
/// 32      8   lastAccess (when written; the index holds the live value)
/// 40      8   expiresAt (0 when absent)
/// 48      4   etagLength          (0xFFFF_FFFF = absent)
/// 52      4   lastModifiedLength  (0xFFFF_FFFF = absent)
/// 56      4   contentTypeLength   (0xFFFF_FFFF = absent)
/// 60      4   extraLength (0 = absent; files before `extra` existed hold 0 here)
/// 64      8   dataChecksum: LaneChecksum of the payload
/// 72      …   key, etag, lastModified, contentType (UTF-8, in this order, no terminators), extra (bytes)
/// hL-8    8   headerChecksum: XXH64 of bytes 0 ..< headerLength-8
/// hL      …   payload
/// ```
/// The parser bounds every length (key ≤ 64 KiB, each other string and `extra` ≤ 16 KiB) before reading, checks
/// that the lengths add up to `headerLength` and the file size exactly, and verifies both checksums: a truncated,
/// extended or altered file is reported corrupt, never trapped on and never returned. (A reader from before
/// `extra` finds the lengths do not add up in a file that has one, and reports it corrupt: a miss, never wrong
/// bytes.)
package enum DiskCacheEntryFile {
    static let magic: UInt32 = 0x4344_4D49  // "IMDC"
    static let version: UInt16 = 1
    static let fixedSize = 72
    static let minimumHeaderSize = fixedSize + 8
    package static let maxKeyLength = 64 * 1024
    package static let maxFieldLength = 16 * 1024
    static let absent = UInt32.max

    /// What the header of a valid entry file says.
    package struct Header: Sendable, Equatable {
        package var key: String
        package var metadata: DataCacheMetadata
        package var lastAccess: Double
        package var headerLength: Int
        package var dataLength: Int
    }

    /// The header bytes for an entry whose payload has checksum `dataChecksum`; `nil` when the key or a
    /// metadata string exceeds its bound (with the reason).
    package static func encodeHeader(
        key: String, dataLength: Int, dataChecksum: UInt64, metadata: DataCacheMetadata, lastAccess: Double
    ) -> Result<[UInt8], DiskCache.Error> {
        let keyBytes = Array(key.utf8)
        guard keyBytes.count <= maxKeyLength else {
            return .failure(.entryRejected(reason: "its key is \(keyBytes.count) bytes long, over \(maxKeyLength)"))
        }
        let fields: [(String, String?)] = [
            ("ETag", metadata.validators.etag), ("Last-Modified", metadata.validators.lastModified),
            ("Content-Type", metadata.contentType),
        ]
        var fieldBytes: [[UInt8]?] = []
        for (name, value) in fields {
            let bytes = value.map { Array($0.utf8) }
            if let bytes, bytes.count > maxFieldLength {
                return .failure(
                    .entryRejected(reason: "its \(name) is \(bytes.count) bytes long, over \(maxFieldLength)"))
            }
            fieldBytes.append(bytes)
        }
        let extra = metadata.extra ?? Data()
        guard extra.count <= maxFieldLength else {
            return .failure(.entryRejected(reason: "its extra bytes are \(extra.count) long, over \(maxFieldLength)"))
        }
        let headerLength =
            minimumHeaderSize + keyBytes.count + fieldBytes.reduce(0) { $0 + ($1?.count ?? 0) } + extra.count
        var w = LittleEndianWriter(capacity: headerLength)
        w.u32(magic)
        w.u16(version)
        w.u16(metadata.expiresAt == nil ? 0 : 1)
        w.u32(UInt32(headerLength))
        w.u32(UInt32(keyBytes.count))
        w.u64(UInt64(dataLength))
        w.f64(metadata.storedAt.timeIntervalSinceReferenceDate)
        w.f64(lastAccess)
        w.f64(metadata.expiresAt?.timeIntervalSinceReferenceDate ?? 0)
        for field in fieldBytes { w.u32(field.map { UInt32($0.count) } ?? absent) }
        w.u32(UInt32(extra.count))
        w.u64(dataChecksum)
        w.raw(keyBytes)
        for field in fieldBytes { if let field { w.raw(field) } }
        w.raw(extra)
        let checksum = w.bytes.withUnsafeBytes { XXH64.hash($0) }
        w.u64(checksum)
        return .success(w.bytes)
    }

    /// Parses and verifies a whole entry file. Never traps; every failure is a reason string. With
    /// `verifiesPayload` false the payload's checksum is not computed (for a file version already verified);
    /// the header, its checksum, the lengths and the key are always checked.
    package static func parse(
        _ file: UnsafeRawBufferPointer, verifiesPayload: Bool = true
    ) -> Result<
        Header, Corruption
    > {
        let r = LittleEndianReader(file)
        guard r.count >= minimumHeaderSize else { return .failure(Corruption("file shorter than a header")) }
        guard r.u32(0) == magic else { return .failure(Corruption("bad magic")) }
        guard r.u16(4) == version else { return .failure(Corruption("unknown version \(r.u16(4) ?? 0)")) }
        guard let flags = r.u16(6), flags & ~1 == 0 else { return .failure(Corruption("unknown flags")) }
        guard let hl32 = r.u32(8), let keyLength = r.u32(12), let dataLength = r.u64(16) else {
            return .failure(Corruption("short header"))
        }
        let headerLength = Int(hl32)
        guard headerLength >= minimumHeaderSize, headerLength <= r.count else {
            return .failure(Corruption("header length \(headerLength) out of bounds"))
        }
        guard UInt64(r.count - headerLength) == dataLength else {
            return .failure(Corruption("file holds \(r.count - headerLength) payload bytes, header says \(dataLength)"))
        }
        guard let storedChecksum = r.u64(headerLength - 8), let headerBytes = r.slice(0, headerLength - 8),
            XXH64.hash(headerBytes) == storedChecksum
        else { return .failure(Corruption("header checksum mismatch")) }
        guard keyLength <= UInt32(maxKeyLength) else { return .failure(Corruption("key too long")) }
        // The three optional strings (ETag, Last-Modified, Content-Type) in locals, not arrays: this runs on
        // every read.
        var total = Int(keyLength)
        var lengths: (Int?, Int?, Int?) = (nil, nil, nil)
        for (index, offset) in [48, 52, 56].enumerated() {
            guard let raw = r.u32(offset) else { return .failure(Corruption("short header")) }
            guard raw != absent else { continue }
            guard raw <= UInt32(maxFieldLength) else { return .failure(Corruption("field too long")) }
            switch index {
            case 0: lengths.0 = Int(raw)
            case 1: lengths.1 = Int(raw)
            default: lengths.2 = Int(raw)
            }
            total += Int(raw)
        }
        guard let extraLength = r.u32(60), extraLength <= UInt32(maxFieldLength) else {
            return .failure(Corruption("extra bytes too long"))
        }
        total += Int(extraLength)
        guard total == headerLength - minimumHeaderSize else {
            return .failure(Corruption("string lengths do not add up to the header length"))
        }
        guard let storedAt = r.finiteF64(24), let lastAccess = r.finiteF64(32), let expiresRaw = r.finiteF64(40)
        else { return .failure(Corruption("non-finite time")) }
        var offset = fixedSize
        guard let key = r.string(offset, Int(keyLength)) else { return .failure(Corruption("key is not UTF-8")) }
        offset += Int(keyLength)
        var invalid = false
        func field(_ length: Int?) -> String? {
            guard let length else { return nil }
            defer { offset += length }
            guard let string = r.string(offset, length) else {
                invalid = true
                return nil
            }
            return string
        }
        let etag = field(lengths.0)
        let lastModified = field(lengths.1)
        let contentType = field(lengths.2)
        guard !invalid else { return .failure(Corruption("field is not UTF-8")) }
        let extra = extraLength == 0 ? nil : r.slice(offset, Int(extraLength)).map { Data($0) }
        guard let dataChecksum = r.u64(64), let payload = r.slice(headerLength, Int(dataLength)),
            !verifiesPayload || LaneChecksum.hash(payload) == dataChecksum
        else { return .failure(Corruption("payload checksum mismatch")) }
        let metadata = DataCacheMetadata(
            storedAt: Date(timeIntervalSinceReferenceDate: storedAt),
            expiresAt: flags & 1 == 1 ? Date(timeIntervalSinceReferenceDate: expiresRaw) : nil,
            validators: HTTPValidators(etag: etag, lastModified: lastModified), contentType: contentType, extra: extra)
        return .success(
            Header(
                key: key, metadata: metadata, lastAccess: lastAccess, headerLength: headerLength,
                dataLength: Int(dataLength)))
    }

    /// Why a file is not a valid entry (for logs).
    package struct Corruption: Swift.Error, Sendable, CustomStringConvertible {
        package var description: String
        init(_ description: String) { self.description = description }
    }
}
