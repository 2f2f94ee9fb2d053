import ImagoCore

/// Turns a DIB's pixel data into RGBA8: uncompressed 1/2/4/8-bit indexed, 16/32-bit with channel masks, 24-bit,
/// and RLE4/RLE8, bottom-up or top-down.
///
/// The output is allocated once (the caller has checked its size against the pixel limit); every read of the
/// pixel data is bounds-checked. RLE pixels the stream skips (deltas, early end of line) stay transparent, as
/// browsers show them.
struct BMPPixels {
    let info: BMPInfo
    let format: ImageFormat

    /// The decoded pixels and whether the data held all of them (`false`: rows are missing at the end).
    struct Result {
        var pixels: PixelBuffer
        var isComplete: Bool
        /// Whether any pixel may be less than opaque (alpha channel in use, or RLE gaps).
        var hasAlpha: Bool
    }

    /// Bytes of one stored row (rows are padded to 4 bytes).
    var stride: Int { (info.width * info.bitCount + 31) / 32 * 4 }

    /// - Parameter allowsPartialData: when `false`, uncompressed data too short for its rows throws
    ///   ``CodecError/truncated(format:)`` before the output is allocated (a tiny file cannot make us allocate
    ///   for its declared size).
    func decode(_ b: UnsafeRawBufferPointer, from start: Int, allowsPartialData: Bool) throws -> Result {
        switch info.compression {
        case .rle4, .rle8: return try decodeRLE(b, from: start)
        default:
            let rowBytes = (info.width * info.bitCount + 7) / 8
            let needed = stride * (info.height - 1) + rowBytes
            if !allowsPartialData && max(0, b.count - start) < needed { throw CodecError.truncated(format: format) }
            return try decodeRows(b, from: start)
        }
    }

    /// The output row of stored row `row`.
    @inline(__always) private func outputRow(_ row: Int) -> Int { info.isTopDown ? row : info.height - 1 - row }

    private func decodeRows(_ b: UnsafeRawBufferPointer, from start: Int) throws -> Result {
        let width = info.width
        let height = info.height
        let stride = self.stride
        let available = max(0, b.count - start)
        // The last row's padding may be missing: a row is present when its pixels are.
        let rowBytes = (width * info.bitCount + 7) / 8
        let rows = available >= rowBytes ? min(height, (available - rowBytes) / stride + 1) : 0
        var alphaSeen: UInt8 = 0
        var pixels = try PixelBuffer(width: width, height: height, format: .rgba8)
        let info = self.info
        pixels.withUnsafeMutableBytes { out in
            guard let outBase = out.baseAddress, let inBase = b.baseAddress else { return }
            for row in 0..<rows {
                let src = (inBase + start + row * stride).assumingMemoryBound(to: UInt8.self)
                let dst = (outBase + outputRow(row) * width * 4).assumingMemoryBound(to: UInt8.self)
                switch info.bitCount {
                case 1, 2, 4, 8:
                    Self.indexedRow(src, dst, width: width, bits: info.bitCount, palette: info.palette)
                case 24:
                    for x in 0..<width {
                        dst[x * 4] = src[x * 3 + 2]
                        dst[x * 4 + 1] = src[x * 3 + 1]
                        dst[x * 4 + 2] = src[x * 3]
                        dst[x * 4 + 3] = 255
                    }
                default:
                    alphaSeen |= Self.maskedRow(src, dst, width: width, bytes: info.bitCount / 8, info: info)
                }
            }
        }
        // A 32-bit image whose alpha channel is all zero is opaque (browsers' rule for BI_RGB and old writers).
        let hasAlphaChannel = info.alpha.maximum != 0
        if hasAlphaChannel && alphaSeen == 0 {
            pixels.withUnsafeMutableBytes { out in
                for y in 0..<rows {
                    let o = outputRow(y) * width * 4
                    for x in 0..<width { out[o + x * 4 + 3] = 255 }
                }
            }
        }
        return Result(
            pixels: pixels, isComplete: rows == height, hasAlpha: rows < height || (hasAlphaChannel && alphaSeen != 0))
    }

    @inline(__always)
    private static func indexedRow(
        _ src: UnsafePointer<UInt8>, _ dst: UnsafeMutablePointer<UInt8>, width: Int, bits: Int, palette: [UInt32]
    ) {
        let perByte = 8 / bits
        let mask = UInt8((1 << bits) - 1)
        palette.withUnsafeBufferPointer { colors in
            let out = UnsafeMutableRawPointer(dst)
            for x in 0..<width {
                let byte = src[x / perByte]
                let shift = 8 - bits * (x % perByte + 1)
                let index = Int(byte >> UInt8(shift) & mask)
                let colour = index < colors.count ? colors[index] : 0xFF00_0000  // beyond the palette: black
                out.storeBytes(of: colour.littleEndian, toByteOffset: x * 4, as: UInt32.self)
            }
        }
    }

    /// One row of 16- or 32-bit pixels through the channel masks; returns the OR of the alpha values read.
    @inline(__always)
    private static func maskedRow(
        _ src: UnsafePointer<UInt8>, _ dst: UnsafeMutablePointer<UInt8>, width: Int, bytes: Int, info: BMPInfo
    ) -> UInt8 {
        var alphaSeen: UInt8 = 0
        for x in 0..<width {
            let p = x * bytes
            var pixel = UInt32(src[p]) | UInt32(src[p + 1]) << 8
            if bytes == 4 { pixel |= UInt32(src[p + 2]) << 16 | UInt32(src[p + 3]) << 24 }
            dst[x * 4] = info.red.value(pixel) ?? 0
            dst[x * 4 + 1] = info.green.value(pixel) ?? 0
            dst[x * 4 + 2] = info.blue.value(pixel) ?? 0
            let a = info.alpha.value(pixel) ?? 255
            alphaSeen |= a
            dst[x * 4 + 3] = a
        }
        return alphaSeen
    }

    /// Pixels an RLE image must paint explicitly, at least, for its declared size to be allocated beyond
    /// ``rleAllocationFloor``: one in 16. RLE leaves skipped pixels transparent, so a 150-byte file could
    /// otherwise declare `pixelLimit` pixels (deltas skip 255 rows in 4 bytes) and make us allocate 400 MB of
    /// transparency; real RLE bitmaps paint most of their pixels.
    static let rlePaintedShare = 16
    /// Pixels an RLE image may declare whatever it paints (4 MiB of RGBA8).
    static let rleAllocationFloor = 1 << 20

    private func decodeRLE(_ b: UnsafeRawBufferPointer, from start: Int) throws -> Result {
        let width = info.width
        let height = info.height
        // A first walk, allocating nothing, counts the pixels the data paints inside the image.
        var painted = 0
        _ = walkRLE(b, from: start) { _, _, _ in painted += 1 }
        let bound = max(
            Self.rleAllocationFloor, painted.multipliedReportingOverflow(by: Self.rlePaintedShare).partialValue)
        if width * height > bound {
            throw CodecError.tooManyPixels(width: width, height: height, limit: bound)
        }
        var pixels = try PixelBuffer(width: width, height: height, format: .rgba8)
        var isComplete = false
        let palette = info.palette
        pixels.withUnsafeMutableBytes { out in
            guard let outBase = out.baseAddress else { return }
            isComplete = walkRLE(b, from: start) { index, x, row in
                let colour = index < palette.count ? palette[index] : 0xFF00_0000
                outBase.storeBytes(
                    of: colour.littleEndian, toByteOffset: (outputRow(row) * width + x) * 4, as: UInt32.self)
            }
        }
        return Result(pixels: pixels, isComplete: isComplete, hasAlpha: true)
    }

    /// Walks the RLE4/RLE8 stream, calling `paint(index, x, row)` for every pixel it sets inside the image
    /// (stored row order); returns whether the data ended the bitmap (end of bitmap, or rows run out).
    private func walkRLE(
        _ b: UnsafeRawBufferPointer, from start: Int, paint: (_ index: Int, _ x: Int, _ row: Int) -> Void
    ) -> Bool {
        let width = info.width
        let height = info.height
        let isRLE4 = info.compression == .rle4
        var pos = max(0, start)
        var x = 0
        var row = 0
        while pos + 2 <= b.count, row < height {
            let count = Int(b[pos])
            let value = Int(b[pos + 1])
            pos += 2
            if count > 0 {  // a run of `count` pixels
                for i in 0..<min(count, max(0, width - x)) {
                    paint(isRLE4 ? (i % 2 == 0 ? value >> 4 : value & 0x0F) : value, x + i, row)
                }
                x += count
                continue
            }
            switch value {
            case 0:  // end of line
                x = 0
                row += 1
            case 1:  // end of bitmap
                return true
            case 2:  // delta
                guard pos + 2 <= b.count else { return false }
                x += Int(b[pos])
                row += Int(b[pos + 1])
                pos += 2
            default:  // `value` literal pixels, padded to an even byte count
                let bytes = isRLE4 ? (value + 1) / 2 : value
                guard pos + bytes <= b.count else { return false }
                for i in 0..<value where x + i < width {
                    let byte = Int(b[pos + (isRLE4 ? i / 2 : i)])
                    paint(isRLE4 ? (i % 2 == 0 ? byte >> 4 : byte & 0x0F) : byte, x + i, row)
                }
                x += value
                pos += bytes + (bytes & 1)
            }
        }
        // Running off the bottom edge ends the image as an end-of-bitmap would.
        return row >= height
    }
}
