extension ImageProcessors {
    /// Crops to the `width` × `height` window with the most interest: detail, colour and skin tones, the features
    /// libvips's `attention` strategy and smartcrop.js look for. For thumbnails that should keep the subject rather
    /// than the centre (imgproxy's `gravity:sm`).
    ///
    /// Each pixel scores its detail (the absolute Laplacian of luma), its colourfulness (max − min channel, where
    /// luma is neither near black nor near white) and, twice over, how close its chromaticity is to skin; scores are
    /// weighted by alpha. The window with the largest sum wins, found with a summed-area table on a grid of at most
    /// 65 × 65 positions; ties go to the window nearest the centre, so a featureless image is cropped in the middle.
    /// Images over a megapixel are scored on a copy resampled to 1,024 pixels on the long side.
    ///
    /// A window larger than the image is clamped to it. Keeps the pixel format and alpha mode.
    /// Throws ``ImageProcessors/Error/invalidCropSize(width:height:)`` for a side below 1.
    ///
    /// ```swift
    /// let square = try ImageProcessors.SmartCrop(width: 256, height: 256).process(scaledToCover)
    /// ```
    public struct SmartCrop: ImageProcessing {
        /// The window's width in pixels (≥ 1).
        public var width: Int
        /// The window's height in pixels (≥ 1).
        public var height: Int

        /// A smart crop to `width` × `height`.
        public init(width: Int, height: Int) {
            self.width = width
            self.height = height
        }

        /// `imago.smartCrop?w=…&h=…`.
        public var identifier: String { "imago.smartCrop?w=\(width)&h=\(height)" }

        /// The most interesting `width` × `height` window of `image`.
        public func process(_ image: PixelBuffer) throws -> PixelBuffer {
            guard width >= 1, height >= 1 else { throw Error.invalidCropSize(width: width, height: height) }
            let window = PixelSize(width: min(width, image.width), height: min(height, image.height))
            let origin = try Self.origin(of: window, in: image)
            return try Crop(x: origin.x, y: origin.y, width: window.width, height: window.height).process(image)
        }

        /// The top-left corner of the most interesting `window` (no larger than `image`) in `image`.
        public static func origin(of window: PixelSize, in image: PixelBuffer) throws -> (x: Int, y: Int) {
            let freeX = image.width - window.width
            let freeY = image.height - window.height
            guard freeX > 0 || freeY > 0 else { return (0, 0) }
            // Score a copy of at most a megapixel; map the answer back.
            var scored = ImageProcessors.straight(image)
            let longest = max(image.width, image.height)
            if image.width * image.height > 1 << 20 {
                let factor = 1024 / Double(longest)
                scored = try scored.resampled(
                    to: PixelSize(
                        width: max(1, Int((Double(image.width) * factor).rounded())),
                        height: max(1, Int((Double(image.height) * factor).rounded()))))
            }
            let scaleX = Double(scored.width) / Double(image.width)
            let scaleY = Double(scored.height) / Double(image.height)
            let table = summedInterest(scored)
            let w = min(scored.width, max(1, Int((Double(window.width) * scaleX).rounded())))
            let h = min(scored.height, max(1, Int((Double(window.height) * scaleY).rounded())))
            let rowLength = scored.width + 1
            func sum(_ x: Int, _ y: Int) -> Int64 {
                table[(y + h) * rowLength + x + w] - table[y * rowLength + x + w] - table[(y + h) * rowLength + x]
                    + table[y * rowLength + x]
            }
            let spanX = scored.width - w
            let spanY = scored.height - h
            let stepX = max(1, (spanX + 63) / 64)
            let stepY = max(1, (spanY + 63) / 64)
            var best: (x: Int, y: Int, sum: Int64, distance: Int) = (0, 0, -1, .max)
            for y in Array(stride(from: 0, to: spanY, by: stepY)) + [spanY] {
                for x in Array(stride(from: 0, to: spanX, by: stepX)) + [spanX] {
                    let total = sum(x, y)
                    let distance = abs(2 * x - spanX) + abs(2 * y - spanY)
                    if total > best.sum || (total == best.sum && distance < best.distance) {
                        best = (x, y, total, distance)
                    }
                }
            }
            let x = min(freeX, max(0, Int((Double(best.x) / scaleX).rounded())))
            let y = min(freeY, max(0, Int((Double(best.y) / scaleY).rounded())))
            return (x, y)
        }

        /// The summed-area table of the interest scores: `(width + 1) × (height + 1)` entries, row 0 and column 0
        /// zero.
        static func summedInterest(_ image: PixelBuffer) -> [Int64] {
            let width = image.width
            let height = image.height
            let channels = image.format.bytesPerPixel
            var luma = [Int32](repeating: 0, count: width * height)
            var colour = [Int32](repeating: 0, count: width * height)
            var weight = [Int32](repeating: 255, count: width * height)
            image.withUnsafeBytes { p in
                for i in 0..<(width * height) {
                    let o = i * channels
                    if channels == 1 {
                        luma[i] = Int32(p[o])
                        continue
                    }
                    let r = Int32(p[o])
                    let g = Int32(p[o + 1])
                    let b = Int32(p[o + 2])
                    let l = (77 * r + 150 * g + 29 * b) >> 8
                    luma[i] = l
                    weight[i] = Int32(p[o + 3])
                    var score: Int32 = 0
                    if l > 12, l < 230 { score += (max(r, g, b) - min(r, g, b)) / 2 }
                    // Skin: chromaticity near (0.43, 0.31, 0.26) of r+g+b, at a luma above 50.
                    let total = r + g + b
                    if total > 0, l > 50 {
                        let dr = Double(r) / Double(total) - 0.43
                        let dg = Double(g) / Double(total) - 0.31
                        let distance = (dr * dr + dg * dg).squareRoot()
                        if distance < 0.1 { score += Int32(2 * 255 * (1 - distance / 0.1)) }
                    }
                    colour[i] = score
                }
            }
            var table = [Int64](repeating: 0, count: (width + 1) * (height + 1))
            for y in 0..<height {
                var row: Int64 = 0
                for x in 0..<width {
                    let i = y * width + x
                    let l = luma[i]
                    let left = x > 0 ? luma[i - 1] : l
                    let right = x + 1 < width ? luma[i + 1] : l
                    let up = y > 0 ? luma[i - width] : l
                    let down = y + 1 < height ? luma[i + width] : l
                    let detail = min(255, abs(4 * l - left - right - up - down))
                    row += Int64((detail + colour[i]) * weight[i] / 255)
                    table[(y + 1) * (width + 1) + x + 1] = table[y * (width + 1) + x + 1] + row
                }
            }
            return table
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.SmartCrop {
    /// The most interesting `width` × `height` window.
    ///
    /// ```swift
    /// // A 1200 × 630 social card out of a larger photo, around its subject
    /// let request = ImageRequest(url: url, processors: [.smartCrop(width: 1200, height: 630)])
    /// ```
    public static func smartCrop(width: Int, height: Int) -> Self {
        ImageProcessors.SmartCrop(width: width, height: height)
    }
}
