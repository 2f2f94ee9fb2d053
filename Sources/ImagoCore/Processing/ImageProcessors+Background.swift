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
            try process(image) { color }
        }

        /// The image, in `profile`'s space when it keeps one, over the colour converted into that space
        /// (``ColorProfile/fromSRGB(_:)-(RGBA)``), so that it shows as the colour asked for.
        public func process(_ image: PixelBuffer, profile: ColorProfile?) throws -> PixelBuffer {
            try process(image) { profile?.fromSRGB(color) ?? color }
        }

        /// The image over `color()`, asked for only when some of the colour shows: not under an opaque image, and
        /// not when transparent.
        private func process(_ image: PixelBuffer, over color: () -> RGBA) throws -> PixelBuffer {
            if image.isKnownOpaque || self.color.a == 0 { return image }
            // The image drawn over a canvas of the colour: PixelBuffer.draw is the one source-over there is.
            var out = try ImageProcessors.filled(width: image.width, height: image.height, with: color())
            out.draw(image, x: 0, y: 0, opacity: 1)
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
