import Foundation
import Imago

/// imgproxy's `watermark`: the server's watermark image drawn over the result at a gravity (offsets moving it in
/// from the edge, or partly past the other one) or repeated over the whole image in tiles centred on it (offsets
/// spacing the tiles), scaled to a fraction of the result when asked, its alpha times the server's opacity times
/// the URL's. Offsets in pixels are times the DPR applied (``ProxyLayout``).
struct ProxyWatermark: ImageProcessing {
    var watermark: WatermarkImage
    var placement: ProcessingOptions.WatermarkPlacement
    var dpr: Double

    /// The watermark `options` ask for with `watermark`, or `nil` when they ask for none.
    init?(_ options: ProcessingOptions, watermark: WatermarkImage?) {
        guard let placement = options.watermark, let watermark else { return nil }
        self.watermark = watermark
        self.placement = placement
        dpr = options.dpr
    }

    var identifier: String {
        "imago.serve.watermark?id=\(watermark.id)&base=\(ProcessingOptions.text(watermark.opacity))&wm="
            + "\(ProcessingOptions.text(placement.opacity)):\(placement.gravity?.rawValue ?? "re"):"
            + "\(ProcessingOptions.text(placement.offsetX)):\(ProcessingOptions.text(placement.offsetY)):"
            + "\(ProcessingOptions.text(placement.scale))&dpr=\(ProcessingOptions.text(dpr))&v=2"
    }

    func process(_ image: PixelBuffer) throws -> PixelBuffer { try process(image, profile: nil) }

    /// The watermark drawn on `image`, its sRGB colours converted first into the space of the `profile` the image
    /// keeps (`strip_color_profile:0`), if any.
    func process(_ image: PixelBuffer, profile: ColorProfile?) throws -> PixelBuffer {
        var mark = watermark.image
        if placement.scale > 0 {
            // Fitted in the box of `scale` times the result, up or down.
            let factor = min(
                Double(image.width) * placement.scale / Double(mark.width),
                Double(image.height) * placement.scale / Double(mark.height))
            let fitted = PixelSize(
                width: max(1, Int((Double(mark.width) * factor).rounded())),
                height: max(1, Int((Double(mark.height) * factor).rounded())))
            if fitted != mark.size { mark = try mark.resampled(to: fitted) }
        }
        if let profile { mark = profile.fromSRGB(mark) }
        var out = ImageProcessors.straight(image).convertedToRGBA()
        let opacity = watermark.opacity * placement.opacity
        guard let gravity = placement.gravity else {
            // Repeated, as imgproxy's: each tile is the watermark with half the spacing on either side, and the
            // tiles (an odd number across and down) are centred on the image, so one tile sits on its centre.
            let gapX = spacing(placement.offsetX, of: image.width)
            let gapY = spacing(placement.offsetY, of: image.height)
            let tile = PixelSize(width: mark.width + gapX, height: mark.height + gapY)
            func count(_ length: Int, _ side: Int) -> Int {
                let count = (length + side - 1) / side
                return count % 2 == 0 ? count + 1 : count
            }
            let (across, down) = (count(image.width, tile.width), count(image.height, tile.height))
            let left = (across * tile.width - image.width) / 2
            let top = (down * tile.height - image.height) / 2
            for row in 0..<down {
                for column in 0..<across {
                    out.draw(
                        mark, x: column * tile.width - left + gapX / 2, y: row * tile.height - top + gapY / 2,
                        opacity: opacity)
                }
            }
            return out
        }
        // Offsets may take it partly past the edge, as imgproxy's (at least a pixel of it stays).
        let at = ProcessingOptions.Placement(gravity: gravity, offsetX: placement.offsetX, offsetY: placement.offsetY)
            .origin(outer: image.size, inner: mark.size, dpr: dpr, allowsOverflow: true)
        out.draw(mark, x: at.x, y: at.y, opacity: opacity)
        return out
    }

    /// A tile spacing: pixels times DPR when at least 1 in size, else a fraction of `length`, rounded half to even
    /// as imgproxy's; never negative.
    private func spacing(_ value: Double, of length: Int) -> Int {
        let pixels = abs(value) >= 1 ? value * dpr : value * Double(length)
        return max(0, Int(pixels.rounded(.toNearestOrEven)))
    }
}
