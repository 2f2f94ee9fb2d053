extension PixelBuffer {
    /// The pixels turned so that an image stored with `orientation` displays upright (`.up` returns `self`).
    ///
    /// Orientations 5…8 swap width and height. Used by decoders to apply EXIF orientation and by the rotate
    /// and flip processors.
    public func oriented(_ orientation: ExifOrientation) -> PixelBuffer {
        if orientation == .up { return self }
        let w = width
        let h = height
        let (outW, outH) = orientation.swapsDimensions ? (h, w) : (w, h)
        let bpp = format.bytesPerPixel
        var out = [UInt8](repeating: 0, count: bytes.count)
        bytes.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                for y in 0..<outH {
                    for x in 0..<outW {
                        let (sx, sy): (Int, Int)
                        switch orientation {
                        case .up: (sx, sy) = (x, y)
                        case .upMirrored: (sx, sy) = (w - 1 - x, y)
                        case .down: (sx, sy) = (w - 1 - x, h - 1 - y)
                        case .downMirrored: (sx, sy) = (x, h - 1 - y)
                        case .leftMirrored: (sx, sy) = (y, x)
                        case .right: (sx, sy) = (y, h - 1 - x)
                        case .rightMirrored: (sx, sy) = (w - 1 - y, h - 1 - x)
                        case .left: (sx, sy) = (w - 1 - y, x)
                        }
                        let s = (sy * w + sx) * bpp
                        let d = (y * outW + x) * bpp
                        for c in 0..<bpp { dst[d + c] = src[s + c] }
                    }
                }
            }
        }
        return PixelBuffer(uncheckedWidth: outW, height: outH, format: format, alphaMode: alphaMode, bytes: out)
    }
}
