import ImagoCore

/// imgproxy's resize: `fit`, `fill` (cover, then crop around a gravity) or `force` into a box whose 0 sides are
/// derived from the aspect ratio, never enlarging unless asked. A box of 0 × 0 leaves the image as it is.
struct ProxyResize: ImageProcessing {
    var type: ProcessingOptions.ResizingType
    /// The box in output pixels (DPR applied); 0 on an axis derives it.
    var width: Int
    var height: Int
    var enlarges: Bool
    var gravity: ProcessingOptions.Gravity
    var offsetX: Int
    var offsetY: Int

    /// The resize `options` ask for, or `nil` when they ask for none.
    init?(_ options: ProcessingOptions) {
        let box = options.scaledBox
        guard box.width > 0 || box.height > 0 else { return nil }
        type = options.resizingType
        width = box.width
        height = box.height
        enlarges = options.enlarges
        gravity = options.gravity
        offsetX = options.gravityOffsetX
        offsetY = options.gravityOffsetY
    }

    var identifier: String {
        "imago.serve.resize?type=\(type.rawValue)&w=\(width)&h=\(height)&el=\(enlarges ? 1 : 0)"
            + "&g=\(gravity.rawValue)&gx=\(offsetX)&gy=\(offsetY)"
    }

    /// The smallest decode this resize gives the same result from (up to resampling): `fit` (or a box with a 0
    /// side, which fits too) fits the box, its 0 side unbounded; `fill` and `force` with both sides cover the box
    /// (the crop, or the independent scaling of each axis, needs at least the box on both axes), so a JPEG is
    /// decoded at the smallest DCT scale that covers it rather than at full size.
    var decodeTarget: DecodeTarget? {
        let unbounded = 1 << 20
        guard width > 0 || height > 0 else { return nil }
        guard type != .fit, width > 0, height > 0 else {
            return DecodeTarget(
                size: PixelSize(width: width > 0 ? width : unbounded, height: height > 0 ? height : unbounded),
                mode: .fit)
        }
        return DecodeTarget(size: PixelSize(width: width, height: height), mode: .cover)
    }

    func process(_ image: PixelBuffer) throws -> PixelBuffer {
        let w = Double(image.width)
        let h = Double(image.height)
        let sx = width > 0 ? Double(width) / w : nil
        let sy = height > 0 ? Double(height) / h : nil
        func limited(_ scale: Double) -> Double { enlarges ? scale : min(scale, 1) }
        func size(_ scale: Double) -> PixelSize {
            PixelSize(width: max(1, Int((w * scale).rounded())), height: max(1, Int((h * scale).rounded())))
        }
        switch type {
        case .force:
            var target = PixelSize(
                width: width > 0 ? width : max(1, Int((w * (sy ?? 1)).rounded())),
                height: height > 0 ? height : max(1, Int((h * (sx ?? 1)).rounded())))
            if !enlarges {
                target = PixelSize(width: min(target.width, image.width), height: min(target.height, image.height))
            }
            return try resampled(image, to: target)
        case .fit, .fill:
            guard type == .fill, let sx, let sy else {
                return try resampled(image, to: size(limited(min(sx ?? .infinity, sy ?? .infinity))))
            }
            let scaled = size(limited(max(sx, sy)))
            let covering = try resampled(image, to: scaled)
            let cropW = min(width, scaled.width)
            let cropH = min(height, scaled.height)
            let x = origin(
                free: scaled.width - cropW, leading: [.west, .northWest, .southWest],
                trailing: [.east, .northEast, .southEast], offset: offsetX)
            let y = origin(
                free: scaled.height - cropH, leading: [.north, .northEast, .northWest],
                trailing: [.south, .southEast, .southWest], offset: offsetY)
            return try ImageProcessors.Crop(x: x, y: y, width: cropW, height: cropH).process(covering)
        }
    }

    /// Where the crop starts on one axis with `free` pixels to spare: at the leading edge, the trailing edge or
    /// centred by the gravity, moved by `offset` away from its edge and clamped inside the image.
    private func origin(
        free: Int, leading: Set<ProcessingOptions.Gravity>, trailing: Set<ProcessingOptions.Gravity>, offset: Int
    ) -> Int {
        let start: Int
        if leading.contains(gravity) {
            start = offset
        } else if trailing.contains(gravity) {
            start = free - offset
        } else {
            start = free / 2 + offset
        }
        return min(max(0, start), free)
    }

    private func resampled(_ image: PixelBuffer, to size: PixelSize) throws -> PixelBuffer {
        size == image.size ? image : try image.resampled(to: size)
    }
}
