extension ImageProcessors {
    /// Colours the image with a tint colour, keeping every pixel's alpha (so transparent areas stay transparent).
    ///
    /// With `s` a pixel's straight colour channel, `t` the tint's channel and `k = color.a / 255` the tint's
    /// strength, each of R, G, B becomes, rounded to the nearest integer (halves up):
    /// - ``Blend-swift.enum/sourceAtop`` (default): `s + (t − s) × k`: the tint painted over the image where the
    ///   image is (Porter-Duff source-atop of a solid layer); an opaque tint gives a silhouette in its colour.
    /// - ``Blend-swift.enum/multiply``: `s + (s × t / 255 − s) × k`: the image multiplied by the tint, which keeps
    ///   shading (white takes the tint's colour, black stays black).
    ///
    /// The result is `rgba8` (a `gray8` input is expanded first); a tint with alpha 0 returns the input unchanged.
    public struct Tint: ImageProcessing {
        /// How the tint combines with the image.
        public enum Blend: String, Sendable, Hashable, CaseIterable {
            /// The tint over the image, within the image's alpha (default).
            case sourceAtop = "atop"
            /// The image's colour multiplied by the tint.
            case multiply = "multiply"
        }

        /// The tint colour; its alpha is the strength (255 = full).
        public var color: RGBA
        /// How the tint combines (default ``Blend-swift.enum/sourceAtop``).
        public var blend: Blend

        /// A tint with `color` combined by `blend` (default `.sourceAtop`).
        public init(color: RGBA, blend: Blend = .sourceAtop) {
            self.color = color
            self.blend = blend
        }

        /// `imago.tint?color=#rrggbbaa&blend=atop|multiply`.
        public var identifier: String {
            "imago.tint?color=\(ImageProcessors.format(color))&blend=\(blend.rawValue)"
        }

        /// The tinted image.
        public func process(_ image: PixelBuffer) throws -> PixelBuffer {
            if color.a == 0 { return image }
            // Each output channel depends only on the input channel: one 256-entry table per channel.
            let table = [color.r, color.g, color.b].flatMap { t in (0..<256).map { mapped(UInt8($0), tint: t) } }
            var out = ImageProcessors.straight(image).convertedToRGBA()
            table.withUnsafeBufferPointer { lut in
                out.bytes.withUnsafeMutableBufferPointer { p in
                    var i = 0
                    while i < p.count {
                        p[i] = lut[Int(p[i])]
                        p[i + 1] = lut[256 + Int(p[i + 1])]
                        p[i + 2] = lut[512 + Int(p[i + 2])]
                        i += 4
                    }
                }
            }
            return out
        }

        /// One channel through the blend formula in the doc comment.
        func mapped(_ s: UInt8, tint t: UInt8) -> UInt8 {
            let k = Double(color.a) / 255
            let sd = Double(s)
            let target = blend == .sourceAtop ? Double(t) : sd * Double(t) / 255
            return clampedByte(sd + (target - sd) * k)
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Tint {
    /// Colours the image with `color` (its alpha is the strength) combined by `blend` (default `.sourceAtop`).
    ///
    /// ```swift
    /// let request = ImageRequest(url: url, processors: [.tint(RGBA(r: 0, g: 122, b: 255))])
    /// ```
    public static func tint(_ color: RGBA, blend: ImageProcessors.Tint.Blend = .sourceAtop) -> Self {
        ImageProcessors.Tint(color: color, blend: blend)
    }
}
