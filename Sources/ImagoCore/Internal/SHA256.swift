/// A SHA-256 digest (FIPS 180-4): 32 bytes kept as four big-endian words, so that it hashes and compares fast
/// as a dictionary key and prints as the usual lowercase hex.
package struct SHA256Digest: Hashable, Sendable {
    /// Bytes 0-7, 8-15, 16-23 and 24-31 of the digest, each read big-endian.
    package var w0: UInt64, w1: UInt64, w2: UInt64, w3: UInt64

    package init(w0: UInt64, w1: UInt64, w2: UInt64, w3: UInt64) {
        self.w0 = w0
        self.w1 = w1
        self.w2 = w2
        self.w3 = w3
    }

    /// The digest from 32 bytes at `pointer`.
    package init(bytes pointer: UnsafeRawPointer) {
        w0 = UInt64(bigEndian: pointer.loadUnaligned(fromByteOffset: 0, as: UInt64.self))
        w1 = UInt64(bigEndian: pointer.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        w2 = UInt64(bigEndian: pointer.loadUnaligned(fromByteOffset: 16, as: UInt64.self))
        w3 = UInt64(bigEndian: pointer.loadUnaligned(fromByteOffset: 24, as: UInt64.self))
    }

    /// The 32 bytes, in order.
    package var bytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(32)
        for word in [w0, w1, w2, w3] {
            for shift in stride(from: 56, through: 0, by: -8) {
                out.append(UInt8(truncatingIfNeeded: word >> UInt64(shift)))
            }
        }
        return out
    }

    /// The 64 lowercase hex digits.
    package var hex: String {
        String(unsafeUninitializedCapacity: 64) { buffer in
            writeHex(into: buffer)
            return 64
        }
    }

    /// Writes the 64 lowercase hex digits (UTF-8) into the first 64 bytes of `buffer` (which must hold them).
    package func writeHex(into buffer: UnsafeMutableBufferPointer<UInt8>) {
        let digits: StaticString = "0123456789abcdef"
        var i = 0
        for word in [w0, w1, w2, w3] {
            var shift: UInt64 = 60
            while true {
                buffer[i] = digits.utf8Start[Int((word >> shift) & 0xF)]
                i += 1
                if shift == 0 { break }
                shift -= 4
            }
        }
    }

    /// Parses 64 hex digits (either case); `nil` for anything else.
    package init?(hex: some StringProtocol) {
        let utf8 = Array(hex.utf8)
        guard utf8.count == 64 else { return nil }
        var words: [UInt64] = [0, 0, 0, 0]
        for (i, c) in utf8.enumerated() {
            let v: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): v = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): v = c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): v = c - UInt8(ascii: "A") + 10
            default: return nil
            }
            words[i / 16] = words[i / 16] << 4 | UInt64(v)
        }
        self.init(w0: words[0], w1: words[1], w2: words[2], w3: words[3])
    }
}

/// SHA-256 (FIPS 180-4) in pure Swift: the disk cache names its files by the digest of the key. Not constant
/// time and not meant for secrets.
package enum SHA256 {
    /// The digest of the UTF-8 bytes of `string`.
    package static func hash(_ string: String) -> SHA256Digest {
        var string = string
        return string.withUTF8 { hash(UnsafeRawBufferPointer($0)) }
    }

    /// The digest of `bytes`.
    package static func hash(_ bytes: [UInt8]) -> SHA256Digest {
        bytes.withUnsafeBytes { hash($0) }
    }

    /// The digest of the bytes in `buffer`.
    package static func hash(_ buffer: UnsafeRawBufferPointer) -> SHA256Digest {
        var h = State()
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { w in
            let count = buffer.count
            var offset = 0
            if let base = buffer.baseAddress {
                while count - offset >= 64 {
                    compress(&h, base + offset, w)
                    offset += 64
                }
            }
            // Padding: 0x80, zeros, then the bit length as a 64-bit big-endian number, in one or two blocks.
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 128) { tail in
                let rest = count - offset
                for i in 0..<128 { tail[i] = 0 }
                if rest > 0, let base = buffer.baseAddress {
                    for i in 0..<rest { tail[i] = base.load(fromByteOffset: offset + i, as: UInt8.self) }
                }
                tail[rest] = 0x80
                let blocks = rest + 9 <= 64 ? 1 : 2
                let bitLength = UInt64(count) &* 8
                for i in 0..<8 { tail[blocks * 64 - 1 - i] = UInt8(truncatingIfNeeded: bitLength >> UInt64(8 * i)) }
                let raw = UnsafeRawPointer(tail.baseAddress!)
                for b in 0..<blocks { compress(&h, raw + 64 * b, w) }
            }
        }
        return SHA256Digest(
            w0: UInt64(h.a) << 32 | UInt64(h.b), w1: UInt64(h.c) << 32 | UInt64(h.d),
            w2: UInt64(h.e) << 32 | UInt64(h.f), w3: UInt64(h.g) << 32 | UInt64(h.h))
    }

    private struct State {
        var a: UInt32 = 0x6a09_e667, b: UInt32 = 0xbb67_ae85, c: UInt32 = 0x3c6e_f372, d: UInt32 = 0xa54f_f53a
        var e: UInt32 = 0x510e_527f, f: UInt32 = 0x9b05_688c, g: UInt32 = 0x1f83_d9ab, h: UInt32 = 0x5be0_cd19
    }

    @inline(__always) private static func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { (x >> n) | (x << (32 - n)) }

    private static let k: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
    ]

    /// One round: `h` becomes the new `a`, `d` the new `e` (the caller rotates the names for the next round).
    @inline(__always)
    private static func round(
        _ a: UInt32, _ b: UInt32, _ c: UInt32, _ d: inout UInt32, _ e: UInt32, _ f: UInt32, _ g: UInt32,
        _ h: inout UInt32, _ kw: UInt32
    ) {
        let t1 = h &+ (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) &+ ((e & f) ^ (~e & g)) &+ kw
        let t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) &+ ((a & b) ^ (a & c) ^ (b & c))
        d &+= t1
        h = t1 &+ t2
    }

    @inline(__always)
    private static func compress(
        _ state: inout State, _ block: UnsafeRawPointer, _ w: UnsafeMutableBufferPointer<UInt32>
    ) {
        let w = w.baseAddress!
        for i in 0..<16 { w[i] = UInt32(bigEndian: block.loadUnaligned(fromByteOffset: 4 * i, as: UInt32.self)) }
        for i in 16..<64 {
            let s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3)
            let s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10)
            w[i] = w[i - 16] &+ s0 &+ w[i - 7] &+ s1
        }
        var a = state.a, b = state.b, c = state.c, d = state.d
        var e = state.e, f = state.f, g = state.g, h = state.h
        // Eight rounds a turn with the variables' roles rotated through the calls, instead of shifting eight
        // values along after every round (faster; BENCHMARKS.md, figures from comments).
        k.withUnsafeBufferPointer { k in
            let k = k.baseAddress!
            var i = 0
            while i < 64 {
                round(a, b, c, &d, e, f, g, &h, k[i] &+ w[i])
                round(h, a, b, &c, d, e, f, &g, k[i &+ 1] &+ w[i &+ 1])
                round(g, h, a, &b, c, d, e, &f, k[i &+ 2] &+ w[i &+ 2])
                round(f, g, h, &a, b, c, d, &e, k[i &+ 3] &+ w[i &+ 3])
                round(e, f, g, &h, a, b, c, &d, k[i &+ 4] &+ w[i &+ 4])
                round(d, e, f, &g, h, a, b, &c, k[i &+ 5] &+ w[i &+ 5])
                round(c, d, e, &f, g, h, a, &b, k[i &+ 6] &+ w[i &+ 6])
                round(b, c, d, &e, f, g, h, &a, k[i &+ 7] &+ w[i &+ 7])
                i &+= 8
            }
        }
        state.a &+= a
        state.b &+= b
        state.c &+= c
        state.d &+= d
        state.e &+= e
        state.f &+= f
        state.g &+= g
        state.h &+= h
    }
}
