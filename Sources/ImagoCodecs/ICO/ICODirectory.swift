import ImagoCore

/// The directory of an ICO or CUR file: one entry per image, with the size it declares and where its bytes are.
struct ICODirectory {
    struct Entry {
        /// Declared size (0 in the file means 256).
        var width: Int
        var height: Int
        /// Declared bits a pixel (ICO; 0 when unknown, and always for CUR, where the field is a hotspot).
        var bitCount: Int
        var range: Range<Int>
    }

    var entries: [Entry] = []

    /// Reads the 6-byte header and its entries (at most 1,024, bounded by the data).
    init(_ b: UnsafeRawBufferPointer) throws {
        guard b.count >= 6 else { throw CodecError.truncated(format: .ico) }
        func u16(_ i: Int) -> Int { Int(b[i]) | Int(b[i + 1]) << 8 }
        func u32(_ i: Int) -> Int { u16(i) | u16(i + 2) << 16 }
        let type = u16(2)
        guard u16(0) == 0, type == 1 || type == 2 else {
            throw CodecError.corrupt(format: .ico, reason: "not an icon directory")
        }
        let count = u16(4)
        guard count >= 1, count <= 1024 else {
            throw CodecError.corrupt(format: .ico, reason: "\(count) directory entries")
        }
        guard 6 + 16 * count <= b.count else { throw CodecError.truncated(format: .ico) }
        for i in 0..<count {
            let e = 6 + 16 * i
            let size = u32(e + 8)
            let offset = u32(e + 12)
            guard size > 0, offset >= 6 + 16 * count else { continue }  // an entry pointing into the directory
            entries.append(
                Entry(
                    width: b[e] == 0 ? 256 : Int(b[e]), height: b[e + 1] == 0 ? 256 : Int(b[e + 1]),
                    bitCount: type == 1 ? u16(e + 6) : 0, range: offset..<(offset + size)))
        }
        guard !entries.isEmpty else { throw CodecError.corrupt(format: .ico, reason: "no usable directory entry") }
    }

    /// The entry to decode for `target`: the smallest that covers it (both sides at least the target's), else
    /// the largest; without a target, the largest. Ties go to more bits a pixel, then to the earlier entry.
    func bestEntry(for target: PixelSize?) -> Entry {
        func isBetter(_ a: Entry, than b: Entry, preferSmaller: Bool) -> Bool {
            let (sa, sb) = (a.width * a.height, b.width * b.height)
            if sa != sb { return preferSmaller ? sa < sb : sa > sb }
            return a.bitCount > b.bitCount
        }
        let largest = entries.dropFirst().reduce(entries[0]) { isBetter($1, than: $0, preferSmaller: false) ? $1 : $0 }
        guard let target, target.width > 0, target.height > 0 else { return largest }
        let covering = entries.filter { $0.width >= target.width && $0.height >= target.height }
        guard let first = covering.first else { return largest }
        return covering.dropFirst().reduce(first) { isBetter($1, than: $0, preferSmaller: true) ? $1 : $0 }
    }
}
