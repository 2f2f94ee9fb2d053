/// XXH64 (xxHash, 64-bit, by Yann Collet) in pure Swift: the disk cache's checksum of entry headers, index
/// snapshots and journal records, and the final mix of ``LaneChecksum``. ~10 GB/s. Not a cryptographic hash.
package enum XXH64 {
    private static let p1: UInt64 = 0x9E37_79B1_85EB_CA87
    private static let p2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    private static let p3: UInt64 = 0x1656_67B1_9E37_79F9
    private static let p4: UInt64 = 0x85EB_CA77_C2B2_AE63
    private static let p5: UInt64 = 0x27D4_EB2F_1656_67C5

    /// The hash of `bytes` with `seed` (default 0).
    package static func hash(_ bytes: [UInt8], seed: UInt64 = 0) -> UInt64 {
        bytes.withUnsafeBytes { hash($0, seed: seed) }
    }

    /// The hash of the bytes in `buffer` with `seed` (default 0).
    package static func hash(_ buffer: UnsafeRawBufferPointer, seed: UInt64 = 0) -> UInt64 {
        let count = buffer.count
        guard let p = buffer.baseAddress, count > 0 else { return avalanche(seed &+ p5) }
        var offset = 0
        var h: UInt64
        if count >= 32 {
            var v1 = seed &+ p1 &+ p2
            var v2 = seed &+ p2
            var v3 = seed
            var v4 = seed &- p1
            let limit = count - 32
            while offset <= limit {
                v1 = round(v1, read64(p, offset))
                v2 = round(v2, read64(p, offset + 8))
                v3 = round(v3, read64(p, offset + 16))
                v4 = round(v4, read64(p, offset + 24))
                offset += 32
            }
            h = rotl(v1, 1) &+ rotl(v2, 7) &+ rotl(v3, 12) &+ rotl(v4, 18)
            h = merge(h, v1)
            h = merge(h, v2)
            h = merge(h, v3)
            h = merge(h, v4)
        } else {
            h = seed &+ p5
        }
        h &+= UInt64(count)
        while count - offset >= 8 {
            h ^= round(0, read64(p, offset))
            h = rotl(h, 27) &* p1 &+ p4
            offset += 8
        }
        if count - offset >= 4 {
            h ^= UInt64(UInt32(littleEndian: p.loadUnaligned(fromByteOffset: offset, as: UInt32.self))) &* p1
            h = rotl(h, 23) &* p2 &+ p3
            offset += 4
        }
        while offset < count {
            h ^= UInt64(p.load(fromByteOffset: offset, as: UInt8.self)) &* p5
            h = rotl(h, 11) &* p1
            offset += 1
        }
        return avalanche(h)
    }

    @inline(__always) private static func read64(_ p: UnsafeRawPointer, _ offset: Int) -> UInt64 {
        UInt64(littleEndian: p.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    @inline(__always) private static func rotl(_ x: UInt64, _ r: UInt64) -> UInt64 { (x << r) | (x >> (64 - r)) }

    @inline(__always) private static func round(_ acc: UInt64, _ input: UInt64) -> UInt64 {
        rotl(acc &+ input &* p2, 31) &* p1
    }

    @inline(__always) private static func merge(_ acc: UInt64, _ value: UInt64) -> UInt64 {
        (acc ^ round(0, value)) &* p1 &+ p4
    }

    @inline(__always) private static func avalanche(_ h: UInt64) -> UInt64 {
        var h = h
        h ^= h >> 33
        h &*= p2
        h ^= h >> 29
        h &*= p3
        h ^= h >> 32
        return h
    }
}
