extension ImageProcessors {
    /// Pixelates the image: every `size` × `size` block (from the top-left corner; the last row and column of
    /// blocks may be smaller) takes the mean of its pixels, colour weighted by alpha so that transparent pixels
    /// lend no colour.
    ///
    /// `size` 1 returns the input unchanged; the format is kept (`rgba8`, straight alpha, or `gray8`).
    /// Throws ``ImageProcessors/Error/invalidTargetSize(width:height:)`` for a `size` below 1.
    ///
    /// ```swift
    /// let hidden = try ImageProcessors.Pixelate(size: 16).process(face)
    /// ```
    public struct Pixelate: ImageProcessing {
        /// The side of a block in pixels (≥ 1).
        public var size: Int

        /// Blocks of `size` × `size` pixels (default 8).
        public init(size: Int = 8) {
            self.size = size
        }

        /// `imago.pixelate?size=…`.
        public var identifier: String { "imago.pixelate?size=\(size)" }

        /// The pixelated image.
        public func process(_ image: PixelBuffer) throws -> PixelBuffer {
            guard size >= 1 else { throw Error.invalidTargetSize(width: size, height: size) }
            let source = ImageProcessors.straight(image)
            if size == 1 { return source }
            var out = source
            let width = source.width
            let height = source.height
            let channels = source.format.bytesPerPixel
            let rowBytes = source.bytesPerRow
            out.bytes.withUnsafeMutableBufferPointer { p in
                for top in stride(from: 0, to: height, by: size) {
                    let bottom = min(top + size, height)
                    for left in stride(from: 0, to: width, by: size) {
                        let right = min(left + size, width)
                        var sums: (Int, Int, Int, Int) = (0, 0, 0, 0)
                        for y in top..<bottom {
                            var i = y * rowBytes + left * channels
                            for _ in left..<right {
                                if channels == 4 {
                                    let a = Int(p[i + 3])
                                    sums.0 += Int(p[i]) * a
                                    sums.1 += Int(p[i + 1]) * a
                                    sums.2 += Int(p[i + 2]) * a
                                    sums.3 += a
                                } else {
                                    sums.0 += Int(p[i])
                                }
                                i += channels
                            }
                        }
                        let count = (bottom - top) * (right - left)
                        var value = SIMD4<UInt8>(repeating: 0)
                        if channels == 4 {
                            let alpha = sums.3
                            let mean = { (sum: Int) -> UInt8 in alpha == 0 ? 0 : UInt8((sum + alpha / 2) / alpha) }
                            value = SIMD4(mean(sums.0), mean(sums.1), mean(sums.2), UInt8((alpha + count / 2) / count))
                        } else {
                            value[0] = UInt8((sums.0 + count / 2) / count)
                        }
                        for y in top..<bottom {
                            var i = y * rowBytes + left * channels
                            for _ in left..<right {
                                for c in 0..<channels { p[i + c] = value[c] }
                                i += channels
                            }
                        }
                    }
                }
            }
            out.opaqueMark = source.opaqueMark  // the mean of opaque pixels is opaque
            return out
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Pixelate {
    /// Blocks of `size` × `size` pixels (default 8), each the mean of its pixels.
    ///
    /// ```swift
    /// let request = ImageRequest(url: url, processors: [.pixelate(size: 12)])
    /// ```
    public static func pixelate(size: Int = 8) -> Self { ImageProcessors.Pixelate(size: size) }
}
