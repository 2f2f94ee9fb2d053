import ImagoCore

/// The arithmetic of `DecodingOptions.targetSize`: aspect-fit, never upscale.
enum TargetFitting {
    /// The size an image of `size` shown with `orientation` takes when fitted within `target` (the target applies
    /// to the displayed image), returned in the *stored* orientation so a decoder can aim at it before turning.
    ///
    /// Keeps the aspect ratio, never enlarges, never returns a zero dimension; `nil` target (or an empty one)
    /// means full size.
    static func fittedSize(of size: PixelSize, within target: PixelSize?, orientation: ExifOrientation) -> PixelSize {
        guard let target, target.width > 0, target.height > 0 else { return size }
        let stored =
            orientation.swapsDimensions ? PixelSize(width: target.height, height: target.width) : target
        return fittedSize(of: size, within: stored)
    }

    /// `size` scaled uniformly to fit within `target`, rounded to the nearest pixel, at least 1×1, never larger
    /// than `size`.
    static func fittedSize(of size: PixelSize, within target: PixelSize) -> PixelSize {
        let (w, h) = (size.width, size.height)
        let (tw, th) = (target.width, target.height)
        if w <= tw && h <= th { return size }
        // Width-limited when w/h ≥ tw/th, i.e. w·th ≥ h·tw (in Double: exact for every realistic size, and no
        // overflow for absurd targets). In each branch the limiting target side is below the image side, so the
        // integer products that follow cannot overflow.
        if Double(w) * Double(th) >= Double(h) * Double(tw) {
            let fh = (2 * h * tw + w) / (2 * w)
            return PixelSize(width: tw, height: max(1, min(h, fh)))
        } else {
            let fw = (2 * w * th + h) / (2 * h)
            return PixelSize(width: max(1, min(w, fw)), height: th)
        }
    }
}
