import ImagoCore

/// imgproxy's `watermark`: the server's watermark image drawn over the result at a gravity (offsets moving it in
/// from the edge) or repeated over the whole image (offsets spacing the tiles), scaled to a fraction of the
/// result when asked, its alpha times the server's opacity times the URL's.
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
            + "\(ProcessingOptions.text(placement.scale))&dpr=\(ProcessingOptions.text(dpr))"
    }

    func process(_ image: PixelBuffer) throws -> PixelBuffer {
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
        var out = ImageProcessors.straight(image).convertedToRGBA()
        let opacity = watermark.opacity * placement.opacity
        guard let gravity = placement.gravity else {
            // Repeated: tiles from the top-left corner, the offsets as spacing.
            let gapX = spacing(placement.offsetX, of: image.width)
            let gapY = spacing(placement.offsetY, of: image.height)
            for y in stride(from: 0, to: image.height, by: mark.height + gapY) {
                for x in stride(from: 0, to: image.width, by: mark.width + gapX) {
                    out.draw(mark, x: x, y: y, opacity: opacity)
                }
            }
            return out
        }
        let at = ProcessingOptions.Placement(gravity: gravity, offsetX: placement.offsetX, offsetY: placement.offsetY)
            .origin(outer: image.size, inner: mark.size, dpr: dpr)
        out.draw(mark, x: at.x, y: at.y, opacity: opacity)
        return out
    }

    /// A tile spacing: pixels times DPR when at least 1 in size, else a fraction of `length`; never negative.
    private func spacing(_ value: Double, of length: Int) -> Int {
        let pixels = abs(value) >= 1 ? value * dpr : value * Double(length)
        return max(0, Int(pixels.rounded()))
    }
}
