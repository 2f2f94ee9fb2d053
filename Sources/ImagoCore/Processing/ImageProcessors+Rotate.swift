extension ImageProcessors {
    /// Turns the image clockwise by a multiple of 90 degrees (exact: pixels are moved, never resampled).
    ///
    /// Any multiple of 90 is accepted and taken modulo 360 (`-90` is the same as `270`); 90 and 270 swap width
    /// and height. Throws ``ImageProcessors/Error/invalidRotation(degrees:)`` for other angles. Keeps the format.
    public struct Rotate: ImageProcessing {
        /// Clockwise angle in degrees, a multiple of 90.
        public var degrees: Int

        /// A clockwise rotation by `degrees` (a multiple of 90).
        public init(degrees: Int) {
            self.degrees = degrees
        }

        /// `imago.rotate?deg=0|90|180|270` (normalised, so equal turns share a key; invalid angles keep theirs).
        public var identifier: String {
            "imago.rotate?deg=\(degrees % 90 == 0 ? normalized : degrees)"
        }

        private var normalized: Int { ((degrees % 360) + 360) % 360 }

        /// The turned image.
        public func process(_ image: PixelBuffer) throws -> PixelBuffer {
            guard degrees % 90 == 0 else { throw Error.invalidRotation(degrees: degrees) }
            switch normalized {
            case 90: return image.oriented(.right)
            case 180: return image.oriented(.down)
            case 270: return image.oriented(.left)
            default: return image
            }
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Rotate {
    /// Turns the image clockwise by `degrees`, a multiple of 90 (negative turns counter-clockwise).
    ///
    /// ```swift
    /// let request = ImageRequest(url: url, processors: [.rotate(degrees: 90)])
    /// ```
    public static func rotate(degrees: Int) -> Self {
        ImageProcessors.Rotate(degrees: degrees)
    }
}
