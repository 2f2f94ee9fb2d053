import ImagoCore

/// The AND mask of a BMP inside an ICO: one bit a pixel after the colour data, 1 = transparent.
enum ICOMask {
    /// Makes the pixels the mask marks transparent, unless the image already has an alpha channel in use (32-bit
    /// icons carry both; the alpha wins, as Windows and browsers do). A mask cut off by the end of the data is
    /// ignored (the icon shows opaque). Returns whether the pixels now have transparency.
    static func apply(
        to pixels: inout PixelBuffer, bytes b: UnsafeRawBufferPointer, from start: Int, info: BMPInfo,
        alphaInUse: Bool
    ) -> Bool {
        if alphaInUse { return true }
        let width = info.width
        let height = info.height
        let stride = (width + 31) / 32 * 4
        guard start >= 0, start + stride * height <= b.count else { return false }
        var anyTransparent = false
        pixels.withUnsafeMutableBytes { out in
            for row in 0..<height {
                let y = info.isTopDown ? row : height - 1 - row
                let line = start + row * stride
                for x in 0..<width where b[line + x / 8] & (0x80 >> UInt8(x % 8)) != 0 {
                    let o = (y * width + x) * 4
                    out[o] = 0
                    out[o + 1] = 0
                    out[o + 2] = 0
                    out[o + 3] = 0
                    anyTransparent = true
                }
            }
        }
        return anyTransparent
    }
}
