extension ImageProcessors {
    /// Cuts away a uniform border: the rows and columns at the edges whose every pixel is within `threshold` of the
    /// background colour (imgproxy's `trim`).
    ///
    /// The background is `color` when given, else the top-left pixel. A pixel differs from an opaque background
    /// when any channel, alpha included, is more than `threshold` away; from a transparent background (alpha 0),
    /// when its alpha is more than `threshold`. `equalHorizontal` cuts the same amount from left and right (the
    /// smaller of the two), `equalVertical` from top and bottom. An image that is all background is returned
    /// unchanged. Keeps the pixel format; the result has straight alpha.
    ///
    /// ```swift
    /// let content = try ImageProcessors.Trim(threshold: 10).process(scanWithWhiteMargins)
    /// ```
    public struct Trim: ImageProcessing, Hashable {
        /// How far (0…255) a channel may be from the background's and still count as background.
        public var threshold: Int
        /// The background; `nil` (the default) takes the top-left pixel.
        public var color: RGBA?
        /// Whether left and right lose the same number of columns. Default `false`.
        public var equalHorizontal: Bool
        /// Whether top and bottom lose the same number of rows. Default `false`.
        public var equalVertical: Bool

        /// A trim of the border within `threshold` (default 10) of `color` (default: the top-left pixel).
        public init(threshold: Int = 10, color: RGBA? = nil, equalHorizontal: Bool = false, equalVertical: Bool = false)
        {
            self.threshold = threshold
            self.color = color
            self.equalHorizontal = equalHorizontal
            self.equalVertical = equalVertical
        }

        /// `imago.trim?t=…&color=#rrggbbaa|auto&eh=0|1&ev=0|1`.
        public var identifier: String {
            "imago.trim?t=\(threshold)&color=\(color.map(ImageProcessors.format) ?? "auto")"
                + "&eh=\(equalHorizontal ? 1 : 0)&ev=\(equalVertical ? 1 : 0)"
        }

        /// The image without its border.
        public func process(_ image: PixelBuffer) throws -> PixelBuffer {
            let source = ImageProcessors.straight(image)
            guard let box = contentBox(of: source) else { return source }
            if box.width == source.width, box.height == source.height { return source }
            return try Crop(x: box.x, y: box.y, width: box.width, height: box.height).process(source)
        }

        /// The smallest rectangle holding every pixel that is not background (evened out as asked), or `nil` when
        /// there is none.
        func contentBox(of image: PixelBuffer) -> (x: Int, y: Int, width: Int, height: Int)? {
            let background = color ?? image[pixel: 0, 0]
            let t = threshold
            let channels = image.format.bytesPerPixel
            let width = image.width
            let height = image.height
            let rowBytes = image.bytesPerRow
            return image.withUnsafeBytes { p -> (x: Int, y: Int, width: Int, height: Int)? in
                func differs(_ x: Int, _ y: Int) -> Bool {
                    let o = y * rowBytes + x * channels
                    if channels == 1 {
                        return background.a == 0 ? false : abs(Int(p[o]) - Int(background.r)) > t
                    }
                    if background.a == 0 { return Int(p[o + 3]) > t }
                    return abs(Int(p[o]) - Int(background.r)) > t || abs(Int(p[o + 1]) - Int(background.g)) > t
                        || abs(Int(p[o + 2]) - Int(background.b)) > t || abs(Int(p[o + 3]) - Int(background.a)) > t
                }
                func rowHasContent(_ y: Int) -> Bool { (0..<width).contains { differs($0, y) } }
                guard var top = (0..<height).first(where: rowHasContent) else { return nil }
                var bottom = (top..<height).last(where: rowHasContent) ?? top
                func columnHasContent(_ x: Int) -> Bool { (top...bottom).contains { differs(x, $0) } }
                var left = (0..<width).first(where: columnHasContent) ?? 0
                var right = (left..<width).last(where: columnHasContent) ?? left
                if equalHorizontal {
                    let cut = min(left, width - 1 - right)
                    (left, right) = (cut, width - 1 - cut)
                }
                if equalVertical {
                    let cut = min(top, height - 1 - bottom)
                    (top, bottom) = (cut, height - 1 - cut)
                }
                return (left, top, right - left + 1, bottom - top + 1)
            }
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Trim {
    /// The image without its border within `threshold` of `color` (default: the top-left pixel).
    ///
    /// ```swift
    /// let request = ImageRequest(url: url, processors: [.trim(threshold: 10), .resize(width: 256, height: 256)])
    /// ```
    public static func trim(
        threshold: Int = 10, color: RGBA? = nil, equalHorizontal: Bool = false, equalVertical: Bool = false
    ) -> Self {
        ImageProcessors.Trim(
            threshold: threshold, color: color, equalHorizontal: equalHorizontal, equalVertical: equalVertical)
    }
}
