extension ImageProcessors {
    /// Mirrors the image left-right or top-bottom (exact; keeps the size and format).
    public struct Flip: ImageProcessing {
        /// Which way the pixels move.
        public enum Direction: String, Sendable, Hashable, CaseIterable {
            /// Mirrors left and right: the first column becomes the last.
            case horizontal = "h"
            /// Mirrors top and bottom: the first row becomes the last.
            case vertical = "v"
        }

        /// The mirroring direction.
        public var direction: Direction

        /// A flip in `direction`.
        public init(_ direction: Direction) {
            self.direction = direction
        }

        /// `imago.flip?dir=h|v`.
        public var identifier: String { "imago.flip?dir=\(direction.rawValue)" }

        /// The mirrored image.
        public func process(_ image: PixelBuffer) throws -> PixelBuffer {
            image.oriented(direction == .horizontal ? .upMirrored : .downMirrored)
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Flip {
    /// Mirrors the image in `direction` (`.horizontal`: left-right; `.vertical`: top-bottom).
    ///
    /// ```swift
    /// let request = ImageRequest(url: url, processors: [.flip(.horizontal)])
    /// ```
    public static func flip(_ direction: ImageProcessors.Flip.Direction) -> Self {
        ImageProcessors.Flip(direction)
    }
}
