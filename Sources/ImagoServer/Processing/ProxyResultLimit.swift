import Imago

/// imgproxy's result limit (``ProcessingOptions/maxResultDimension``) for results with extensions or padding, which
/// it counts: the finished canvas is scaled down, aspect ratio kept, until its longer side fits, so the padding
/// shrinks with the image as in imgproxy. Without a canvas, ``ProxyResize`` folds the limit into its own scale.
struct ProxyResultLimit: ImageProcessing {
    /// The longest side of the result, above 0.
    var limit: Int
    /// Whether pixels are averaged in linear light (``ProcessingOptions/resizesInLinearLight``).
    var inLinearLight: Bool

    /// The limit `options` ask for when a canvas (``ProxyCanvas``) follows the resize, else `nil`.
    init?(_ options: ProcessingOptions) {
        guard options.maxResultDimension > 0, options.asksForCanvas else { return nil }
        limit = options.maxResultDimension
        inLinearLight = options.resizesInLinearLight
    }

    var identifier: String { "imago.serve.result-limit?max=\(limit)" + (inLinearLight ? "&light=linear" : "") }

    func process(_ image: PixelBuffer) throws -> PixelBuffer { try process(image, profile: nil) }

    /// The canvas scaled down, in linear light through the kept `profile`'s curve when it has its own.
    func process(_ image: PixelBuffer, profile: ColorProfile?) throws -> PixelBuffer {
        guard max(image.width, image.height) > limit else { return image }
        if inLinearLight, let curve = profile.flatMap({ ColorManagement.transferCurve(of: $0.data) }) {
            return try image.resampled(
                to: image.size.fitted(within: PixelSize(width: limit, height: limit)), inLinearLight: true, curve: curve
            )
        }
        return try ImageProcessors.Resize(
            size: PixelSize(width: limit, height: limit), mode: .aspectFit, inLinearLight: inLinearLight
        ).process(image)
    }
}
