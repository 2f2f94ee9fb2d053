import ImagoCore

/// The arithmetic of `DecodingOptions.targetSize`: aspect-fit, never upscale.
enum TargetFitting {
    /// The size an image of `size` shown with `orientation` takes when fitted within `target` (the target applies
    /// to the displayed image), returned in the *stored* orientation so a decoder can aim at it before turning.
    ///
    /// Keeps the aspect ratio, never enlarges, never returns a zero dimension; `nil` target (or an empty one)
    /// means full size.
    /// With `mode` ``DecodingOptions/TargetMode/cover`` the size covers `target` instead of fitting within it.
    static func fittedSize(
        of size: PixelSize, within target: PixelSize?, orientation: ExifOrientation,
        mode: DecodingOptions.TargetMode = .fit
    ) -> PixelSize {
        guard let target, target.width > 0, target.height > 0 else { return size }
        let stored =
            orientation.swapsDimensions ? PixelSize(width: target.height, height: target.width) : target
        switch mode {
        case .fit: return size.fitted(within: stored)
        case .cover: return size.covering(stored)
        }
    }
}
