/// Appends little-endian fixed-width values to a byte array: the writer half of Imago's small binary formats.
package struct LittleEndianWriter {
    package private(set) var bytes: [UInt8] = []

    package init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    package mutating func u8(_ v: UInt8) { bytes.append(v) }
    package mutating func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
    package mutating func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
    package mutating func u64(_ v: UInt64) { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
    package mutating func f64(_ v: Double) { u64(v.bitPattern) }
    package mutating func raw(_ v: some Sequence<UInt8>) { bytes.append(contentsOf: v) }
    package mutating func digest(_ d: SHA256Digest) {
        for w in [d.w0, d.w1, d.w2, d.w3] { withUnsafeBytes(of: w.bigEndian) { bytes.append(contentsOf: $0) } }
    }
}

/// Reads little-endian fixed-width values at explicit offsets of a buffer. Every read is bounds-checked and
/// returns `nil` past the end, so a parser built on it cannot trap on any input.
package struct LittleEndianReader {
    package let buffer: UnsafeRawBufferPointer

    package init(_ buffer: UnsafeRawBufferPointer) { self.buffer = buffer }

    package var count: Int { buffer.count }

    @inline(__always) private func fits(_ offset: Int, _ size: Int) -> Bool {
        offset >= 0 && size >= 0 && offset <= buffer.count && buffer.count - offset >= size
    }

    package func u8(_ offset: Int) -> UInt8? { fits(offset, 1) ? buffer[offset] : nil }
    package func u16(_ offset: Int) -> UInt16? {
        fits(offset, 2) ? UInt16(littleEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt16.self)) : nil
    }
    package func u32(_ offset: Int) -> UInt32? {
        fits(offset, 4) ? UInt32(littleEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt32.self)) : nil
    }
    package func u64(_ offset: Int) -> UInt64? {
        fits(offset, 8) ? UInt64(littleEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) : nil
    }
    /// A finite double stored as its bit pattern; `nil` when out of bounds, NaN or infinite.
    package func finiteF64(_ offset: Int) -> Double? {
        guard let bits = u64(offset) else { return nil }
        let v = Double(bitPattern: bits)
        return v.isFinite ? v : nil
    }
    package func digest(_ offset: Int) -> SHA256Digest? {
        guard fits(offset, 32), let base = buffer.baseAddress else { return nil }
        return SHA256Digest(bytes: base + offset)
    }
    /// The sub-buffer `offset ..< offset + length`, or `nil` when it does not fit.
    package func slice(_ offset: Int, _ length: Int) -> UnsafeRawBufferPointer? {
        guard fits(offset, length) else { return nil }
        return UnsafeRawBufferPointer(rebasing: buffer[offset..<(offset + length)])
    }
    /// Valid UTF-8 at `offset ..< offset + length` as a String, or `nil`.
    package func string(_ offset: Int, _ length: Int) -> String? {
        guard let s = slice(offset, length) else { return nil }
        return String(validating: s, as: UTF8.self)
    }
}
