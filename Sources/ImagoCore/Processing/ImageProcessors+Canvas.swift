extension ImageProcessors {
    /// Places the image on a canvas of `width` × `height` pixels with the image's top-left corner at (`x`, `y`)
    /// and the rest of the canvas filled with `fill` (transparent by default): what extending an image to a box,
    /// padding it or letterboxing it need. Parts of the image outside the canvas are cut off.
    ///
    /// The result is `rgba8` with straight alpha (a `gray8` input is expanded first).
    /// Throws ``ImageProcessors/Error/invalidTargetSize(width:height:)`` for a canvas side below 1 (or one too large
    /// to allocate).
    ///
    /// ```swift
    /// // 10 pixels of white around a 100 × 80 image
    /// let padded = try ImageProcessors.Canvas(width: 120, height: 100, x: 10, y: 10, fill: RGBA(r: 255, g: 255, b: 255))
    ///     .process(image)
    /// ```
    public struct Canvas: ImageProcessing {
        /// The canvas width in pixels (≥ 1).
        public var width: Int
        /// The canvas height in pixels (≥ 1).
        public var height: Int
        /// Where the image's left edge goes, in canvas pixels (may be negative).
        public var x: Int
        /// Where the image's top edge goes, in canvas pixels (may be negative).
        public var y: Int
        /// The colour of the canvas around the image (straight alpha).
        public var fill: RGBA

        /// A `width` × `height` canvas with the image at (`x`, `y`) and `fill` around it (default transparent).
        public init(width: Int, height: Int, x: Int, y: Int, fill: RGBA = RGBA(r: 0, g: 0, b: 0, a: 0)) {
            self.width = width
            self.height = height
            self.x = x
            self.y = y
            self.fill = fill
        }

        /// `imago.canvas?w=…&h=…&x=…&y=…&fill=#rrggbbaa`.
        public var identifier: String {
            "imago.canvas?w=\(width)&h=\(height)&x=\(x)&y=\(y)&fill=\(ImageProcessors.format(fill))"
        }

        /// The image on its canvas.
        public func process(_ image: PixelBuffer) throws -> PixelBuffer {
            try process(image) { fill }
        }

        /// The image, in `profile`'s space when it keeps one, on a canvas of the fill converted into that space
        /// (``ColorProfile/fromSRGB(_:)-(RGBA)``).
        public func process(_ image: PixelBuffer, profile: ColorProfile?) throws -> PixelBuffer {
            try process(image) { profile?.fromSRGB(fill) ?? fill }
        }

        /// The image on a canvas of `fill()`, asked for only when some of it shows (not when the canvas is the
        /// image's own size at its origin: the image is then the result).
        private func process(_ image: PixelBuffer, fill: () -> RGBA) throws -> PixelBuffer {
            guard width >= 1, height >= 1 else { throw Error.invalidTargetSize(width: width, height: height) }
            let source = ImageProcessors.straight(image).convertedToRGBA()
            if width == source.width, height == source.height, x == 0, y == 0 { return source }
            let fill = fill()
            var out: PixelBuffer
            do {
                out = try ImageProcessors.filled(width: width, height: height, with: fill)
            } catch {
                throw Error.invalidTargetSize(width: width, height: height)
            }
            let columns = ImageProcessors.covered(offset: x, length: source.width, within: width)
            let rows = ImageProcessors.covered(offset: y, length: source.height, within: height)
            let (left, right, top, bottom) = (columns.lowerBound, columns.upperBound, rows.lowerBound, rows.upperBound)
            out.bytes.withUnsafeMutableBufferPointer { p in
                guard left < right, top < bottom, let base = p.baseAddress else { return }
                source.withUnsafeBytes { s in
                    guard let pixels = s.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
                    let count = (right - left) * 4
                    for row in top..<bottom {
                        let from = (row - y) * source.bytesPerRow + (left - x) * 4
                        (base + (row * width + left) * 4).update(from: pixels + from, count: count)
                    }
                }
            }
            let covered = left == 0 && top == 0 && right == width && bottom == height
            out.opaqueMark = source.isKnownOpaque && (fill.a == 255 || covered)
            return out
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Canvas {
    /// The image at (`x`, `y`) on a `width` × `height` canvas of `fill` (default transparent).
    ///
    /// ```swift
    /// let request = ImageRequest(url: url, processors: [.canvas(width: 300, height: 300, x: 0, y: 50)])
    /// ```
    public static func canvas(
        width: Int, height: Int, x: Int, y: Int, fill: RGBA = RGBA(r: 0, g: 0, b: 0, a: 0)
    ) -> Self {
        ImageProcessors.Canvas(width: width, height: height, x: x, y: y, fill: fill)
    }
}
