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
