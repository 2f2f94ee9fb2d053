import Foundation

/// A minimal GIF writer for tests: builds files with exactly the features a test needs (disposal, transparency,
/// interlace, offsets, colour maps, loop counts), independent of the decoder under test.
///
/// LZW is written the simplest valid way: every pixel is a literal code and a clear code follows every two
/// literals, so the code width never grows (the decoder's dictionary never gets past its first free entry).
struct TestGIF {
    struct Frame {
        var x = 0
        var y = 0
        var width: Int
        var height: Int
        /// Palette indices, row-major, `width × height` (rows top to bottom; the writer interlaces if asked).
        var indices: [UInt8]
        /// A local colour map (RGB triples), or nil to use the global one.
        var localPalette: [[UInt8]]? = nil
        /// 0 unspecified, 1 keep, 2 restore to background, 3 restore to previous.
        var disposal = 0
        /// Delay in 1/100 s.
        var delay = 0
        var transparentIndex: UInt8? = nil
        var isInterlaced = false
        /// Whether to write a graphics control extension at all.
        var hasControl = true
    }

    var width: Int
    var height: Int
    /// The global colour map (RGB triples), or nil for none.
    var globalPalette: [[UInt8]]? = [[0, 0, 0], [255, 0, 0], [0, 255, 0], [0, 0, 255]]
    /// The NETSCAPE2.0 loop count, or nil to omit the block.
    var loopCount: Int? = nil
    var frames: [Frame] = []
    /// Whether to end with the trailer byte.
    var hasTrailer = true

    func encoded() -> Data {
        var out = Data("GIF89a".utf8)
        out.append(le16(width))
        out.append(le16(height))
        if let palette = globalPalette {
            let (bits, padded) = paletteBits(palette)
            out.append(0x80 | UInt8(bits - 1) << 4 | UInt8(bits - 1))
            out.append(contentsOf: [0, 0])
            out.append(padded)
        } else {
            out.append(contentsOf: [0, 0, 0])
        }
        if let loopCount {
            out.append(contentsOf: [0x21, 0xFF, 11])
            out.append(Data("NETSCAPE2.0".utf8))
            out.append(contentsOf: [3, 1])
            out.append(le16(loopCount))
            out.append(0)
        }
        for frame in frames { out.append(encode(frame)) }
        if hasTrailer { out.append(0x3B) }
        return out
    }

    func encode(_ frame: Frame) -> Data {
        var out = Data()
        if frame.hasControl {
            let packed = UInt8(frame.disposal & 7) << 2 | (frame.transparentIndex == nil ? 0 : 1)
            out.append(contentsOf: [0x21, 0xF9, 4, packed])
            out.append(le16(frame.delay))
            out.append(contentsOf: [frame.transparentIndex ?? 0, 0])
        }
        out.append(0x2C)
        out.append(le16(frame.x))
        out.append(le16(frame.y))
        out.append(le16(frame.width))
        out.append(le16(frame.height))
        var flags: UInt8 = frame.isInterlaced ? 0x40 : 0
        var localData = Data()
        if let local = frame.localPalette {
            let (bits, padded) = paletteBits(local)
            flags |= 0x80 | UInt8(bits - 1)
            localData = padded
        }
        out.append(flags)
        out.append(localData)
        out.append(8)  // LZW minimum code size: literals 0…255, clear 256, end 257, 9-bit codes
        var rows: [Int] = Array(0..<frame.height)
        if frame.isInterlaced {
            rows = [(0, 8), (4, 8), (2, 4), (1, 2)].flatMap { stride(from: $0.0, to: frame.height, by: $0.1) }
        }
        var codes: [Int] = [256]
        var sinceClear = 0
        for row in rows {
            for x in 0..<frame.width {
                if sinceClear == 2 {
                    codes.append(256)
                    sinceClear = 0
                }
                codes.append(Int(frame.indices[row * frame.width + x]))
                sinceClear += 1
            }
        }
        codes.append(257)
        out.append(subBlocks(packCodes(codes, bits: 9)))
        return out
    }

    private func paletteBits(_ palette: [[UInt8]]) -> (Int, Data) {
        var bits = 1
        while 1 << bits < palette.count { bits += 1 }
        var data = Data()
        for i in 0..<(1 << bits) { data.append(contentsOf: i < palette.count ? palette[i] : [0, 0, 0]) }
        return (bits, data)
    }
}

func le16(_ value: Int) -> Data { Data([UInt8(value & 0xFF), UInt8((value >> 8) & 0xFF)]) }

/// Codes packed least significant bit first, as GIF's LZW stores them.
func packCodes(_ codes: [Int], bits: Int) -> Data {
    var out = Data()
    var accumulator = 0
    var count = 0
    for code in codes {
        accumulator |= code << count
        count += bits
        while count >= 8 {
            out.append(UInt8(accumulator & 0xFF))
            accumulator >>= 8
            count -= 8
        }
    }
    if count > 0 { out.append(UInt8(accumulator & 0xFF)) }
    return out
}

/// Data split into GIF sub-blocks of at most 255 bytes, with the terminating empty block.
func subBlocks(_ data: Data) -> Data {
    var out = Data()
    var index = data.startIndex
    while index < data.endIndex {
        let end = min(index + 255, data.endIndex)
        out.append(UInt8(end - index))
        out.append(data[index..<end])
        index = end
    }
    out.append(0)
    return out
}

/// CRC-32 (IEEE, as zlib computes it), used to compare decoded frames with checksums verified independently.
func crc32(_ bytes: [UInt8]) -> UInt32 {
    var table = [UInt32](repeating: 0, count: 256)
    for i in 0..<256 {
        var c = UInt32(i)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        table[i] = c
    }
    var crc: UInt32 = 0xFFFF_FFFF
    bytes.withUnsafeBufferPointer { buffer in
        for byte in buffer { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
    }
    return crc ^ 0xFFFF_FFFF
}
