import Foundation
import ImagoCore

/// A value as stored in Redis: the disk cache's checksummed entry format (``DiskCacheEntryFile``), header then
/// bytes, so that the key inside is compared on every read and any altered byte fails a checksum.
enum RedisValue {
    /// The stored form of `entry` for `key`, or `nil` when it would be over `limit` bytes (or its key or a
    /// metadata string is over the format's bounds).
    static func encode(_ entry: DataCacheEntry, key: String, limit: Int) -> Data? {
        let checksum = entry.data.withUnsafeBytes { LaneChecksum.hash($0) }
        guard
            case .success(let header) = DiskCacheEntryFile.encodeHeader(
                key: key, dataLength: entry.data.count, dataChecksum: checksum, metadata: entry.metadata,
                lastAccess: Date().timeIntervalSinceReferenceDate),
            header.count + entry.data.count <= limit
        else { return nil }
        var value = Data(capacity: header.count + entry.data.count)
        value.append(contentsOf: header)
        value.append(entry.data)
        return value
    }

    /// Why a stored value is not an entry for the key asked for.
    enum Invalid: Error {
        /// Not a valid entry (truncated, altered, not the format).
        case corrupt(String)
        /// A valid entry for another key (a digest collision or a planted value).
        case otherKey
    }

    /// The entry in `value` if it is valid and holds `key`.
    static func decode(_ value: Data, key: String) -> Result<DataCacheEntry, Invalid> {
        value.withUnsafeBytes { buffer in
            switch DiskCacheEntryFile.parse(buffer) {
            case .failure(let corruption): return .failure(.corrupt(corruption.description))
            case .success(let header):
                guard header.key == key else { return .failure(.otherKey) }
                return .success(DataCacheEntry(data: payload(of: value, in: buffer, header), metadata: header.metadata))
            }
        }
    }

    /// The payload of `value` (whose bytes are `buffer`) as its own `Data`. A large one shares `value`'s storage
    /// instead of being copied (the `Data` keeps `value` alive); a small one is copied (`Data` stores up to 14
    /// bytes inline, so only a heap storage has a stable address).
    private static func payload(
        of value: Data, in buffer: UnsafeRawBufferPointer, _ header: DiskCacheEntryFile.Header
    ) -> Data {
        let range = header.headerLength..<(header.headerLength + header.dataLength)
        guard header.dataLength >= sharedPayloadMinimum, let base = buffer.baseAddress else {
            return Data(UnsafeRawBufferPointer(rebasing: buffer[range]))
        }
        return Data(
            bytesNoCopy: UnsafeMutableRawPointer(mutating: base + header.headerLength), count: header.dataLength,
            deallocator: .custom { _, _ in withExtendedLifetime(value) {} })
    }

    /// Payloads from this size on are handed out without a copy.
    static let sharedPayloadMinimum = 4096
}
