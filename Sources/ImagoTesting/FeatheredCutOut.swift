import ImagoCore

extension ImagoTesting {
    /// `image` (straight RGBA) cut out by a round mask with a feathered edge, the typical input of a palette
    /// quantizer for alpha (pngquant's): opaque to 7/16 of the height from the centre, alpha falling linearly to 0
    /// over the next 3/16, fully transparent (and black) beyond. 192 × 128 gives a 60-pixel opaque disc in a
    /// 24-pixel ring.
    public static func featheredCutOut(_ image: PixelBuffer) throws -> PixelBuffer {
        var out = try PixelBuffer(width: image.width, height: image.height)
        let (centreX, centreY) = (Double(image.width) / 2, Double(image.height) / 2)
        let feather = Double(image.height) * 3 / 16
        let outer = Double(image.height) * 7 / 16 + feather
        for y in 0..<image.height {
            for x in 0..<image.width {
                let (dx, dy) = (Double(x) - centreX, Double(y) - centreY)
                let alpha = UInt8(
                    max(0, min(255, (outer - (dx * dx + dy * dy).squareRoot()) / feather * 255)).rounded())
                var pixel = image[pixel: x, y]
                pixel.a = alpha
                out[pixel: x, y] = alpha == 0 ? RGBA(r: 0, g: 0, b: 0, a: 0) : pixel
            }
        }
        return out
    }
}
