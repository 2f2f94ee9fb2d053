import ImagoCore

/// imgproxy's `crop`: an area of the source (as its EXIF orientation, the rotation and the flip show it) cut out
/// before it is resized.
/// Each side is pixels when at least 1, a fraction of the source's side when below 1, or the whole side when 0;
/// the area is placed by its own gravity or the URL's, and never extends past the image.
struct ProxyCrop: ImageProcessing {
    var width: Double
    var height: Double
    var placement: ProcessingOptions.Placement

    /// The crop `options` ask for, or `nil` when they ask for none.
    init?(_ options: ProcessingOptions) {
        guard let area = options.crop else { return nil }
        width = area.width
        height = area.height
        placement = area.placement ?? options.placement
    }

    var identifier: String {
        "imago.serve.crop?w=\(ProcessingOptions.text(width))&h=\(ProcessingOptions.text(height))&g="
            + ProcessingOptions.text(placement)
    }

    func process(_ image: PixelBuffer) throws -> PixelBuffer {
        let area = PixelSize(width: Self.side(width, of: image.width), height: Self.side(height, of: image.height))
        if area == image.size { return image }
        // Offsets are in source pixels: DPR scales outputs, not the source.
        let origin = try placement.origin(of: area, in: image, dpr: 1)
        return try ImageProcessors.Crop(x: origin.x, y: origin.y, width: area.width, height: area.height).process(image)
    }

    /// One side of the area on a source side of `length` pixels.
    static func side(_ value: Double, of length: Int) -> Int {
        if value == 0 { return length }
        if value < 1 { return min(length, max(1, Int((Double(length) * value).rounded()))) }
        return min(length, Int(value))
    }
}
