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
        // Every output byte is written below, so the array starts uninitialised (no zero fill).
        let out = [UInt8](unsafeUninitializedCapacity: bytes.count) { dstBuffer, initialized in
            let dstRaw = UnsafeMutableRawBufferPointer(dstBuffer)
            bytes.withUnsafeBytes { srcRaw in
                if bpp == 4 {
                    for y in 0..<outH {
                        var s = origin + y * stepY
                        let rowStart = y * outW
                        for x in 0..<outW {
                            let pixel = srcRaw.loadUnaligned(fromByteOffset: s * 4, as: UInt32.self)
                            dstRaw.storeBytes(of: pixel, toByteOffset: (rowStart + x) * 4, as: UInt32.self)
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
            initialized = dstBuffer.count
        }
        var turned = PixelBuffer(uncheckedWidth: outW, height: outH, format: format, alphaMode: alphaMode, bytes: out)
        turned.opaqueMark = opaqueMark  // pixels move, alpha bytes are unchanged
        return turned
    }
}
