extension ImageProcessors {
    /// Why a built-in processor refused its parameters; thrown from `process(_:)`.
    public enum Error: Swift.Error, Sendable, Hashable, CustomStringConvertible {
        /// A resize target with a zero or negative dimension.
        case invalidTargetSize(width: Int, height: Int)
        /// A crop rectangle with a zero or negative width or height.
        case invalidCropSize(width: Int, height: Int)
        /// A crop rectangle that does not overlap the image at all.
        case cropOutsideImage(x: Int, y: Int, width: Int, height: Int, image: PixelSize)
        /// A radius (blur, corner) that is negative, infinite or not a number.
        case invalidRadius(processor: String, radius: Double)
        /// A border width that is negative, infinite or not a number.
        case invalidBorderWidth(Double)
        /// A rotation that is not a multiple of 90 degrees.
        case invalidRotation(degrees: Int)

        /// A sentence saying what was wrong and what to pass instead.
        public var description: String {
            switch self {
            case .invalidTargetSize(let w, let h):
                "resize target \(w)x\(h) is empty; pass a width and height of at least 1 pixel"
            case .invalidCropSize(let w, let h):
                "crop size \(w)x\(h) is empty; pass a width and height of at least 1 pixel"
            case .cropOutsideImage(let x, let y, let w, let h, let image):
                "crop rectangle (x \(x), y \(y), \(w)x\(h)) lies outside the \(image) image; "
                    + "pass a rectangle that overlaps it"
            case .invalidRadius(let processor, let radius):
                "\(processor) radius \(radius) is invalid; pass a finite radius of 0 or more pixels"
            case .invalidBorderWidth(let width):
                "border width \(width) is invalid; pass a finite width of 0 or more pixels"
            case .invalidRotation(let degrees):
                "rotation by \(degrees)° is not supported; pass a multiple of 90 degrees"
            }
        }
    }
}
