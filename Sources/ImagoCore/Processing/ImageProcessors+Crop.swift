extension ImageProcessors {
    /// Cuts out a rectangle of the image, clamped to the image's bounds.
    ///
    /// The rectangle is in pixels from the top-left corner; the part of it outside the image is dropped, so
    /// `Crop(x: -10, y: 0, width: 50, height: 50)` on a 100x100 image gives its 40x50 top-left corner.
    /// Throws ``ImageProcessors/Error/invalidCropSize(width:height:)`` for an empty rectangle and
    /// ``ImageProcessors/Error/cropOutsideImage(x:y:width:height:image:)`` when it misses the image entirely.
    /// Keeps the pixel format and alpha mode.
    public struct Crop: ImageProcessing {
        /// Left edge in pixels (may be negative; clamped).
        public var x: Int
        /// Top edge in pixels (may be negative; clamped).
        public var y: Int
        /// Width in pixels (≥ 1).
        public var width: Int
        /// Height in pixels (≥ 1).
        public var height: Int

        /// A crop to the rectangle at (`x`, `y`) of `width` × `height` pixels.
        public init(x: Int, y: Int, width: Int, height: Int) {
            self.x = x
            self.y = y
            self.width = width
            self.height = height
        }

        /// `imago.crop?x=…&y=…&w=…&h=…`.
        public var identifier: String { "imago.crop?x=\(x)&y=\(y)&w=\(width)&h=\(height)" }

        /// The clamped rectangle cut out of `image`.
        public func process(_ image: PixelBuffer) throws -> PixelBuffer {
            guard width > 0, height > 0 else { throw Error.invalidCropSize(width: width, height: height) }
            // Clamped in a way that cannot overflow, whatever the caller passed.
            let columns = ImageProcessors.covered(offset: x, length: width, within: image.width)
            let rows = ImageProcessors.covered(offset: y, length: height, within: image.height)
            let (left, right, top, bottom) = (columns.lowerBound, columns.upperBound, rows.lowerBound, rows.upperBound)
            guard left < right, top < bottom else {
                throw Error.cropOutsideImage(x: x, y: y, width: width, height: height, image: image.size)
            }
            return image.cropped(x: left, y: top, width: right - left, height: bottom - top)
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Crop {
    /// Cuts out the rectangle at (`x`, `y`) of `width` × `height` pixels, clamped to the image.
    ///
    /// ```swift
    /// let request = ImageRequest(url: url, processors: [.crop(x: 0, y: 0, width: 100, height: 100)])
    /// ```
    public static func crop(x: Int, y: Int, width: Int, height: Int) -> Self {
        ImageProcessors.Crop(x: x, y: y, width: width, height: height)
    }
}

extension PixelBuffer {
    /// The sub-rectangle, which the caller guarantees lies inside the image and is non-empty.
    func cropped(x: Int, y: Int, width w: Int, height h: Int) -> PixelBuffer {
        if x == 0, y == 0, w == width, h == height { return self }
        let bpp = format.bytesPerPixel
        let rowBytes = w * bpp
        let out = [UInt8](unsafeUninitializedCapacity: rowBytes * h) { dst, initialized in
            bytes.withUnsafeBufferPointer { src in
                guard let s = src.baseAddress, let d = dst.baseAddress else { return }
                for row in 0..<h {
                    (d + row * rowBytes).initialize(from: s + (y + row) * bytesPerRow + x * bpp, count: rowBytes)
                }
            }
            initialized = rowBytes * h
        }
        var part = PixelBuffer(uncheckedWidth: w, height: h, format: format, alphaMode: alphaMode, bytes: out)
        part.opaqueMark = opaqueMark
        return part
    }
}
