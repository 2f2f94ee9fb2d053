import ImagoCore

extension JPEGProgressiveDC {
    /// DQT: full 64-entry tables of 8 or 16 bits; only Q[0] is kept.
    mutating func readQuantisationTables(_ p: UnsafeRawBufferPointer) -> Bool {
        var i = 0
        while i < p.count {
            let precision = Int(p[i] >> 4)
            let index = Int(p[i] & 15)
            let size = 64 * (precision + 1)
            guard precision <= 1, index < 4, i + 1 + size <= p.count else { return false }
            let q0 = precision == 0 ? UInt16(p[i + 1]) : UInt16(p[i + 1]) << 8 | UInt16(p[i + 2])
            quantDC[index] = Int32(Int16(truncatingIfNeeded: q0))  // libjpeg's ISLOW multiplier is a short
            i += 1 + size
        }
        return true
    }

    /// DHT: one or more tables, each checked as libjpeg's `jpeg_make_d_derived_tbl` checks it.
    mutating func readHuffmanTables(_ p: UnsafeRawBufferPointer) -> Bool {
        var i = 0
        while i < p.count {
            guard i + 17 <= p.count else { return false }
            let tableClass = Int(p[i] >> 4)
            let index = Int(p[i] & 15)
            guard tableClass <= 1, index < 4 else { return false }
            var counts = [Int](repeating: 0, count: 17)
            var total = 0
            for length in 1...16 {
                counts[length] = Int(p[i + length])
                total += counts[length]
            }
            guard total <= 256, i + 17 + total <= p.count else { return false }
            let symbols = Array(p[(i + 17)..<(i + 17 + total)])
            let table = HuffmanTable(counts: counts, symbols: symbols)
            if tableClass == 0 { dcTables[index] = table } else { acTables[index] = table }
            i += 17 + total
        }
        return true
    }
}
