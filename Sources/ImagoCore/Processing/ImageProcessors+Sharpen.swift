extension ImageProcessors {
    /// Sharpens the image with an unsharp mask: each colour channel `s` moves away from its Gaussian-blurred
    /// value `b`, becoming `s + amount × (s − b)`, rounded and clamped to 0…255. Alpha is kept as it was.
    ///
    /// The blur is ``GaussianBlur`` at standard deviation `sigma` (premultiplied, so transparent pixels never bleed
    /// colour into the mask). As a guide: 0.5 for screen-sized thumbnails, 1 to 1.5 for print resolutions.
    /// `sigma` 0 or `amount` 0 returns the input unchanged; the format is kept (`rgba8` or `gray8`).
    /// Throws ``ImageProcessors/Error/invalidRadius(processor:radius:)`` for a negative or non-finite `sigma` or
    /// `amount`.
    ///
    /// ```swift
    /// let crisp = try ImageProcessors.Sharpen(sigma: 0.5).process(thumbnail)
    /// ```
    public struct Sharpen: ImageProcessing {
        /// The blur's standard deviation in pixels (≥ 0).
        public var sigma: Double
        /// How far each channel moves from the blur, as a multiple of their difference (≥ 0).
        public var amount: Double

        /// An unsharp mask of `sigma` pixels (default 1) and strength `amount` (default 1).
        public init(sigma: Double = 1, amount: Double = 1) {
            self.sigma = sigma
            self.amount = amount
        }

        /// `imago.sharpen?sigma=…&amount=…`.
        public var identifier: String {
            "imago.sharpen?sigma=\(ImageProcessors.format(sigma))&amount=\(ImageProcessors.format(amount))"
        }

        /// The sharpened image.
        public func process(_ image: PixelBuffer) throws -> PixelBuffer {
            guard sigma.isFinite, sigma >= 0 else { throw Error.invalidRadius(processor: "sharpen", radius: sigma) }
            guard amount.isFinite, amount >= 0 else { throw Error.invalidRadius(processor: "sharpen", radius: amount) }
            let source = ImageProcessors.straight(image)
            if sigma == 0 || amount == 0 { return source }
            let blurred = ImageProcessors.straight(try GaussianBlur(radius: sigma).process(source))
            var out = source
            let channels = source.format.bytesPerPixel
            let colourChannels = source.format == .rgba8 ? 3 : 1
            blurred.withUnsafeBytes { mask in
                out.bytes.withUnsafeMutableBufferPointer { p in
                    var i = 0
                    while i < p.count {
                        for c in 0..<colourChannels {
                            let s = Double(p[i + c])
                            p[i + c] = clampedByte(s + amount * (s - Double(mask[i + c])))
                        }
                        i += channels
                    }
                }
            }
            out.opaqueMark = source.opaqueMark  // alpha is untouched
            return out
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Sharpen {
    /// An unsharp mask of `sigma` pixels (default 1) and strength `amount` (default 1).
    ///
    /// ```swift
    /// let request = ImageRequest(url: url, processors: [.resize(width: 256, height: 256), .sharpen(sigma: 0.5)])
    /// ```
    public static func sharpen(sigma: Double = 1, amount: Double = 1) -> Self {
        ImageProcessors.Sharpen(sigma: sigma, amount: amount)
    }
}
