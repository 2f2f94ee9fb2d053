import ImagoCore

/// A DIB header (the part of a BMP after its 14-byte file header, and every BMP image inside an ICO): size,
/// row order, bit depth, compression, channel masks and palette.
///
/// Reads OS/2 1.x (12-byte `BITMAPCOREHEADER`), OS/2 2.x (16…64 bytes) and Windows v3/v4/v5 (40, 52, 56, 108,
/// 124 bytes) headers. Every read is bounds-checked; nothing is allocated beyond the palette (≤ 256 entries).
struct BMPInfo {
    /// `biCompression`.
    enum Compression: UInt32 {
        case rgb = 0
        case rle8 = 1
        case rle4 = 2
        case bitFields = 3
        case alphaBitFields = 6
    }

    /// One channel's mask: where its bits sit in a 16- or 32-bit pixel and how to widen them to 8 bits.
    struct Mask {
        let mask: UInt32
        let shift: UInt32
        let maximum: UInt32

        init(_ mask: UInt32) {
            self.mask = mask
            shift = mask == 0 ? 0 : UInt32(mask.trailingZeroBitCount)
            maximum = mask >> shift
        }

        var bits: Int { maximum.nonzeroBitCount }

        /// The channel of `pixel` scaled to 0…255 (rounded); `nil` for an empty mask.
        @inline(__always) func value(_ pixel: UInt32) -> UInt8? {
            guard maximum != 0 else { return nil }
            let v = (pixel & mask) >> shift
            if maximum == 255 { return UInt8(truncatingIfNeeded: v) }
            return UInt8(truncatingIfNeeded: (UInt64(v) * 255 + UInt64(maximum / 2)) / UInt64(maximum))
        }
    }

    var width = 0
    /// The image's height (for an icon entry: half the DIB's, the rest being the AND mask).
    var height = 0
    var isTopDown = false
    var bitCount = 0
    var compression = Compression.rgb
    var red = Mask(0)
    var green = Mask(0)
    var blue = Mask(0)
    var alpha = Mask(0)
    /// Palette colours as R, G, B, 255 bytes packed little-endian (so a 4-byte store writes R G B A).
    var palette: [UInt32] = []
    /// Where the header and its masks and palette end.
    var end = 0

    /// Whether the image is palette-indexed (1, 2, 4 or 8 bits a pixel).
    var isIndexed: Bool { bitCount <= 8 }

    /// Bits per channel the file stores (palette entries and 24/32-bit pixels: 8; 16-bit: the widest mask).
    var sourceBitDepth: Int { isIndexed ? 8 : max(red.bits, green.bits, blue.bits) }

    /// Reads the DIB header at `offset`. `isIconEntry`: the height counts the AND mask too (it is halved).
    ///
    /// - Throws: ``CodecError/truncated(format:)`` when the header or palette is cut off,
    ///   ``CodecError/corrupt(format:reason:)`` for an unsupported or inconsistent header,
    ///   ``CodecError/tooManyPixels(width:height:limit:)``.
    init(
        _ b: UnsafeRawBufferPointer, at offset: Int, isIconEntry: Bool, options: DecodingOptions, format: ImageFormat
    )
        throws
    {
        func u16(_ i: Int) -> UInt32 { UInt32(b[offset + i]) | UInt32(b[offset + i + 1]) << 8 }
        func u32(_ i: Int) -> UInt32 { u16(i) | u16(i + 2) << 16 }
        guard offset >= 0, offset <= b.count - 16 else { throw CodecError.truncated(format: format) }
        let size = Int(u32(0))
        guard size == 12 || (size >= 16 && size <= 124) || size == 124 else {
            throw CodecError.corrupt(format: format, reason: "unknown DIB header size \(size)")
        }
        guard offset + size <= b.count else { throw CodecError.truncated(format: format) }
        var rawHeight: Int
        var paletteEntryBytes = 4
        var colorsUsed = 0
        if size == 12 {  // OS/2 1.x: 16-bit dimensions, 3-byte palette entries
            width = Int(u16(4))
            rawHeight = Int(u16(6))
            bitCount = Int(u16(10))
            paletteEntryBytes = 3
        } else {
            width = Int(Int32(bitPattern: u32(4)))
            rawHeight = Int(Int32(bitPattern: u32(8)))
            bitCount = Int(u16(14))
            if size >= 20 {
                guard let c = Compression(rawValue: u32(16)) else {
                    throw CodecError.corrupt(format: format, reason: "unsupported compression \(u32(16))")
                }
                compression = c
            }
            if size >= 36 { colorsUsed = Int(u32(32)) }
        }
        if rawHeight < 0 {
            isTopDown = true
            rawHeight = -rawHeight
        }
        height = isIconEntry ? rawHeight / 2 : rawHeight
        try options.checkDimensions(width: width, height: height, format: format)
        guard [1, 2, 4, 8, 16, 24, 32].contains(bitCount) else {
            throw CodecError.corrupt(format: format, reason: "unsupported bit count \(bitCount)")
        }
        switch compression {
        case .rle8 where bitCount != 8, .rle4 where bitCount != 4:
            throw CodecError.corrupt(format: format, reason: "RLE compression with \(bitCount) bits a pixel")
        case .bitFields where bitCount != 16 && bitCount != 32, .alphaBitFields where bitCount != 16 && bitCount != 32:
            throw CodecError.corrupt(format: format, reason: "bit fields with \(bitCount) bits a pixel")
        default: break
        }
        end = offset + size

        // Channel masks: in the header from v2 (52 bytes) on, else after a 40-byte header for bit fields.
        var masks: (UInt32, UInt32, UInt32, UInt32) = (0, 0, 0, 0)
        let hasMasks = compression == .bitFields || compression == .alphaBitFields
        if hasMasks && size == 40 {
            let count = compression == .alphaBitFields ? 4 : 3
            guard end + 4 * count <= b.count else { throw CodecError.truncated(format: format) }
            masks = (u32(40), u32(44), u32(48), count == 4 ? u32(52) : 0)
            end += 4 * count
        } else if size >= 52 {
            masks = (u32(40), u32(44), u32(48), size >= 56 ? u32(52) : 0)
        }
        if !hasMasks {  // BI_RGB: the fixed layouts (an alpha mask in a v4/v5 header still counts)
            switch bitCount {
            case 16: masks = (0x7C00, 0x03E0, 0x001F, 0)
            case 24, 32: masks = (0x00FF_0000, 0x0000_FF00, 0x0000_00FF, bitCount == 32 ? masks.3 : 0)
            default: break
            }
            // BI_RGB 32-bit: the fourth byte is alpha when any pixel uses it (browsers' rule; checked later).
            if bitCount == 32 && masks.3 == 0 { masks.3 = 0xFF00_0000 }
        }
        red = Mask(masks.0)
        green = Mask(masks.1)
        blue = Mask(masks.2)
        alpha = Mask(masks.3)

        if isIndexed {
            let maximum = 1 << bitCount
            let count = colorsUsed == 0 || colorsUsed > maximum ? maximum : colorsUsed
            // A short palette at the end of a file is cut off, not corrupt.
            let available = max(0, min(count, (b.count - end) / paletteEntryBytes))
            palette.reserveCapacity(count)
            for i in 0..<available {
                let p = end + i * paletteEntryBytes
                palette.append(UInt32(b[p + 2]) | UInt32(b[p + 1]) << 8 | UInt32(b[p]) << 16 | 0xFF00_0000)
            }
            end += count * paletteEntryBytes
            guard available == count else { throw CodecError.truncated(format: format) }
        }
    }
}
