extension PixelSize {
    /// This size scaled down to fit within `target`, aspect ratio kept (rounded to the nearest pixel, at least
    /// 1×1); unchanged when it already fits (never upscales) or when `target` is empty.
    ///
    /// ```swift
    /// PixelSize(width: 4032, height: 3024).fitted(within: PixelSize(width: 256, height: 256))  // 256x192
    /// ```
    public func fitted(within target: PixelSize) -> PixelSize {
        let (w, h) = (width, height)
        let (tw, th) = (target.width, target.height)
        guard tw > 0, th > 0, w > 0, h > 0 else { return self }
        if w <= tw && h <= th { return self }
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

extension PixelSize {
    /// This size scaled down just enough to cover `target` (neither side smaller than the target's), aspect
    /// ratio kept: the size ``ImageProcessors/Resize`` in `.aspectFill` mode scales to before it crops. Unchanged
    /// when a side is already no larger than the target's (never upscales) or when `target` is empty.
    ///
    /// ```swift
    /// PixelSize(width: 3072, height: 2048).covering(PixelSize(width: 256, height: 256))  // 384x256
    /// ```
    public func covering(_ target: PixelSize) -> PixelSize {
        let (w, h) = (width, height)
        let (tw, th) = (target.width, target.height)
        guard tw > 0, th > 0, w > 0, h > 0, w > tw, h > th else { return self }
        let scale = max(Double(tw) / Double(w), Double(th) / Double(h))
        // The same rounding as the resize: the covering side never rounds below the target.
        return PixelSize(
            width: min(w, max(tw, Int((Double(w) * scale).rounded()))),
            height: min(h, max(th, Int((Double(h) * scale).rounded()))))
    }
}
