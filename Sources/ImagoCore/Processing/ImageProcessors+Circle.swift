extension ImageProcessors {
    /// Crops the image to its centred square, then masks it to the inscribed circle, optionally with a border.
    ///
    /// The square's side is the shorter side of the image (offset rounded down when the difference is odd);
    /// pixels outside the circle become transparent and its edge is anti-aliased like
    /// ``ImageProcessors/RoundedCorners``, which this is on a square with radius side / 2. The result is `rgba8`.
    public struct Circle: ImageProcessing {
        /// The border drawn along the circle, if any (default none).
        public var border: Border?

        /// A circular mask with an optional `border` (default none).
        public init(border: Border? = nil) {
            self.border = border
        }

        /// `imago.circle`, plus `?border=…&color=#rrggbbaa` with a border.
        public var identifier: String {
            guard let border else { return "imago.circle" }
            return "imago.circle?" + border.identifierSuffix.dropFirst()
        }

        /// The circular image.
        public func process(_ image: PixelBuffer) throws -> PixelBuffer {
            if let border, !(border.width.isFinite && border.width >= 0) {
                throw Error.invalidBorderWidth(border.width)
            }
            let side = min(image.width, image.height)
            let square = image.cropped(
                x: (image.width - side) / 2, y: (image.height - side) / 2, width: side, height: side)
            return square.maskedToRoundedRect(radius: Double(side) / 2, border: border)
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Circle {
    /// Crops to the centred square and masks it to a circle, optionally with `border` (default none).
    ///
    /// ```swift
    /// let request = ImageRequest(url: url, processors: [.resize(width: 64, height: 64, mode: .aspectFill), .circle()])
    /// ```
    public static func circle(border: ImageProcessors.Border? = nil) -> Self {
        ImageProcessors.Circle(border: border)
    }
}
