import ImagoCore

/// imgproxy's `extend`, `extend_aspect_ratio` and `padding`, as one canvas: an image smaller than the target is
/// extended to it; then to the target's aspect ratio; then padded. The image is placed by each step's gravity and
/// the new area filled with the background (transparent when there is none). Extensions never make a side
/// longer than ``OptionParser/maximumSide``. Sizes and offsets in pixels are times the DPR applied
/// (``ProxyLayout``).
struct ProxyCanvas: ImageProcessing {
    /// The resize's target in output pixels (the box times the DPR applied and the zoom); 0 on an axis derives it.
    var width: Int
    var height: Int
    var extend: ProcessingOptions.Placement?
    var extendAspectRatio: ProcessingOptions.Placement?
    /// In output pixels (times the DPR applied, rounded half to even as imgproxy's).
    var padding: ProcessingOptions.Padding
    var fill: RGBA
    /// The DPR applied, for offsets in pixels.
    var dpr: Double

    /// The canvas `options` ask for around an image resized to `target`, or `nil` when they ask for none.
    init?(_ options: ProcessingOptions, target: PixelSize) {
        guard options.asksForCanvas else { return nil }
        (width, height) = (target.width, target.height)
        extend = options.extend
        extendAspectRatio = options.extendAspectRatio
        let p = options.padding
        func scaled(_ pixels: Int) -> Int { Int((Double(pixels) * options.dpr).rounded(.toNearestOrEven)) }
        padding = ProcessingOptions.Padding(
            top: scaled(p.top), right: scaled(p.right), bottom: scaled(p.bottom), left: scaled(p.left))
        fill = options.background ?? RGBA(r: 0, g: 0, b: 0, a: 0)
        dpr = options.dpr
    }

    var identifier: String {
        var text = "imago.serve.canvas?w=\(width)&h=\(height)"
        if let extend { text += "&ex=" + ProcessingOptions.text(extend) }
        if let extendAspectRatio { text += "&exar=" + ProcessingOptions.text(extendAspectRatio) }
        text += "&pd=\(padding.top):\(padding.right):\(padding.bottom):\(padding.left)"
        text += "&fill=" + ImageProcessors.format(fill)
        if dpr != 1 { text += "&dpr=\(ProcessingOptions.text(dpr))" }
        return text
    }

    func process(_ image: PixelBuffer) throws -> PixelBuffer { try process(image, profile: nil) }

    /// The image on its extended or padded canvas, the fill converted into the kept `profile`'s space when there is
    /// one (``ImageProcessors/Canvas``).
    func process(_ image: PixelBuffer, profile: ColorProfile?) throws -> PixelBuffer {
        let limit = OptionParser.maximumSide
        var size = image.size
        var x = 0
        var y = 0
        func place(in outer: PixelSize, by placement: ProcessingOptions.Placement) {
            guard outer != size else { return }
            let origin = placement.origin(outer: outer, inner: size, dpr: dpr)
            x += origin.x
            y += origin.y
            size = outer
        }
        if let extend {
            let outer = PixelSize(
                width: width > 0 ? max(size.width, width) : size.width,
                height: height > 0 ? max(size.height, height) : size.height)
            place(in: outer, by: extend)
        }
        if let extendAspectRatio, width > 0, height > 0 {
            let ratio = Double(width) / Double(height)
            var outer = size
            if Double(size.width) / Double(size.height) > ratio {
                outer.height = max(size.height, min(limit, Int((Double(size.width) / ratio).rounded())))
            } else {
                outer.width = max(size.width, min(limit, Int((Double(size.height) * ratio).rounded())))
            }
            place(in: outer, by: extendAspectRatio)
        }
        size = PixelSize(
            width: size.width + padding.left + padding.right, height: size.height + padding.top + padding.bottom)
        x += padding.left
        y += padding.top
        if size == image.size { return image }
        return try ImageProcessors.Canvas(width: size.width, height: size.height, x: x, y: y, fill: fill)
            .process(image, profile: profile)
    }
}
