/// wyhash (by Wang Yi; version 4.1, the one Zig's `std.hash.Wyhash` implements, with its test vectors) in pure
/// Swift: the hash of ``ImageCacheKey``, under a per-process random seed. A few 64×64→128-bit multiplies for a
/// URL-sized input, faster there than XXH64 and `Hasher` (BENCHMARKS.md, figures from comments). Not a
/// cryptographic hash; keyed by a secret seed, it keeps an attacker who chooses the inputs from
/// predicting collisions.
package enum WyHash {
    // The default secret of that version.
    private static let s0: UInt64 = 0xA076_1D64_78BD_642F
    private static let s1: UInt64 = 0xE703_7ED1_A0B4_28DB
    private static let s2: UInt64 = 0x8EBC_6AF0_9C88_C6E3
    private static let s3: UInt64 = 0x5899_65CC_7537_4CC3

    /// The hash of the bytes in `buffer` with `seed`.
    @inline(__always)
    package static func hash(_ buffer: UnsafeRawBufferPointer, seed: UInt64) -> UInt64 {
        hash(buffer, mixedSeed: mixSeed(seed))
    }

    /// `seed` as the hash uses it; computing it once saves a multiply per hash (see ``hash(_:mixedSeed:)``).
    package static func mixSeed(_ seed: UInt64) -> UInt64 { seed ^ mix(seed ^ s0, s1) }

    /// The hash of the bytes in `buffer` with a seed already passed through ``mixSeed(_:)``.
    package static func hash(_ buffer: UnsafeRawBufferPointer, mixedSeed: UInt64) -> UInt64 {
        var seed = mixedSeed
        let count = buffer.count
        var a: UInt64 = 0
        var b: UInt64 = 0
        if let p = buffer.baseAddress {
            if count <= 16 {
                if count >= 4 {
                    let shift = (count >> 3) << 2
                    a = read4(p, 0) << 32 | read4(p, shift)
                    b = read4(p, count - 4) << 32 | read4(p, count - 4 - shift)
                } else if count > 0 {
                    a =
                        UInt64(p.load(as: UInt8.self)) << 16 | UInt64(
                            p.load(fromByteOffset: count >> 1, as: UInt8.self)) << 8
                        | UInt64(p.load(fromByteOffset: count - 1, as: UInt8.self))
                }
            } else {
                var offset = 0
                var rest = count
                if rest > 48 {
                    var see1 = seed
                    var see2 = seed
                    repeat {
                        seed = mix(read8(p, offset) ^ s1, read8(p, offset + 8) ^ seed)
                        see1 = mix(read8(p, offset + 16) ^ s2, read8(p, offset + 24) ^ see1)
                        see2 = mix(read8(p, offset + 32) ^ s3, read8(p, offset + 40) ^ see2)
                        offset += 48
                        rest -= 48
                    } while rest > 48
                    seed ^= see1 ^ see2
                }
                while rest > 16 {
                    seed = mix(read8(p, offset) ^ s1, read8(p, offset + 8) ^ seed)
                    offset += 16
                    rest -= 16
                }
                // The last 16 bytes, overlapping bytes already mixed when fewer remain.
                a = read8(p, offset + rest - 16)
                b = read8(p, offset + rest - 8)
            }
        }
        a ^= s1
        b ^= seed
        let product = a.multipliedFullWidth(by: b)
        return mix(product.low ^ s0 ^ UInt64(count), product.high ^ s1)
    }

    @inline(__always) private static func mix(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let product = a.multipliedFullWidth(by: b)
        return product.low ^ product.high
    }

    @inline(__always) private static func read8(_ p: UnsafeRawPointer, _ offset: Int) -> UInt64 {
        UInt64(littleEndian: p.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    @inline(__always) private static func read4(_ p: UnsafeRawPointer, _ offset: Int) -> UInt64 {
        UInt64(UInt32(littleEndian: p.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
    }
}
