import ImagoCore

/// Where decoders that downsample after decoding (GIF, animated WebP) compute their output size.
enum TargetSizing {
    /// `size` scaled to fit within `target` with its aspect ratio kept, never enlarged, at least 1x1.
    /// Returns `size` itself when `target` is `nil` or already larger.
    static func fit(_ size: PixelSize, within target: PixelSize?) -> PixelSize {
        guard let target, target.width > 0, target.height > 0 else { return size }
        let scale = min(
            Double(target.width) / Double(size.width), Double(target.height) / Double(size.height), 1)
        guard scale < 1 else { return size }
        return PixelSize(
            width: max(1, Int((Double(size.width) * scale).rounded())),
            height: max(1, Int((Double(size.height) * scale).rounded())))
    }
}
