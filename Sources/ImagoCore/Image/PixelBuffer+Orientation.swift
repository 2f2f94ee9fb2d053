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
        // Every orientation is an affine map, so the source offset moves by a constant stride per output pixel
        // and per output row: one multiply-free inner loop instead of a per-pixel switch.
        let (sx0, sy0, dxx, dyx, dxy, dyy): (Int, Int, Int, Int, Int, Int)
        switch orientation {  // source (x, y) at output (0, 0); source step per output x; per output y
        case .up: (sx0, sy0, dxx, dyx, dxy, dyy) = (0, 0, 1, 0, 0, 1)
        case .upMirrored: (sx0, sy0, dxx, dyx, dxy, dyy) = (w - 1, 0, -1, 0, 0, 1)
        case .down: (sx0, sy0, dxx, dyx, dxy, dyy) = (w - 1, h - 1, -1, 0, 0, -1)
        case .downMirrored: (sx0, sy0, dxx, dyx, dxy, dyy) = (0, h - 1, 1, 0, 0, -1)
        case .leftMirrored: (sx0, sy0, dxx, dyx, dxy, dyy) = (0, 0, 0, 1, 1, 0)
        case .right: (sx0, sy0, dxx, dyx, dxy, dyy) = (0, h - 1, 0, -1, 1, 0)
        case .rightMirrored: (sx0, sy0, dxx, dyx, dxy, dyy) = (w - 1, h - 1, 0, -1, -1, 0)
        case .left: (sx0, sy0, dxx, dyx, dxy, dyy) = (w - 1, 0, 0, 1, -1, 0)
        }
        let stepX = dxx + dyx * w  // in pixels
        let stepY = dxy + dyy * w
        let origin = sx0 + sy0 * w
        var out = [UInt8](repeating: 0, count: bytes.count)
        bytes.withUnsafeBytes { srcRaw in
            out.withUnsafeMutableBytes { dstRaw in
                if bpp == 4 {
                    let src = srcRaw.bindMemory(to: UInt32.self)
                    let dst = dstRaw.bindMemory(to: UInt32.self)
                    for y in 0..<outH {
                        var s = origin + y * stepY
                        let rowStart = y * outW
                        for x in 0..<outW {
                            dst[rowStart + x] = src[s]
                            s += stepX
                        }
                    }
                } else {
                    for y in 0..<outH {
                        var s = origin + y * stepY
                        let rowStart = y * outW
                        for x in 0..<outW {
                            dstRaw[rowStart + x] = srcRaw[s]
                            s += stepX
                        }
                    }
                }
            }
        }
        return PixelBuffer(uncheckedWidth: outW, height: outH, format: format, alphaMode: alphaMode, bytes: out)
    }
}
