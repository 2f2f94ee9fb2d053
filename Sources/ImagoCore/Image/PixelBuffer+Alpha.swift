extension PixelBuffer {
    /// Whether every pixel is known to be fully opaque without reading the pixels.
    ///
    /// Always `true` for `gray8`. For `rgba8`, `true` when the buffer's maker vouched for it with
    /// ``assumingOpaque()`` (Imago's decoders do for JPEG, PNG without alpha or tRNS, and WebP without alpha) and
    /// the bytes have not been written since; resampling, cropping and orienting such a buffer keep the mark.
    /// `false` means "not known", not "transparent": ``hasTransparency`` answers by scanning the alpha bytes.
    public var isKnownOpaque: Bool { format == .gray8 || opaqueMark }

    /// This buffer marked as fully opaque, so that ``hasTransparency`` and ``resampled(to:)`` skip scanning its
    /// alpha channel (one byte read in four, a few per cent of a thumbnail pipeline's CPU time).
    ///
    /// For decoders of formats or files without alpha. The caller vouches that every alpha byte is 255: a buffer
    /// marked falsely resamples as if it were opaque (debug builds check the promise and trap). Shares the
    /// storage (no copy). Any later write through ``withUnsafeMutableBytes(_:)`` or the pixel subscript drops
    /// the mark.
    ///
    /// ```swift
    /// let image = try PixelBuffer(width: w, height: h) { fillFromJPEG($0) }.assumingOpaque()
    /// ```
    public func assumingOpaque() -> PixelBuffer {
        assert(!scansTransparent(), "assumingOpaque() on a buffer with an alpha byte below 255")
        var marked = self
        marked.opaqueMark = true
        return marked
    }

    /// Whether any pixel is less than fully opaque (always `false` for `gray8`); reads every alpha byte unless
    /// ``isKnownOpaque``.
    public var hasTransparency: Bool {
        if isKnownOpaque { return false }
        return scansTransparent()
    }

    /// Reads every alpha byte, whatever the mark says.
    private func scansTransparent() -> Bool {
        guard format == .rgba8 else { return false }
        return bytes.withUnsafeBufferPointer { p in
            var i = 3
            while i < p.count {
                if p[i] != 255 { return true }
                i += 4
            }
            return false
        }
    }

    /// This buffer with colour multiplied by alpha (rounded); unchanged if already premultiplied or gray.
    public func premultiplied() -> PixelBuffer {
        guard format == .rgba8, alphaMode == .straight else { return self }
        var copy = self
        copy.bytes.withUnsafeMutableBufferPointer { p in
            var i = 0
            while i < p.count {
                let a = UInt32(p[i + 3])
                if a != 255 {
                    p[i] = UInt8((UInt32(p[i]) * a + 127) / 255)
                    p[i + 1] = UInt8((UInt32(p[i + 1]) * a + 127) / 255)
                    p[i + 2] = UInt8((UInt32(p[i + 2]) * a + 127) / 255)
                }
                i += 4
            }
        }
        copy.alphaMode = .premultiplied
        copy.opaqueMark = opaqueMark  // alpha is untouched
        return copy
    }

    /// This buffer with colour divided by alpha again (rounded, clamped); unchanged if already straight.
    /// Fully transparent pixels become transparent black.
    public func unpremultiplied() -> PixelBuffer {
        guard format == .rgba8, alphaMode == .premultiplied else { return self }
        var copy = self
        copy.bytes.withUnsafeMutableBufferPointer { p in
            var i = 0
            while i < p.count {
                let a = UInt32(p[i + 3])
                if a == 0 {
                    p[i] = 0
                    p[i + 1] = 0
                    p[i + 2] = 0
                } else if a != 255 {
                    p[i] = UInt8(min(255, (UInt32(p[i]) * 255 + a / 2) / a))
                    p[i + 1] = UInt8(min(255, (UInt32(p[i + 1]) * 255 + a / 2) / a))
                    p[i + 2] = UInt8(min(255, (UInt32(p[i + 2]) * 255 + a / 2) / a))
                }
                i += 4
            }
        }
        copy.alphaMode = .straight
        copy.opaqueMark = opaqueMark  // alpha is untouched
        return copy
    }

    /// This buffer as RGBA8 with straight alpha, what encoders hand their libraries: gray expanded
    /// (``convertedToRGBA()``), premultiplied colour divided out (``unpremultiplied()``); unchanged if already so.
    package var straightRGBA: PixelBuffer { convertedToRGBA().unpremultiplied() }

    /// This buffer as RGBA8 (gray expanded, alpha 255); unchanged if already RGBA8.
    public func convertedToRGBA() -> PixelBuffer {
        guard format == .gray8 else { return self }
        var out = [UInt8](repeating: 255, count: width * height * 4)
        bytes.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                for i in 0..<src.count {
                    let v = src[i]
                    dst[i * 4] = v
                    dst[i * 4 + 1] = v
                    dst[i * 4 + 2] = v
                }
            }
        }
        var rgba = PixelBuffer(uncheckedWidth: width, height: height, format: .rgba8, alphaMode: .straight, bytes: out)
        rgba.opaqueMark = true  // every alpha was just written as 255
        return rgba
    }
}
