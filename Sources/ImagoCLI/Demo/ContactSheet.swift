import ImagoCore

/// Lays thumbnails out in a grid on one transparent canvas, to be drawn by the terminal renderer.
enum ContactSheet {
    /// A canvas `columns` tiles wide; each image is fitted into `tile` pixels, with `gap` pixels between tiles.
    static func make(_ images: [PixelBuffer], columns: Int, tile: PixelSize, gap: Int = 2) throws -> PixelBuffer? {
        guard !images.isEmpty else { return nil }
        let cols = max(1, min(columns, images.count))
        let rows = (images.count + cols - 1) / cols
        let width = cols * (tile.width + gap) - gap
        let height = rows * (tile.height + gap) - gap
        var canvas = try PixelBuffer(width: width, height: height)
        for (index, image) in images.enumerated() {
            let scale = min(Double(tile.width) / Double(image.width), Double(tile.height) / Double(image.height))
            let fitted = PixelSize(
                width: max(1, Int(Double(image.width) * scale)), height: max(1, Int(Double(image.height) * scale)))
            let thumb = try image.convertedToRGBA().resampled(to: fitted)
            let originX = (index % cols) * (tile.width + gap) + (tile.width - fitted.width) / 2
            let originY = (index / cols) * (tile.height + gap) + (tile.height - fitted.height) / 2
            canvas.withUnsafeMutableBytes { dst in
                thumb.withUnsafeBytes { src in
                    for y in 0..<fitted.height {
                        let d = ((originY + y) * width + originX) * 4
                        let s = y * fitted.width * 4
                        dst.baseAddress!.advanced(by: d).copyMemory(
                            from: src.baseAddress!.advanced(by: s), byteCount: fitted.width * 4)
                    }
                }
            }
        }
        return canvas
    }
}
