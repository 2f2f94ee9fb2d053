import ImagoCore

extension JPEGProgressiveDC {
    /// A canonical Huffman table with a 9-bit lookahead, checked as libjpeg's `jpeg_make_d_derived_tbl` checks it.
    struct HuffmanTable {
        /// Whether the code lengths describe a valid table (no code overflows its length, none is all ones).
        private(set) var isValid = true
        /// Whether every symbol fits a DC table (a difference category 0…15).
        let isValidForDC: Bool
        /// For each 9-bit prefix: `length << 8 | symbol`, or 0 when the code is longer than 9 bits.
        private(set) var lookup = [UInt16](repeating: 0, count: 512)
        /// Largest code of each length (−1: none) and the offset from a code to its symbol index.
        private(set) var maxCode = [Int32](repeating: -1, count: 18)
        private(set) var valueOffset = [Int32](repeating: 0, count: 17)
        let symbols: [UInt8]

        init(counts: [Int], symbols: [UInt8]) {
            self.symbols = symbols
            isValidForDC = symbols.allSatisfy { $0 <= 15 }
            var code: Int32 = 0
            var index: Int32 = 0
            for length in 1...16 {
                let n = Int32(counts[length])
                if n > 0 {
                    valueOffset[length] = index - code
                    code += n
                    index += n
                    // libjpeg: the next code must still fit in `length` bits (so no code is all ones).
                    if code >= Int32(1) << length { isValid = false }
                    maxCode[length] = code - 1
                    if length <= 9 {
                        for c in (code - n)..<code {
                            let symbol = symbols[Int(c + valueOffset[length])]
                            let first = Int(c) << (9 - length)
                            for prefix in first..<(first + 1 << (9 - length)) where prefix < 512 {
                                lookup[prefix] = UInt16(length) << 8 | UInt16(symbol)
                            }
                        }
                    }
                }
                code <<= 1
            }
            maxCode[17] = Int32.max
        }
    }

    /// A Huffman table's arrays seen through pointers, for the inner loop of a scan.
    struct TableView {
        let lookup: UnsafePointer<UInt16>
        let maxCode: UnsafePointer<Int32>
        let valueOffset: UnsafePointer<Int32>
        let symbols: UnsafePointer<UInt8>
        let symbolCount: Int
    }

    /// The bits of one scan's entropy-coded data: 0xFF00 unstuffed, fill 0xFFs skipped; at a marker (or the end)
    /// zero bits are fed, as libjpeg does, but counted so that a decode that used them is refused.
    struct BitReader {
        let bytes: UnsafeRawBufferPointer
        var position: Int
        /// Next bits, most significant first; `count` of them are valid, the last `fakeCount` are fed zeros.
        var buffer: UInt64 = 0
        var count = 0
        var fakeCount = 0
        /// Where the marker that stopped the data starts (its first 0xFF), once met.
        var marker: Int?

        init(bytes: UnsafeRawBufferPointer, position: Int) {
            self.bytes = bytes
            self.position = position
        }

        /// Whether a decode has read past the end of the data.
        var hasOverrun: Bool { count < fakeCount }

        @inline(__always) mutating func fill() {
            while count <= 56 {
                var byte: UInt8 = 0
                if marker != nil {
                    fakeCount += 8
                } else if position >= bytes.count {
                    marker = bytes.count
                    fakeCount += 8
                } else if bytes[position] != 0xFF {
                    byte = bytes[position]
                    position += 1
                } else {
                    var next = position + 1
                    while next < bytes.count && bytes[next] == 0xFF { next += 1 }
                    if next < bytes.count && bytes[next] == 0 {
                        byte = 0xFF
                        position = next + 1
                    } else {
                        marker = position
                        fakeCount += 8
                    }
                }
                buffer |= UInt64(byte) << UInt64(56 - count)
                count += 8
            }
        }

        /// The next `n` bits (1…16) as an unsigned value.
        @inline(__always) mutating func bits(_ n: Int) -> Int32 {
            if count < n { fill() }
            let value = Int32(truncatingIfNeeded: buffer >> UInt64(64 - n))
            buffer <<= UInt64(n)
            count -= n
            return value
        }

        /// The next Huffman-coded symbol, or `nil` for a code the table does not have (libjpeg warns).
        @inline(__always) mutating func symbol(_ table: TableView) -> Int? {
            if count < 16 { fill() }
            let entry = table.lookup[Int(buffer >> 55)]
            if entry != 0 {
                let length = Int(entry >> 8)
                buffer <<= UInt64(length)
                count -= length
                return Int(entry & 0xFF)
            }
            var code = Int32(truncatingIfNeeded: buffer >> 54)  // 10 bits
            var length = 10
            while length <= 16 && code > table.maxCode[length] {
                length += 1
                code = Int32(truncatingIfNeeded: buffer >> UInt64(64 - length))
            }
            guard length <= 16 else { return nil }
            buffer <<= UInt64(length)
            count -= length
            let index = Int(code + table.valueOffset[length])
            guard index >= 0 && index < table.symbolCount else { return nil }
            return Int(table.symbols[index])
        }

        /// At a restart: drops the bits left (libjpeg discards them and any whole bytes before the marker) and
        /// reads the marker, which must be RSTn. `false` for anything else (libjpeg would resynchronise).
        mutating func restart(expecting n: Int) -> Bool {
            buffer = 0
            count = 0
            fakeCount = 0
            var at = marker ?? position
            guard at < bytes.count, bytes[at] == 0xFF else { return false }
            while at < bytes.count && bytes[at] == 0xFF { at += 1 }
            guard at < bytes.count, bytes[at] == 0xD0 + UInt8(n) else { return false }
            position = at + 1
            marker = nil
            return true
        }
    }
}
