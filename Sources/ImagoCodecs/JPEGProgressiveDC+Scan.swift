import Foundation  // memchr
import ImagoCore

extension JPEGProgressiveDC {
    /// One DC scan over the frame's coefficients: a first scan (Huffman-coded differences) or a refinement scan
    /// (one raw bit a block).
    struct DCScan {
        var reader: BitReader
        /// The scan's components, in scan order.
        let members: [Component]
        let interleaved: Bool
        let refines: Bool
        let al: Int
        let restartInterval: Int
        /// The members' DC tables (first scans only), flattened: 512 lookups, 18 largest codes, 17 offsets and
        /// 256 symbols a member.
        private var lookup: [UInt16] = []
        private var maxCode: [Int32] = []
        private var valueOffset: [Int32] = []
        private var symbols: [UInt8] = []
        private var symbolCounts: [Int] = []

        init(
            bytes: UnsafeRawBufferPointer, start: Int, members: [Component], interleaved: Bool, tables: [HuffmanTable],
            refines: Bool, al: Int, restartInterval: Int
        ) {
            reader = BitReader(bytes: bytes, position: start)
            self.members = members
            self.interleaved = interleaved
            self.refines = refines
            self.al = al
            self.restartInterval = restartInterval
            for table in tables {
                lookup += table.lookup
                maxCode += table.maxCode
                valueOffset += table.valueOffset
                symbols += table.symbols + [UInt8](repeating: 0, count: 256 - table.symbols.count)
                symbolCounts.append(table.symbols.count)
            }
        }

        /// Decodes every MCU into `frame`; returns where the next marker starts, `nil` on a bad code, a wrong
        /// restart marker, an out-of-range DC, or data that ends before the scan does.
        mutating func decode(_ frame: inout Frame) -> Int? {
            // An interleaved scan walks MCUs of h × v blocks per component; a single-component scan walks the
            // component's own blocks, one per MCU.
            let mcusWide = interleaved ? frame.mcusWide : members[0].blocksWide
            let mcusHigh = interleaved ? frame.mcusHigh : members[0].blocksHigh
            let lookup = self.lookup
            let maxCode = self.maxCode
            let valueOffset = self.valueOffset
            let symbols = self.symbols
            let decoded = frame.coefficients.withUnsafeMutableBufferPointer { coefficients in
                lookup.withUnsafeBufferPointer { lookup in
                    maxCode.withUnsafeBufferPointer { maxCode in
                        valueOffset.withUnsafeBufferPointer { valueOffset in
                            symbols.withUnsafeBufferPointer { symbols in
                                let views = symbolCounts.indices.compactMap { slot -> TableView? in
                                    guard let l = lookup.baseAddress, let m = maxCode.baseAddress,
                                        let o = valueOffset.baseAddress, let s = symbols.baseAddress
                                    else { return nil }
                                    return TableView(
                                        lookup: l + 512 * slot, maxCode: m + 18 * slot, valueOffset: o + 17 * slot,
                                        symbols: s + 256 * slot, symbolCount: symbolCounts[slot])
                                }
                                return decodeMCUs(
                                    into: coefficients, tables: views, mcusWide: mcusWide, mcusHigh: mcusHigh)
                            }
                        }
                    }
                }
            }
            guard decoded else { return nil }
            return reader.marker ?? JPEGProgressiveDC.nextMarker(in: reader.bytes, from: reader.position)
        }

        /// The MCU loop. Every index stays inside its buffer by construction: a member's blocks lie within its
        /// `stride × rows` grid (MCUs × h by MCUs × v, or blocksWide × blocksHigh), lookups take 9 bits, code
        /// lengths are 10…16, and symbol indices are checked against the table's count.
        private mutating func decodeMCUs(
            into coefficients: UnsafeMutableBufferPointer<Int16>, tables: [TableView], mcusWide: Int, mcusHigh: Int
        ) -> Bool {
            // Plain values only in the loop (a Component copy would retain its arrays at every block).
            let geometry = members.map { member in
                (
                    offset: member.offset, stride: member.stride, h: interleaved ? member.h : 1,
                    v: interleaved ? member.v : 1
                )
            }
            var predictors = (0, 0, 0, 0)
            var restartsToGo = restartInterval
            var nextRestart = 0
            let bit = Int16(1 << al)
            for mcuY in 0..<mcusHigh {
                for mcuX in 0..<mcusWide {
                    if restartInterval > 0 {
                        if restartsToGo == 0 {
                            guard reader.restart(expecting: nextRestart) else { return false }
                            nextRestart = (nextRestart + 1) & 7
                            restartsToGo = restartInterval
                            predictors = (0, 0, 0, 0)
                        }
                        restartsToGo -= 1
                    }
                    for slot in geometry.indices {
                        let (offset, stride, h, v) = geometry[slot]
                        for by in 0..<v {
                            let row = offset + (mcuY * v + by) * stride + mcuX * h
                            for bx in 0..<h {
                                if refines {
                                    if reader.bits(1) != 0 { coefficients[row + bx] |= bit }
                                    continue
                                }
                                guard let size = reader.symbol(tables[slot]) else { return false }
                                var difference = 0
                                if size > 0 {
                                    let raw = Int(reader.bits(size))
                                    difference = raw < 1 << (size - 1) ? raw - (1 << size) + 1 : raw  // HUFF_EXTEND
                                }
                                let predictor = Self.predictor(predictors, slot) + difference
                                // libjpeg fails (JERR_BAD_DCT_COEF) when its int predictor would overflow.
                                guard predictor >= Int(Int32.min) && predictor <= Int(Int32.max) else { return false }
                                Self.setPredictor(&predictors, slot, predictor)
                                coefficients[row + bx] = Int16(
                                    truncatingIfNeeded: UInt32(truncatingIfNeeded: predictor) << UInt32(al))
                            }
                        }
                    }
                    if reader.hasOverrun { return false }
                }
            }
            return true
        }

        /// The DC predictor of scan member `slot` (at most 4 members).
        @inline(__always) private static func predictor(_ p: (Int, Int, Int, Int), _ slot: Int) -> Int {
            switch slot {
            case 0: p.0
            case 1: p.1
            case 2: p.2
            default: p.3
            }
        }

        @inline(__always) private static func setPredictor(_ p: inout (Int, Int, Int, Int), _ slot: Int, _ value: Int) {
            switch slot {
            case 0: p.0 = value
            case 1: p.1 = value
            case 2: p.2 = value
            default: p.3 = value
            }
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
