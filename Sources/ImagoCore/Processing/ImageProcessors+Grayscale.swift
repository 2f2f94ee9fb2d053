extension ImageProcessors {
    /// Replaces colour by its luma, keeping alpha.
    ///
    /// Luma is computed on the stored (gamma-encoded, straight-alpha) values with integer arithmetic, rounded
    /// half up: ``Luma-swift.enum/rec601`` (default) is `(299 R + 587 G + 114 B + 500) / 1000`, the same as
    /// ``RGBA/luminance``; ``Luma-swift.enum/rec709`` is `(2126 R + 7152 G + 722 B + 5000) / 10000`. An `rgba8`
    /// image stays `rgba8` with R = G = B = luma and alpha unchanged; a `gray8` image is returned as it is.
    public struct Grayscale: ImageProcessing {
        /// Which luma weights to use.
        public enum Luma: String, Sendable, Hashable, CaseIterable {
            /// ITU-R BT.601: 0.299 R + 0.587 G + 0.114 B (default; what most image tools call grayscale).
            case rec601 = "601"
            /// ITU-R BT.709 (sRGB primaries): 0.2126 R + 0.7152 G + 0.0722 B.
            case rec709 = "709"
        }

        /// The luma weights (default ``Luma-swift.enum/rec601``).
        public var luma: Luma

        /// A grayscale conversion with `luma` weights (default `.rec601`).
        public init(luma: Luma = .rec601) {
            self.luma = luma
        }

        /// `imago.grayscale?luma=601|709`.
        public var identifier: String { "imago.grayscale?luma=\(luma.rawValue)" }

        /// The gray image.
        public func process(_ image: PixelBuffer) throws -> PixelBuffer {
            guard image.format == .rgba8 else { return image }
            var out = ImageProcessors.straight(image)
            let (wr, wg, wb, total): (UInt32, UInt32, UInt32, UInt32) =
                luma == .rec601 ? (299, 587, 114, 1000) : (2126, 7152, 722, 10000)
            out.bytes.withUnsafeMutableBufferPointer { p in
                var i = 0
                while i < p.count {
                    let y = (wr * UInt32(p[i]) + wg * UInt32(p[i + 1]) + wb * UInt32(p[i + 2]) + total / 2) / total
                    let v = UInt8(truncatingIfNeeded: y)
                    p[i] = v
                    p[i + 1] = v
                    p[i + 2] = v
                    i += 4
                }
            }
            return out
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Grayscale {
    /// Replaces colour by its luma (default Rec. 601 weights), keeping alpha.
    ///
    /// ```swift
    /// let request = ImageRequest(url: url, processors: [.grayscale()])
    /// ```
    public static func grayscale(luma: ImageProcessors.Grayscale.Luma = .rec601) -> Self {
        ImageProcessors.Grayscale(luma: luma)
    }
}
