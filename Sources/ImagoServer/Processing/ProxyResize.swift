import Foundation
import ImagoCore

/// imgproxy's resize: `fit`, `fill` (cover, then crop around a gravity), `fill-down`, `force` or `auto` into a box
/// whose 0 sides are derived from the aspect ratio, with minimum sizes and zoom factors, never enlarging unless
/// asked. Results are at most ``OptionParser/maximumSide`` pixels a side: a zoom or an enlargement beyond that
/// is scaled back to it, aspect ratio kept. With no box, no minimum, no zoom and no result limit there is no
/// resize.
///
/// A result limit (``ProcessingOptions/maxResultDimension``) is folded into the resize, as imgproxy's: when the
/// result (the crop of a `fill`, else the scaled image) would be longer than the limit, the scale and the box
/// shrink together until it fits, so the image is resampled once (and a JPEG decoded at the smallest DCT scale
/// that gives it); a `fill`'s gravity offsets in pixels shrink with them, so the crop shows what it would without
/// the limit. When extensions or padding follow, which the limit counts too, ``ProxyResultLimit`` applies
/// it to the finished canvas instead.
struct ProxyResize: ImageProcessing {
    var type: ProcessingOptions.ResizingType
    /// The box in output pixels (DPR applied); 0 on an axis derives it.
    var width: Int
    var height: Int
    /// The minimum sizes in output pixels (DPR applied); 0 for none.
    var minWidth: Int
    var minHeight: Int
    var zoomX: Double
    var zoomY: Double
    var enlarges: Bool
    /// Where a `fill` crops.
    var placement: ProcessingOptions.Placement
    var dpr: Double
    /// The longest side of the result; 0 for no limit but ``OptionParser/maximumSide`` (also when
    /// ``ProxyResultLimit`` applies the limit after a canvas).
    var resultLimit: Int

    /// The resize `options` ask for, or `nil` when they ask for none.
    init?(_ options: ProcessingOptions) {
        let box = options.scaledBox
        let (minWidth, minHeight) = (options.scaled(options.minWidth), options.scaled(options.minHeight))
        let resultLimit = ProxyResultLimit(options) == nil ? options.maxResultDimension : 0
        guard
            box.width > 0 || box.height > 0 || minWidth > 0 || minHeight > 0 || options.zoomX != 1
                || options.zoomY != 1 || resultLimit > 0
        else { return nil }
        self.resultLimit = resultLimit
        type = options.resizingType
        width = box.width
        height = box.height
        self.minWidth = minWidth
        self.minHeight = minHeight
        zoomX = options.zoomX
        zoomY = options.zoomY
        enlarges = options.enlarges
        placement = options.placement
        dpr = options.dpr
    }

    var identifier: String {
        var text = "imago.serve.resize?type=\(type.rawValue)&w=\(width)&h=\(height)&el=\(enlarges ? 1 : 0)"
        text += "&g=\(placement.gravity.rawValue)&gx=\(ProcessingOptions.text(placement.offsetX))"
        text += "&gy=\(ProcessingOptions.text(placement.offsetY))"
        if minWidth != 0 || minHeight != 0 { text += "&mw=\(minWidth)&mh=\(minHeight)" }
        if zoomX != 1 || zoomY != 1 {
            text += "&zx=\(ProcessingOptions.text(zoomX))&zy=\(ProcessingOptions.text(zoomY))"
        }
        if dpr != 1 { text += "&dpr=\(ProcessingOptions.text(dpr))" }
        if resultLimit > 0 { text += "&max=\(resultLimit)" }
        return text
    }

    /// The smallest decode this resize gives the same result from (up to resampling): `fit` (or a box with a 0
    /// side, which fits too) fits the box, its 0 side unbounded; `fill`, `fill-down`, `force` and `auto` with both
    /// sides cover the box (the crop, or the independent scaling of each axis, needs at least the box on both
    /// axes), so a JPEG is decoded at the smallest DCT scale that covers it rather than at full size. A zoom
    /// scales the box; with minimum sizes, or a zoom and no box, the decode is full size. A result limit alone
    /// fits a square of its side.
    var decodeTarget: DecodeTarget? {
        let unbounded = 1 << 20
        if width == 0, height == 0, minWidth == 0, minHeight == 0, zoomX == 1, zoomY == 1, resultLimit > 0 {
            return DecodeTarget(size: PixelSize(width: resultLimit, height: resultLimit), mode: .fit)
        }
        guard width > 0 || height > 0, minWidth == 0, minHeight == 0 else { return nil }
        let w = width > 0 ? min(unbounded, Int((Double(width) * zoomX).rounded(.up))) : unbounded
        let h = height > 0 ? min(unbounded, Int((Double(height) * zoomY).rounded(.up))) : unbounded
        guard type != .fit, width > 0, height > 0 else {
            return DecodeTarget(size: PixelSize(width: w, height: h), mode: .fit)
        }
        return DecodeTarget(size: PixelSize(width: w, height: h), mode: .cover)
    }

    func process(_ image: PixelBuffer) throws -> PixelBuffer {
        let plan = plan(for: image.size)
        let scaled = plan.scaled == image.size ? image : try image.resampled(to: plan.scaled)
        guard let crop = plan.crop else { return scaled }
        // Offsets in pixels shrink with a result limit, as imgproxy's DPR scale does, so the crop shows what it
        // would without the limit.
        let origin = try placement.origin(of: crop, in: scaled, dpr: dpr * plan.shrink)
        return try ImageProcessors.Crop(x: origin.x, y: origin.y, width: crop.width, height: crop.height).process(
            scaled)
    }

    /// The size a `source` is resampled to; for `fill` and `fill-down`, the size then cropped out of it (`nil`
    /// when nothing is cropped); and the factor the result limit shrank them by (1 when it did not).
    func plan(for source: PixelSize) -> (scaled: PixelSize, crop: PixelSize?, shrink: Double) {
        let w = Double(source.width)
        let h = Double(source.height)
        var type = type
        if type == .auto {
            let sameOrientation = width > 0 && height > 0 && (source.width > source.height) == (width > height)
            type = sameOrientation ? .fill : .fit
        }
        let fx = width > 0 ? Double(width) / w : nil
        let fy = height > 0 ? Double(height) / h : nil
        var (sx, sy): (Double, Double)
        if type == .force {
            (sx, sy) = (fx ?? 1, fy ?? 1)
        } else if type != .fit, let fx, let fy {
            sx = max(fx, fy)
            sy = sx
        } else {
            let scale = min(fx ?? .infinity, fy ?? .infinity)
            sx = scale.isFinite ? scale : 1
            sy = sx
        }
        // Minimum sizes raise the scale (both axes, but only their own for `force`).
        if minWidth > 0, w * sx < Double(minWidth) {
            let raise = Double(minWidth) / (w * sx)
            sx *= raise
            if type != .force { sy *= raise }
        }
        if minHeight > 0, h * sy < Double(minHeight) {
            let raise = Double(minHeight) / (h * sy)
            sy *= raise
            if type != .force { sx *= raise }
        }
        sx *= zoomX
        sy *= zoomY
        if !enlarges, max(sx, sy) > 1 {
            let largest = max(sx, sy)
            sx /= largest
            sy /= largest
        }
        let plan = layout(source, sx: sx, sy: sy, type: type, box: PixelSize(width: width, height: height))
        let result = plan.crop ?? plan.scaled
        guard resultLimit > 0, max(result.width, result.height) > resultLimit else {
            return (plan.scaled, plan.crop, 1)
        }
        // Over the result limit: the scales and the box shrink by the same factor (no side below 1 pixel), and
        // what rounding leaves over it is cut.
        let shrink = Double(resultLimit) / Double(max(result.width, result.height))
        let box = PixelSize(
            width: width > 0 ? max(1, Int((Double(width) * shrink).rounded())) : 0,
            height: height > 0 ? max(1, Int((Double(height) * shrink).rounded())) : 0)
        var shrunk = layout(source, sx: max(sx * shrink, 1 / w), sy: max(sy * shrink, 1 / h), type: type, box: box)
        func fitted(_ size: PixelSize) -> PixelSize {
            PixelSize(width: min(size.width, resultLimit), height: min(size.height, resultLimit))
        }
        if let crop = shrunk.crop { shrunk.crop = fitted(crop) } else { shrunk.scaled = fitted(shrunk.scaled) }
        return (shrunk.scaled, shrunk.crop, shrink)
    }

    /// The scaled size for scales `sx` and `sy`, at most ``OptionParser/maximumSide`` a side (aspect ratio kept),
    /// and the crop of `box` out of it for `fill` and `fill-down`.
    private func layout(
        _ source: PixelSize, sx: Double, sy: Double, type: ProcessingOptions.ResizingType, box: PixelSize
    ) -> (scaled: PixelSize, crop: PixelSize?) {
        let (w, h) = (Double(source.width), Double(source.height))
        var scaled = PixelSize(width: max(1, Int((w * sx).rounded())), height: max(1, Int((h * sy).rounded())))
        let limit = OptionParser.maximumSide
        if scaled.width > limit || scaled.height > limit {
            let shrink = min(Double(limit) / Double(scaled.width), Double(limit) / Double(scaled.height))
            scaled = PixelSize(
                width: min(limit, max(1, Int((Double(scaled.width) * shrink).rounded()))),
                height: min(limit, max(1, Int((Double(scaled.height) * shrink).rounded()))))
        }
        guard type == .fill || type == .fillDown, box.width > 0, box.height > 0 else { return (scaled, nil) }
        var crop = PixelSize(width: min(box.width, scaled.width), height: min(box.height, scaled.height))
        if type == .fillDown, scaled.width < box.width || scaled.height < box.height {
            // Smaller than the box: the largest area of the box's aspect ratio.
            let ratio = Double(box.width) / Double(box.height)
            if Double(scaled.width) / Double(scaled.height) > ratio {
                crop = PixelSize(
                    width: min(scaled.width, max(1, Int((Double(scaled.height) * ratio).rounded()))),
                    height: scaled.height)
            } else {
                crop = PixelSize(
                    width: scaled.width,
                    height: min(scaled.height, max(1, Int((Double(scaled.width) / ratio).rounded()))))
            }
        }
        return (scaled, crop == scaled ? nil : crop)
    }
}

extension ProcessingOptions.Placement {
    /// Where a crop of `inner` goes in `image`: by ``origin(outer:inner:dpr:)``, or for
    /// ``ProcessingOptions/Gravity/smart`` the most interesting window (``ImageProcessors/SmartCrop``).
    func origin(of inner: PixelSize, in image: PixelBuffer, dpr: Double) throws -> (x: Int, y: Int) {
        guard gravity == .smart else { return origin(outer: image.size, inner: inner, dpr: dpr) }
        return try ImageProcessors.SmartCrop.origin(of: inner, in: image)
    }

    /// Where an `inner` rectangle goes in an `outer` one by this placement, as imgproxy places crops and
    /// extensions: at the gravity's edge or centre, moved by the offsets away from that edge (pixels times `dpr`
    /// when at least 1 in size, else a fraction of the outer side), or centred on the focus point; then clamped so
    /// that the smaller rectangle stays inside the larger. Smart gravity, which needs the pixels, is centred here.
    func origin(outer: PixelSize, inner: PixelSize, dpr: Double) -> (x: Int, y: Int) {
        func axis(
            outer: Int, inner: Int, offset: Double, leading: Set<ProcessingOptions.Gravity>,
            trailing: Set<ProcessingOptions.Gravity>
        ) -> Int {
            let start: Int
            if gravity == .focusPoint {
                start = Int((Double(outer) * offset).rounded()) - inner / 2
            } else {
                let shift =
                    abs(offset) >= 1
                    ? Int((offset * dpr).rounded(.toNearestOrEven))
                    : Int((Double(outer) * offset).rounded(.toNearestOrEven))
                if leading.contains(gravity) {
                    start = shift
                } else if trailing.contains(gravity) {
                    start = outer - inner - shift
                } else {
                    start = Int((Double(outer - inner + 1) / 2).rounded(.toNearestOrEven)) + shift
                }
            }
            let low = min(0, outer - inner)
            let high = max(0, outer - inner)
            return min(max(low, start), high)
        }
        return (
            axis(
                outer: outer.width, inner: inner.width, offset: offsetX, leading: [.west, .northWest, .southWest],
                trailing: [.east, .northEast, .southEast]),
            axis(
                outer: outer.height, inner: inner.height, offset: offsetY, leading: [.north, .northEast, .northWest],
                trailing: [.south, .southEast, .southWest])
        )
    }
}
