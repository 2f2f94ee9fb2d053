import Foundation
import ImagoCore

/// Self-checking payloads for cache tests: the bytes are derived from the key and a version number written in
/// their first 8 bytes, so whoever reads them back (another process, after a crash) can tell whether they are
/// exactly what some writer stored for that key.
public enum CachePayload {
    /// The payload for `key` at `version`: 8 bytes of version (little-endian), then a pseudo-random stream
    /// seeded by key and version, of a length in `minLength...maxLength` also derived from them.
    public static func make(key: String, version: UInt64, minLength: Int = 64, maxLength: Int = 8192) -> Data {
        var seed = XXH64.hash(Array(key.utf8), seed: version) | 1
        let span = UInt64(max(maxLength - minLength, 0) + 1)
        let length = max(minLength + Int(next(&seed) % span), 8)
        var bytes = [UInt8](repeating: 0, count: length)
        withUnsafeBytes(of: version.littleEndian) { for i in 0..<8 { bytes[i] = $0[i] } }
        var i = 8
        while i < length {
            let word = next(&seed)
            for shift in stride(from: 0, to: 64, by: 8) where i < length {
                bytes[i] = UInt8(truncatingIfNeeded: word >> UInt64(shift))
                i += 1
            }
        }
        return Data(bytes)
    }

    /// Whether `data` is exactly `make(key:version:…)` for the version it names.
    public static func isValid(_ data: Data, for key: String, minLength: Int = 64, maxLength: Int = 8192) -> Bool {
        guard data.count >= 8 else { return false }
        let version = data.prefix(8).enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << UInt64(8 * $1.offset) }
        return data == make(key: key, version: version, minLength: minLength, maxLength: maxLength)
    }

    private static func next(_ state: inout UInt64) -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }
}
