extension ImageProcessors {
    /// Composites the image over a solid colour (Porter-Duff source-over, straight alpha): with an opaque colour
    /// every pixel becomes opaque, which is how an image with transparency is flattened for a format without
    /// alpha (JPEG). An image already opaque is returned unchanged; otherwise the result is `rgba8`.
    ///
    /// ```swift
    /// let onWhite = try ImageProcessors.Background(color: RGBA(r: 255, g: 255, b: 255)).process(logo)
    /// ```
    public struct Background: ImageProcessing {
        /// The colour behind the image (straight alpha; 255 flattens).
        public var color: RGBA

        /// The image over `color`.
        public init(color: RGBA) {
            self.color = color
        }

        /// `imago.background?color=#rrggbbaa`.
        public var identifier: String { "imago.background?color=\(ImageProcessors.format(color))" }

        /// The image over the colour.
        public func process(_ image: PixelBuffer) throws -> PixelBuffer {
            if image.isKnownOpaque || color.a == 0 { return image }
            var out = ImageProcessors.straight(image).convertedToRGBA()
            let backAlpha = Double(color.a) / 255
            let back = [Double(color.r), Double(color.g), Double(color.b)]
            out.bytes.withUnsafeMutableBufferPointer { p in
                var i = 0
                while i < p.count {
                    let a = p[i + 3]
                    if a != 255 {
                        let sa = Double(a) / 255
                        let behind = backAlpha * (1 - sa)
                        let oa = sa + behind
                        for c in 0..<3 {
                            p[i + c] = oa == 0 ? 0 : clampedByte((Double(p[i + c]) * sa + back[c] * behind) / oa)
                        }
                        p[i + 3] = clampedByte(oa * 255)
                    }
                    i += 4
                }
            }
            out.opaqueMark = color.a == 255
            return out
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Background {
    /// The image over `color` (flattened when the colour is opaque).
    ///
    /// ```swift
    /// let request = ImageRequest(url: url, processors: [.background(RGBA(r: 255, g: 255, b: 255))])
    /// ```
    public static func background(_ color: RGBA) -> Self { ImageProcessors.Background(color: color) }
}
