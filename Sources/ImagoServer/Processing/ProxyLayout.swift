import Imago

/// imgproxy's steps after the crop, with the device pixel ratio it settles on for each image: the resize
/// (``ProxyResize``), then `blur`, `sharpen` and `pixelate`, the canvas (``ProxyCanvas``: `extend`,
/// `extend_aspect_ratio`, `padding`), the result limit after a canvas (``ProxyResultLimit``), the background and
/// the watermark (``ProxyWatermark``).
///
/// The DPR a URL asks for is bounded by what keeps the image from being enlarged, and that depends on the size of
/// the image entering the resize, known only as it runs (``ProxyResize/Plan/dpr``). The steps after it are made
/// for each image with the DPR applied, so gravity offsets, extensions, padding and watermark offsets match the
/// image that was made: a `dpr:2` request for a small source pads it as `dpr:1` would, not twice as much. A result
/// limit after a canvas shrinks the DPR the watermark's offsets use with the image, as imgproxy's. `blur`,
/// `sharpen` and `pixelate` are in result pixels, as imgproxy's, whatever the DPR.
struct ProxyLayout: ImageProcessing {
    /// The resize, when the URL asks for one (or for a DPR, a zoom or a result limit).
    var resize: ProxyResize?
    /// The URL's options, with the DPR it asks for.
    var options: ProcessingOptions
    var watermark: WatermarkImage?

    /// The steps `options` ask for, or `nil` when they ask for none.
    init?(_ options: ProcessingOptions, watermark: WatermarkImage?) {
        resize = ProxyResize(options)
        self.options = options
        self.watermark = watermark
        guard resize != nil || !steps.isEmpty else { return nil }
    }

    /// The resize's and the later steps' identifiers, the later steps made with the URL's DPR.
    var identifier: String {
        ImageProcessors.identifier(of: (resize.map { [$0] } ?? []) + steps)
    }

    /// The resize, when it is the only step (no blur, sharpen, pixelate, canvas, result limit after a canvas,
    /// background or watermark); else `nil`.
    var resizeAlone: ProxyResize? { steps.isEmpty ? resize : nil }

    /// The resize's, when there is one; else `nil` (the steps after it need the image as it is).
    var decodeTarget: DecodeTarget? { resize?.decodeTarget }

    func process(_ image: PixelBuffer) throws -> PixelBuffer { try process(image, profile: nil) }

    /// The steps on `image`, whose pixels are in `profile`'s space when it is kept (`strip_color_profile:0`): the
    /// background, the canvas and the watermark, whose colours are sRGB's, are converted into that space by the
    /// steps that paint them (``ColorProfile/fromSRGB(_:)-(RGBA)``), as imgproxy paints them in the colours asked
    /// for, and resizes in linear light go through the profile's own transfer curve.
    func process(_ image: PixelBuffer, profile: ColorProfile?) throws -> PixelBuffer {
        var image = image
        var applied = options
        var target = PixelSize(width: 0, height: 0)
        if let resize {
            let plan = resize.plan(for: image.size)
            let curve = resize.inLinearLight ? profile.flatMap { ColorManagement.transferCurve(of: $0.data) } : nil
            image = try resize.process(image, as: plan, curve: curve ?? .sRGB)
            applied.dpr = plan.dpr
            target = plan.target
        }
        for step in Self.steps(for: applied, target: target) {
            let before = max(image.width, image.height)
            image = try step.process(image, profile: profile)
            if step is ProxyResultLimit { applied.dpr *= Double(max(image.width, image.height)) / Double(before) }
        }
        guard let mark = ProxyWatermark(applied, watermark: watermark) else { return image }
        return try mark.process(image, profile: profile)
    }

    /// The steps after the resize as the URL asks for them, with its DPR (what ``identifier`` names).
    private var steps: [any ImageProcessing] {
        let target = ProxyResize.target(
            width: options.width, height: options.height, zoomX: options.zoomX, zoomY: options.zoomY, dpr: options.dpr)
        return Self.steps(for: options, target: target)
            + (ProxyWatermark(options, watermark: watermark).map { [$0] } ?? [])
    }

    /// The steps after the resize and before the watermark, for `options` with the DPR applied and the resize's
    /// `target` (what `extend` extends to).
    private static func steps(for options: ProcessingOptions, target: PixelSize) -> [any ImageProcessing] {
        var steps: [any ImageProcessing] = []
        if options.blurSigma > 0 { steps.append(ImageProcessors.GaussianBlur(radius: options.blurSigma)) }
        if options.sharpenSigma > 0 { steps.append(ImageProcessors.Sharpen(sigma: options.sharpenSigma)) }
        if options.pixelateSize > 1 { steps.append(ImageProcessors.Pixelate(size: options.pixelateSize)) }
        if let canvas = ProxyCanvas(options, target: target) { steps.append(canvas) }
        if let limit = ProxyResultLimit(options) { steps.append(limit) }
        if let background = options.background { steps.append(ImageProcessors.Background(color: background)) }
        return steps
    }
}
