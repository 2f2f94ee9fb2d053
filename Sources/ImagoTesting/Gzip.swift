import Foundation

extension ImagoTesting {
    /// Builds gzip streams for `Content-Encoding: gzip` routes without zlib: stored (uncompressed) blocks for any
    /// payload, and a highly compressed run of zeros for decompression-bomb tests.
    public enum Gzip {
        /// `data` as a valid gzip stream of stored deflate blocks (about 5 bytes of overhead per 64 KB).
        public static func stored(_ data: Data) -> Data {
            var output = header
            output.reserveCapacity(data.count + data.count / 65535 * 5 + 32)
            let bytes = [UInt8](data)
            var offset = 0
            repeat {
                let count = min(65535, bytes.count - offset)
                let isFinal = offset + count == bytes.count
                output.append(isFinal ? 1 : 0)
                output.append(contentsOf: [UInt8(count & 0xFF), UInt8(count >> 8)])
                output.append(contentsOf: [UInt8(~count & 0xFF), UInt8((~count >> 8) & 0xFF)])
                output.append(contentsOf: bytes[offset..<(offset + count)])
                offset += count
            } while offset < bytes.count
            appendTrailer(to: &output, crc: crc32(bytes), size: bytes.count)
            return output
        }

        /// `count` zero bytes as a gzip stream of about `count / 158` bytes (one fixed-Huffman block of
        /// length-258 back-references): 100 MB inflate from about 650 KB.
        public static func zeros(count: Int) -> Data {
            var bits = BitWriter()
            bits.write(1, bitCount: 1)  // BFINAL
            bits.write(1, bitCount: 2)  // BTYPE 01: fixed Huffman codes
            var remaining = count
            if remaining > 0 {
                bits.writeCode(0x30, length: 8)  // literal 0
                remaining -= 1
            }
            while remaining >= 258 {
                bits.writeCode(0xC5, length: 8)  // length code 285: 258 bytes, no extra bits
                bits.writeCode(0, length: 5)  // distance code 0: distance 1
                remaining -= 258
            }
            for _ in 0..<remaining { bits.writeCode(0x30, length: 8) }
            bits.writeCode(0, length: 7)  // end of block (256)
            var output = header
            output.append(contentsOf: bits.finish())
            appendTrailer(to: &output, crc: crc32OfZeros(count), size: count)
            return output
        }

        private static let header = Data([0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 0xFF])

        private static func appendTrailer(to output: inout Data, crc: UInt32, size: Int) {
            let size32 = UInt32(truncatingIfNeeded: size)
            for value in [crc, size32] {
                output.append(contentsOf: [0, 8, 16, 24].map { UInt8(truncatingIfNeeded: value >> $0) })
            }
        }

        private static let crcTable: [UInt32] = (0..<256).map { index in
            var value = UInt32(index)
            for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
            return value
        }

        static func crc32(_ bytes: [UInt8]) -> UInt32 {
            var crc: UInt32 = 0xFFFF_FFFF
            for byte in bytes { crc = crcTable[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
            return ~crc
        }

        private static func crc32OfZeros(_ count: Int) -> UInt32 {
            var crc: UInt32 = 0xFFFF_FFFF
            for _ in 0..<count { crc = crcTable[Int(crc & 0xFF)] ^ (crc >> 8) }
            return ~crc
        }
    }
}

/// Packs bits least-significant first, as deflate does; Huffman codes go most-significant bit first.
private struct BitWriter {
    private var bytes: [UInt8] = []
    private var accumulator: UInt64 = 0
    private var pending = 0

    mutating func write(_ value: UInt32, bitCount: Int) {
        accumulator |= UInt64(value) << UInt64(pending)
        pending += bitCount
        while pending >= 8 {
            bytes.append(UInt8(truncatingIfNeeded: accumulator))
            accumulator >>= 8
            pending -= 8
        }
    }

    mutating func writeCode(_ code: UInt32, length: Int) {
        var reversed: UInt32 = 0
        for bit in 0..<length where code & (1 << UInt32(bit)) != 0 { reversed |= 1 << UInt32(length - 1 - bit) }
        write(reversed, bitCount: length)
    }

    mutating func finish() -> [UInt8] {
        if pending > 0 { bytes.append(UInt8(truncatingIfNeeded: accumulator)) }
        accumulator = 0
        pending = 0
        return bytes
    }
}
