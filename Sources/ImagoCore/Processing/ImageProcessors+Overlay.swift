extension ImageProcessors {
    /// Draws another image over this one (Porter-Duff source-over, straight alpha) with its top-left corner at
    /// (`x`, `y`) and its alpha multiplied by `opacity`: a watermark, a badge, a play button. Parts of the overlay
    /// outside the image are dropped.
    ///
    /// `id` names the overlay's pixels in the identifier (cache keys cannot hold the pixels themselves): give each
    /// different overlay a different id, e.g. a digest of its file. The result is `rgba8`.
    /// Throws ``ImageProcessors/Error/invalidRadius(processor:radius:)`` for an opacity outside 0…1.
    ///
    /// ```swift
    /// let badge = try ImageProcessors.Overlay(logo, id: "logo-v2", x: 8, y: 8, opacity: 0.8).process(photo)
    /// ```
    public struct Overlay: ImageProcessing {
        /// The image drawn on top.
        public var overlay: PixelBuffer
        /// Names ``overlay``'s pixels in ``identifier``.
        public var id: String
        /// Where the overlay's left edge goes (may be negative).
        public var x: Int
        /// Where the overlay's top edge goes (may be negative).
        public var y: Int
        /// Multiplies the overlay's alpha, 0…1.
        public var opacity: Double

        /// `overlay`, named `id`, drawn at (`x`, `y`) with `opacity` (default 1).
        public init(_ overlay: PixelBuffer, id: String, x: Int, y: Int, opacity: Double = 1) {
            self.overlay = overlay
            self.id = id
            self.x = x
            self.y = y
            self.opacity = opacity
        }

        /// `imago.overlay?id=…&x=…&y=…&opacity=…`.
        public var identifier: String {
            "imago.overlay?id=\(id)&x=\(x)&y=\(y)&opacity=\(ImageProcessors.format(opacity))"
        }

        /// The image with the overlay drawn on it.
        public func process(_ image: PixelBuffer) throws -> PixelBuffer {
            try process(image, drawing: overlay)
        }

        /// The image, in `profile`'s space when it keeps one, with the overlay (an sRGB image) converted into that
        /// space drawn on it (``ColorProfile/fromSRGB(_:)-(PixelBuffer)``).
        public func process(_ image: PixelBuffer, profile: ColorProfile?) throws -> PixelBuffer {
            try process(image, drawing: profile?.fromSRGB(overlay) ?? overlay)
        }

        private func process(_ image: PixelBuffer, drawing overlay: PixelBuffer) throws -> PixelBuffer {
            guard opacity.isFinite, (0...1).contains(opacity) else {
                throw Error.invalidRadius(processor: "overlay opacity", radius: opacity)
            }
            var out = ImageProcessors.straight(image).convertedToRGBA()
            out.draw(overlay, x: x, y: y, opacity: opacity)
            return out
        }
    }
}

extension PixelBuffer {
    /// Draws `overlay` over this `rgba8`, straight-alpha buffer at (`x`, `y`), its alpha times `opacity` (0…1),
    /// source-over; the part outside is dropped. For processors that draw many times into one buffer (tiling).
    package mutating func draw(_ overlay: PixelBuffer, x: Int, y: Int, opacity: Double) {
        precondition(format == .rgba8 && alphaMode == .straight, "draw(_:x:y:opacity:) needs straight rgba8")
        let top = ImageProcessors.straight(overlay).convertedToRGBA()
        let columns = ImageProcessors.covered(offset: x, length: top.width, within: width)
        let rows = ImageProcessors.covered(offset: y, length: top.height, within: height)
        guard !columns.isEmpty, !rows.isEmpty, opacity > 0 else { return }
        let (left, right, upper, bottom) = (columns.lowerBound, columns.upperBound, rows.lowerBound, rows.upperBound)
        let stride = bytesPerRow
        let wasOpaque = isKnownOpaque
        top.withUnsafeBytes { source in
            bytes.withUnsafeMutableBufferPointer { target in
                for row in upper..<bottom {
                    var s = (row - y) * top.bytesPerRow + (left - x) * 4
                    var d = row * stride + left * 4
                    for _ in left..<right {
                        let sa = Double(source[s + 3]) * opacity / 255
                        if sa > 0 {
                            let behind = Double(target[d + 3]) / 255 * (1 - sa)
                            let oa = sa + behind
                            for c in 0..<3 {
                                target[d + c] = clampedByte(
                                    (Double(source[s + c]) * sa + Double(target[d + c]) * behind) / oa)
                            }
                            target[d + 3] = clampedByte(oa * 255)
                        }
                        s += 4
                        d += 4
                    }
                }
            }
        }
        opaqueMark = wasOpaque  // over an opaque pixel the result stays opaque
    }
}

extension ImageProcessing where Self == ImageProcessors.Overlay {
    /// `overlay`, named `id`, drawn at (`x`, `y`) with `opacity` (default 1).
    ///
    /// ```swift
    /// let request = ImageRequest(url: url, processors: [.overlay(logo, id: "logo-v2", x: 8, y: 8)])
    /// ```
    public static func overlay(_ overlay: PixelBuffer, id: String, x: Int, y: Int, opacity: Double = 1) -> Self {
        ImageProcessors.Overlay(overlay, id: id, x: x, y: y, opacity: opacity)
    }
}
