import ImagoCore

/// The HEIF/MIAF item transforms: `clap` crop, then `irot` (anticlockwise quarter turns), then `imir` (mirror),
/// in that order, expressed as a crop rectangle and one ``ExifOrientation``.
struct ItemTransform: Sendable, Hashable {
    /// The clean-aperture rectangle in stored pixels, or `nil` for the whole image.
    var crop: CropRect?
    /// The rotation and mirror combined, as the EXIF orientation that displays the cropped pixels upright.
    var orientation: ExifOrientation

    /// A rectangle in stored pixel coordinates.
    struct CropRect: Sendable, Hashable {
        var x: Int
        var y: Int
        var width: Int
        var height: Int
    }

    /// The orientation for `irot` angle (0…3, anticlockwise quarter turns) followed by `imir` (`nil` = none,
    /// 0 = top/bottom swap, 1 = left/right swap).
    ///
    /// With R a clockwise quarter turn, M a left/right flip and V a top/bottom flip: EXIF 6 is R, 8 is R³, 3 is
    /// R², 2 is M, 4 is V, 5 (transpose) is M after R and 7 (transverse) is V after R.
    static func orientation(rotation: Int, mirror: Int?) -> ExifOrientation {
        switch (rotation & 3, mirror) {
        case (0, nil): .up
        case (1, nil): .left
        case (2, nil): .down
        case (3, nil): .right
        case (0, 0?): .downMirrored
        case (0, _?): .upMirrored
        case (1, 0?): .leftMirrored
        case (1, _?): .rightMirrored
        case (2, 0?): .upMirrored
        case (2, _?): .downMirrored
        case (3, 0?): .rightMirrored
        default: .leftMirrored  // (3, 1): transpose
        }
    }
}

extension PixelBuffer {
    /// The pixels inside `rect` (which must lie within the buffer), copied row by row.
    func croppedRows(to rect: ItemTransform.CropRect) throws -> PixelBuffer {
        if rect.x == 0, rect.y == 0, rect.width == width, rect.height == height { return self }
        let bpp = format.bytesPerPixel
        let rowBytes = rect.width * bpp
        let source = self
        var result = try PixelBuffer(width: rect.width, height: rect.height, format: format, alphaMode: alphaMode) {
            output in
            source.withUnsafeBytes { input in
                guard let from = input.baseAddress, let to = output.baseAddress else { return }
                for row in 0..<rect.height {
                    let offset = (rect.y + row) * source.bytesPerRow + rect.x * bpp
                    (to + row * rowBytes).copyMemory(from: from + offset, byteCount: rowBytes)
                }
            }
        }
        if isKnownOpaque { result = result.assumingOpaque() }
        return result
    }
}
