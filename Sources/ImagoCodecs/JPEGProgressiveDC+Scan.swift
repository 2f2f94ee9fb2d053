import Glibc
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
        @inline(__always) mutating func symbol(_ table: HuffmanTable) -> Int? {
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
            guard index >= 0 && index < table.symbols.count else { return nil }
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

    /// One DC scan over the frame's coefficients: a first scan (Huffman-coded differences) or a refinement scan
    /// (one raw bit a block).
    struct DCScan {
        var reader: BitReader
        let members: [Int]
        let tables: [HuffmanTable]
        let refines: Bool
        let al: Int
        let restartInterval: Int

        init(
            bytes: UnsafeRawBufferPointer, start: Int, members: [Int], tables: [HuffmanTable], refines: Bool, al: Int,
            restartInterval: Int
        ) {
            reader = BitReader(bytes: bytes, position: start)
            self.members = members
            self.tables = tables
            self.refines = refines
            self.al = al
            self.restartInterval = restartInterval
        }

        /// Decodes every MCU into `frame`; returns where the next marker starts, `nil` on a bad code, a wrong
        /// restart marker, an out-of-range DC, or data that ends before the scan does.
        mutating func decode(_ frame: inout Frame) -> Int? {
            var predictors = [Int](repeating: 0, count: members.count)
            var restartsToGo = restartInterval
            var nextRestart = 0
            // An interleaved scan walks MCUs of h × v blocks per component; a single-component scan walks the
            // component's own blocks, one per MCU.
            let interleaved = members.count > 1
            let mcusWide = interleaved ? frame.mcusWide : frame.components[members[0]].blocksWide
            let mcusHigh = interleaved ? frame.mcusHigh : frame.components[members[0]].blocksHigh
            for mcuY in 0..<mcusHigh {
                for mcuX in 0..<mcusWide {
                    if restartInterval > 0 {
                        if restartsToGo == 0 {
                            guard reader.restart(expecting: nextRestart) else { return nil }
                            nextRestart = (nextRestart + 1) & 7
                            restartsToGo = restartInterval
                            for i in predictors.indices { predictors[i] = 0 }
                        }
                        restartsToGo -= 1
                    }
                    for (slot, index) in members.enumerated() {
                        let (h, v) = interleaved ? (frame.components[index].h, frame.components[index].v) : (1, 1)
                        let stride = frame.components[index].stride
                        for by in 0..<v {
                            for bx in 0..<h {
                                let block = (mcuY * v + by) * stride + mcuX * h + bx
                                guard
                                    decodeBlock(
                                        &frame.components[index].coefficients[block], slot: slot,
                                        predictor: &predictors[slot])
                                else { return nil }
                            }
                        }
                    }
                    if reader.hasOverrun { return nil }
                }
            }
            return reader.marker ?? JPEGProgressiveDC.nextMarker(in: reader.bytes, from: reader.position)
        }

        @inline(__always) private mutating func decodeBlock(_ coefficient: inout Int16, slot: Int, predictor: inout Int)
            -> Bool
        {
            if refines {
                if reader.bits(1) != 0 { coefficient |= Int16(1 << al) }
                return true
            }
            guard let size = reader.symbol(tables[slot]) else { return false }
            var difference = 0
            if size > 0 {
                let raw = Int(reader.bits(size))
                difference = raw < 1 << (size - 1) ? raw - (1 << size) + 1 : raw  // HUFF_EXTEND
            }
            predictor += difference
            // libjpeg fails (JERR_BAD_DCT_COEF) when its int predictor would overflow.
            guard predictor >= Int(Int32.min) && predictor <= Int(Int32.max) else { return false }
            coefficient = Int16(truncatingIfNeeded: UInt32(truncatingIfNeeded: predictor) << UInt32(al))
            return true
        }
    }

    /// Where the next marker other than RSTn starts (its first 0xFF), skipping entropy-coded data (0xFF00
    /// stuffing, restart markers, fill bytes); `nil` when the data ends first.
    static func nextMarker(in bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
        guard let base = bytes.baseAddress else { return nil }
        var i = start
        while i < bytes.count {
            guard let found = memchr(base + i, 0xFF, bytes.count - i) else { return nil }
            let at = base.distance(to: UnsafeRawPointer(found))
            var next = at + 1
            while next < bytes.count && bytes[next] == 0xFF { next += 1 }
            guard next < bytes.count else { return nil }
            let code = bytes[next]
            if code != 0 && !(0xD0...0xD7).contains(code) { return at }
            i = next + 1
        }
        return nil
    }
}
