import Foundation
import ImagoCore

/// Decodes a progressive JPEG at 1/8 scale from its DC scans alone: libjpeg's 1/8-scale output without keeping
/// every DCT coefficient of the image.
///
/// libjpeg-turbo decodes a multi-scan file into a whole-image coefficient buffer (64 `Int16` a block, 128 bytes)
/// whatever the output scale: 109 MB for a 5250×3450 4:4:4 photo. At 1/8 scale its 1×1 inverse DCT
/// (`jpeg_idct_1x1`) reads only the DC coefficient of each block: pixel = `range_limit[((DC × Q[0] + 4) >> 3) &
/// 1023]` (centred on 128). This reader therefore decodes only the DC scans (first scans, Ah = 0, and refinement
/// scans, Ah > 0; interleaved and not; with restart intervals), keeps one `Int16` a block, and jumps over every AC
/// scan byte-wise to the next marker. Then it converts YCbCr to RGB with libjpeg's own integer tables (`jdcolor.c`).
///
/// Exactness: the result equals libjpeg-turbo's 1/8-scale decode for gray files and for every component whose
/// 1/8-scale inverse DCT is 1×1 in libjpeg, which is every component except one subsampled by 2 in both directions
/// (4:2:0 chroma). libjpeg decodes such chroma with a 2×2 inverse DCT that needs AC coefficients; here it is
/// upsampled from the DC values with a triangle filter (libjpeg's "fancy" h2v2 weights 9:3:3:1), which differs by
/// a few levels (see JPEGProgressiveDCTests). Components subsampled by 2, 3 or 4 in one direction only are
/// replicated, as libjpeg does at 1/8 scale (its fancy upsampling is off there).
///
/// The reader is strict: whatever libjpeg would warn about, reject, or decode in a way this reader does not
/// model (a bad Huffman code, data ending inside a DC scan, a missing table, a bogus progression, block smoothing
/// of a file whose first AC coefficients are incomplete, unusual sampling, more than 500 scans, …) makes
/// ``decode(_:width:height:isGray:)`` return `nil`, and `JPEGDecoder` then decodes with libjpeg as before. Every
/// read of the input is checked against its length explicitly (unsafe buffers check only in debug builds), and
/// every coefficient index lies inside its component's grid by construction; allocations are one `Int16` a block
/// per component, one byte a block per component for the samples, and the output image.
package struct JPEGProgressiveDC {
    /// The most scans libjpeg is allowed to read (TurboJPEG's `TJFLAG_LIMITSCANS` fails above this).
    static let scanLimit = 500

    /// The 1/8-scale image of the progressive JPEG in `bytes` (`rgba8` for YCbCr, `gray8` for gray), or `nil` when
    /// the file is not one this reader decodes exactly as libjpeg would (see the type).
    ///
    /// `width`, `height` and `isGray` are what TurboJPEG's header call reported; a frame that disagrees is refused.
    package static func decode(_ bytes: UnsafeRawBufferPointer, width: Int, height: Int, isGray: Bool) -> PixelBuffer? {
        var reader = JPEGProgressiveDC(bytes: bytes)
        guard reader.readAll(), let frame = reader.frame, frame.width == width, frame.height == height,
            frame.components.count == (isGray ? 1 : 3), reader.isComplete
        else { return nil }
        return reader.image()
    }

    /// As ``decode(_:width:height:isGray:)`` with the size and colour model the frame header declares (1 component
    /// gray, 3 YCbCr), refusing frames of more than `pixelLimit` pixels. For tests and the fuzzer.
    package static func decode(_ data: Data, pixelLimit: Int = 100_000_000) -> PixelBuffer? {
        data.withUnsafeBytes { bytes in
            var reader = JPEGProgressiveDC(bytes: bytes)
            reader.pixelLimit = pixelLimit
            guard reader.readAll(), let frame = reader.frame, frame.components.count != 2,
                frame.components.count != 4, reader.isComplete
            else { return nil }
            return reader.image()
        }
    }

    /// The first component alone (luma) at 1/8 scale as `gray8`, as libjpeg outputs a YCbCr file asked for gray:
    /// lets tests check the luma of 4:2:0 files exactly while their chroma is approximated.
    package static func decodeLuma(_ data: Data) -> PixelBuffer? {
        data.withUnsafeBytes { bytes in
            var reader = JPEGProgressiveDC(bytes: bytes)
            reader.pixelLimit = 100_000_000
            guard reader.readAll(), reader.isComplete, var frame = reader.frame else { return nil }
            frame.components.removeSubrange(1...)
            reader.frame = frame
            return reader.image()
        }
    }

    // MARK: - State

    let bytes: UnsafeRawBufferPointer
    /// The frame header (SOF2), once read.
    var frame: Frame?
    /// Q[0] of each quantisation table (0…3) as libjpeg's 1×1 IDCT multiplies it (a 16-bit `short`).
    var quantDC: [Int32?] = [nil, nil, nil, nil]
    /// Huffman tables by class (0 DC, 1 AC) and index (0…3).
    var dcTables: [HuffmanTable?] = [nil, nil, nil, nil]
    var acTables: [HuffmanTable?] = [nil, nil, nil, nil]
    var restartInterval = 0
    var scanCount = 0
    /// The largest frame accepted (JPEGDecoder has checked the size against its own limit already).
    var pixelLimit = Int.max

    init(bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// One component of the frame and its DC coefficients, one per block over the MCU-padded block grid.
    struct Component {
        let id: UInt8
        let h: Int
        let v: Int
        let quantTable: Int
        /// Blocks covering the component's own size (libjpeg's `width_in_blocks`, `height_in_blocks`).
        let blocksWide: Int
        let blocksHigh: Int
        /// The padded grid the coefficients are stored in (MCUs per row × h, MCU rows × v), starting at `offset`
        /// in ``Frame/coefficients``.
        let stride: Int
        let rows: Int
        let offset: Int
        /// Q[0] latched at the component's first scan, as libjpeg latches its quantisation table.
        var quantDC: Int32?
        /// libjpeg's `coef_bits`: the successive-approximation bit position each coefficient has reached (−1: none).
        var coefficientBits = [Int8](repeating: -1, count: 64)
    }

    /// The frame header: size, sampling and components.
    struct Frame {
        let width: Int
        let height: Int
        let maxH: Int
        let maxV: Int
        let mcusWide: Int
        let mcusHigh: Int
        var components: [Component]
        /// Every component's DC coefficients, one `Int16` a block, component after component.
        var coefficients: [Int16]
    }

    /// Whether every component has its DC and first nine AC coefficients complete, so that libjpeg neither
    /// smooths blocks (which changes the DC of DC-only files) nor outputs a partially refined DC.
    var isComplete: Bool {
        guard let frame else { return false }
        return frame.components.allSatisfy { component in (0..<10).allSatisfy { component.coefficientBits[$0] == 0 } }
    }

    // MARK: - Markers

    /// Reads from SOI to EOI; `false` on anything this reader does not handle exactly like libjpeg.
    mutating func readAll() -> Bool {
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return false }
        var offset = 2
        while true {
            // A marker: 0xFF, any fill 0xFFs, the code. Garbage between segments (libjpeg warns) is refused.
            guard offset < bytes.count, bytes[offset] == 0xFF else { return false }
            while offset < bytes.count && bytes[offset] == 0xFF { offset += 1 }
            guard offset < bytes.count else { return false }
            let marker = bytes[offset]
            offset += 1
            if marker == 0xD9 { return true }  // EOI
            if (0xD0...0xD7).contains(marker) { continue }  // a stray RSTn between scans: libjpeg ignores it
            guard offset + 2 <= bytes.count else { return false }
            let length = Int(bytes[offset]) << 8 | Int(bytes[offset + 1])
            guard length >= 2, offset + length <= bytes.count else { return false }
            let payload = UnsafeRawBufferPointer(rebasing: bytes[(offset + 2)..<(offset + length)])
            offset += length
            switch marker {
            case 0xC2:
                guard frame == nil, readFrame(payload) else { return false }
            case 0xC4:
                guard readHuffmanTables(payload) else { return false }
            case 0xDB:
                guard readQuantisationTables(payload) else { return false }
            case 0xDD:
                guard payload.count == 2 else { return false }
                restartInterval = Int(payload[0]) << 8 | Int(payload[1])
            case 0xDA:
                guard let end = readScan(header: payload, dataStart: offset) else { return false }
                offset = end
            case 0xE0...0xEF, 0xFE:
                continue  // APPn, COM
            default:
                return false  // another frame type, DNL, DAC, a second SOI, a reserved marker…
            }
        }
    }

    /// SOF2: 8-bit precision, 1 to 4 components with sampling factors 1…4 and distinct ids.
    private mutating func readFrame(_ p: UnsafeRawBufferPointer) -> Bool {
        guard p.count >= 6, p[0] == 8 else { return false }
        let height = Int(p[1]) << 8 | Int(p[2])
        let width = Int(p[3]) << 8 | Int(p[4])
        let count = Int(p[5])
        guard width > 0, height > 0, width * height <= pixelLimit, (1...4).contains(count), p.count == 6 + 3 * count
        else { return false }
        var specs: [(id: UInt8, h: Int, v: Int, table: Int)] = []
        for i in 0..<count {
            let id = p[6 + 3 * i]
            let h = Int(p[7 + 3 * i] >> 4)
            let v = Int(p[7 + 3 * i] & 15)
            let table = Int(p[8 + 3 * i])
            guard (1...4).contains(h), (1...4).contains(v), table < 4, !specs.contains(where: { $0.id == id }) else {
                return false
            }
            specs.append((id, h, v, table))
        }
        let maxH = specs.map(\.h).max() ?? 1
        let maxV = specs.map(\.v).max() ?? 1
        let mcusWide = (width + 8 * maxH - 1) / (8 * maxH)
        let mcusHigh = (height + 8 * maxV - 1) / (8 * maxV)
        var components: [Component] = []
        var total = 0
        for spec in specs {
            // Only integral ratios, and of the ratios both even only 2×2 (4:2:0), which is approximated.
            guard maxH % spec.h == 0, maxV % spec.v == 0 else { return false }
            let (rh, rv) = (maxH / spec.h, maxV / spec.v)
            guard !(rh % 2 == 0 && rv % 2 == 0) || (rh == 2 && rv == 2) else { return false }
            let componentWidth = (width * spec.h + maxH - 1) / maxH
            let componentHeight = (height * spec.v + maxV - 1) / maxV
            let blocksWide = (componentWidth + 7) / 8
            let blocksHigh = (componentHeight + 7) / 8
            // A single-component scan walks blocksWide × blocksHigh, an interleaved one MCUs × h by MCUs × v.
            let stride = max(mcusWide * spec.h, blocksWide)
            let rows = max(mcusHigh * spec.v, blocksHigh)
            components.append(
                Component(
                    id: spec.id, h: spec.h, v: spec.v, quantTable: spec.table, blocksWide: blocksWide,
                    blocksHigh: blocksHigh, stride: stride, rows: rows, offset: total, quantDC: nil))
            total += stride * rows
        }
        // At most (w/8 + 4)·(h/8 + 4) blocks a component: the caller has bounded w·h.
        frame = Frame(
            width: width, height: height, maxH: maxH, maxV: maxV, mcusWide: mcusWide, mcusHigh: mcusHigh,
            components: components, coefficients: [Int16](repeating: 0, count: total))
        return true
    }

    /// SOS: validates the scan as libjpeg does, decodes a DC scan or skips an AC scan; returns where the next
    /// marker starts.
    private mutating func readScan(header p: UnsafeRawBufferPointer, dataStart: Int) -> Int? {
        scanCount += 1
        guard var frame, scanCount <= Self.scanLimit, p.count >= 1 else { return nil }
        let count = Int(p[0])
        guard (1...4).contains(count), p.count == 4 + 2 * count else { return nil }
        var members: [(index: Int, dcTable: Int, acTable: Int)] = []
        for i in 0..<count {
            let id = p[1 + 2 * i]
            guard let index = frame.components.firstIndex(where: { $0.id == id }),
                !members.contains(where: { $0.index == index })
            else { return nil }
            let (dcTable, acTable) = (Int(p[2 + 2 * i] >> 4), Int(p[2 + 2 * i] & 15))
            guard dcTable < 4, acTable < 4 else { return nil }  // libjpeg: no such table when used
            members.append((index, dcTable, acTable))
        }
        let ss = Int(p[1 + 2 * count])
        let se = Int(p[2 + 2 * count])
        let ah = Int(p[3 + 2 * count] >> 4)
        let al = Int(p[3 + 2 * count] & 15)
        // jdphuff.c's validation (fatal in libjpeg), then its progression check (a warning there; refused here).
        let isDC = ss == 0
        guard isDC ? se == 0 : (ss <= se && se < 64 && count == 1) else { return nil }
        guard (ah == 0 || al == ah - 1), al <= 13 else { return nil }
        if count > 1 {
            let blocks = members.reduce(0) { $0 + frame.components[$1.index].h * frame.components[$1.index].v }
            guard blocks <= 10 else { return nil }  // D_MAX_BLOCKS_IN_MCU
        }
        for member in members {
            // libjpeg latches a component's quantisation table at its first scan.
            if frame.components[member.index].quantDC == nil {
                guard let q = quantDC[frame.components[member.index].quantTable] else { return nil }
                frame.components[member.index].quantDC = q
            }
            var bits = frame.components[member.index].coefficientBits
            if !isDC && bits[0] < 0 { return nil }
            for k in ss...se {
                guard ah == max(Int(bits[k]), 0) else { return nil }
                bits[k] = Int8(al)
            }
            frame.components[member.index].coefficientBits = bits
        }
        self.frame = nil  // hand the coefficients to the scan decoder without a copy
        defer { self.frame = frame }
        if !isDC {
            guard members.allSatisfy({ acTables[$0.acTable]?.isValid == true }) else { return nil }
            return Self.nextMarker(in: bytes, from: dataStart)
        }
        var tables: [HuffmanTable] = []
        if ah == 0 {
            for member in members {
                guard let table = dcTables[member.dcTable], table.isValid, table.isValidForDC else { return nil }
                tables.append(table)
            }
        }
        var scan = DCScan(
            bytes: bytes, start: dataStart, members: members.map { frame.components[$0.index] },
            interleaved: count > 1, tables: tables, refines: ah > 0, al: al, restartInterval: restartInterval)
        return scan.decode(&frame)
    }
}
