import Foundation
import ImagoCore

/// imgproxy's resize (its `calcScale` and `calcSizes`): `fit`, `fill` (cover, then crop around a gravity),
/// `fill-down`, `force` or `auto` into a box whose 0 sides are derived from the aspect ratio, with minimum sizes,
/// zoom factors and the device pixel ratio, never enlarging unless asked. The result is then cut to the box times
/// the DPR and the zoom (the *target*), as imgproxy cuts every result: a `fill` crops around its gravity, and so
/// does a minimum size that took the image past the box. Results are at most ``OptionParser/maximumSide`` pixels
/// a side: a zoom or an enlargement beyond that is scaled back to it, aspect ratio kept.
///
/// **The DPR applied** is at most the one that keeps the image from being enlarged (unless `enlarge` is set), as
/// imgproxy's: a `dpr:2` request for a source too small for twice the box gets the source at its own size, cut to
/// the box's aspect ratio, rather than a box twice the size with the image inside it. Gravity offsets, extensions,
/// padding and watermark offsets use the DPR applied (``ProxyLayout``). Without `extend`, a source smaller than
/// the box raises the DPR by as much as it falls short, up to that bound, so that the box is cut at the largest
/// size the source has.
///
/// A result limit (``ProcessingOptions/maxResultDimension``) is folded into the resize, as imgproxy's: when the
/// result would be longer than the limit, the scale and the DPR shrink together until it fits, so the image is
/// resampled once (and a JPEG decoded at the smallest DCT scale that gives it); a `fill`'s gravity offsets in
/// pixels shrink with them, so the crop shows what it would without the limit. When extensions or padding follow,
/// which the limit counts too, ``ProxyResultLimit`` applies it to the finished canvas instead.
struct ProxyResize: ImageProcessing {
    var type: ProcessingOptions.ResizingType
    /// The box in CSS pixels (before the DPR); 0 on an axis derives it.
    var width: Int
    var height: Int
    /// The minimum sizes in CSS pixels; 0 for none.
    var minWidth: Int
    var minHeight: Int
    var zoomX: Double
    var zoomY: Double
    var enlarges: Bool
    /// Whether `extend` follows: a source smaller than the box then keeps the URL's DPR bound as it is, so that
    /// the extended result has the same composition at every DPR.
    var extends: Bool
    /// Where the cut to the target goes.
    var placement: ProcessingOptions.Placement
    /// The URL's device pixel ratio; the one applied is ``Plan/dpr``.
    var dpr: Double
    /// The longest side of the result; 0 for no limit but ``OptionParser/maximumSide`` (also when
    /// ``ProxyResultLimit`` applies the limit after a canvas).
    var resultLimit: Int
    /// Whether pixels are averaged in linear light (``ProcessingOptions/resizesInLinearLight``).
    var inLinearLight: Bool
    /// Whether a raster decoder may shrink the image while decoding (not with
    /// ``ProcessingOptions/disablesShrinkOnLoad``).
    var shrinksOnLoad: Bool

    /// What the resize does to one image.
    struct Plan: Equatable {
        /// The size the image is resampled to.
        var scaled: PixelSize
        /// The size then cut out of it, around the gravity; `nil` when nothing is cut.
        var crop: PixelSize?
        /// The DPR applied: the URL's, bounded so that the image is not enlarged, times the result limit's shrink.
        var dpr: Double
        /// The box times the DPR applied and the zoom (0 on an axis the URL left 0): what `extend` extends to.
        var target: PixelSize
    }

    /// The resize `options` ask for, or `nil` when they ask for none.
    init?(_ options: ProcessingOptions) {
        let resultLimit = ProxyResultLimit(options) == nil ? options.maxResultDimension : 0
        guard
            options.width > 0 || options.height > 0 || options.minWidth > 0 || options.minHeight > 0
                || options.zoomX != 1 || options.zoomY != 1 || options.dpr != 1 || resultLimit > 0
        else { return nil }
        self.resultLimit = resultLimit
        type = options.resizingType
        width = options.width
        height = options.height
        minWidth = options.minWidth
        minHeight = options.minHeight
        zoomX = options.zoomX
        zoomY = options.zoomY
        enlarges = options.enlarges
        extends = options.extend != nil
        placement = options.placement
        dpr = options.dpr
        inLinearLight = options.resizesInLinearLight
        shrinksOnLoad = !options.disablesShrinkOnLoad
    }

    var identifier: String {
        var text = "imago.serve.resize?v=2&type=\(type.rawValue)&w=\(width)&h=\(height)&el=\(enlarges ? 1 : 0)"
        text += "&g=\(placement.gravity.rawValue)&gx=\(ProcessingOptions.text(placement.offsetX))"
        text += "&gy=\(ProcessingOptions.text(placement.offsetY))"
        if minWidth != 0 || minHeight != 0 { text += "&mw=\(minWidth)&mh=\(minHeight)" }
        if zoomX != 1 || zoomY != 1 {
            text += "&zx=\(ProcessingOptions.text(zoomX))&zy=\(ProcessingOptions.text(zoomY))"
        }
        if dpr != 1 { text += "&dpr=\(ProcessingOptions.text(dpr))" + (extends ? "&ex=1" : "") }
        if resultLimit > 0 { text += "&max=\(resultLimit)" }
        if inLinearLight { text += "&light=linear" }
        if !shrinksOnLoad { text += "&sol=0" }
        return text
    }

    /// The smallest decode this resize gives the same result from (up to resampling): `fit` (or a box with a 0
    /// side, which fits too) fits the box times the URL's DPR, its 0 side unbounded; `fill`, `fill-down`, `force`
    /// and `auto` with both sides cover it (the crop, or the independent scaling of each axis, needs at least the
    /// box on both axes), so a JPEG is decoded at the smallest DCT scale that covers it rather than at full size.
    /// A DPR bounded to keep the image from being enlarged is bounded only when the source is smaller than that,
    /// which a decode never is. A zoom scales the box; with minimum sizes, or a zoom or a DPR and no box, the
    /// decode is full size. A result limit alone fits a square of its side. In linear light the target is reached
    /// only by a reduced decode (JPEG's DCT scaling, as imgproxy shrinks on load; other formats decode at full
    /// size), since a decoder's resampling would average sRGB values. Without shrink-on-load, only an SVG is drawn
    /// at the target; every raster format decodes at full size.
    var decodeTarget: DecodeTarget? {
        let unbounded = 1 << 20
        var target: DecodeTarget
        if width == 0, height == 0, minWidth == 0, minHeight == 0, zoomX == 1, zoomY == 1, dpr == 1, resultLimit > 0 {
            target = DecodeTarget(size: PixelSize(width: resultLimit, height: resultLimit), mode: .fit)
        } else {
            guard width > 0 || height > 0, minWidth == 0, minHeight == 0 else { return nil }
            let w = width > 0 ? min(unbounded, Int((Double(width) * dpr * zoomX).rounded(.up))) : unbounded
            let h = height > 0 ? min(unbounded, Int((Double(height) * dpr * zoomY).rounded(.up))) : unbounded
            let fits = type == .fit || width == 0 || height == 0
            target = DecodeTarget(size: PixelSize(width: w, height: h), mode: fits ? .fit : .cover)
        }
        target.shrinking = !shrinksOnLoad ? .never : inLinearLight ? .reducedDecodeOnly : .any
        return target
    }

    func process(_ image: PixelBuffer) throws -> PixelBuffer {
        try process(image, as: plan(for: image.size))
    }

    /// `image` resampled and cut as `plan` says; in linear light through `curve` (default sRGB's: the image's
    /// profile's when it is kept, ``ProxyLayout``).
    func process(_ image: PixelBuffer, as plan: Plan, curve: TransferCurve = .sRGB) throws -> PixelBuffer {
        let scaled =
            plan.scaled == image.size
            ? image : try image.resampled(to: plan.scaled, inLinearLight: inLinearLight, curve: curve)
        guard let crop = plan.crop else { return scaled }
        let origin = try placement.origin(of: crop, in: scaled, dpr: plan.dpr)
        return try ImageProcessors.Crop(x: origin.x, y: origin.y, width: crop.width, height: crop.height).process(
            scaled)
    }

    /// What the resize does to a `source` of this size, worked out as imgproxy's `calcScale`, `calcSizes` and
    /// `limitScale` do.
    func plan(for source: PixelSize) -> Plan {
        let (w, h) = (Double(source.width), Double(source.height))
        // How many source pixels make one result pixel on each axis, first for the box in CSS pixels.
        var shrinkX = 1.0
        var shrinkY = 1.0
        let boxW = width > 0 ? Double(width) : w
        let boxH = height > 0 ? Double(height) : h
        if boxW != w { shrinkX = w / boxW }
        if boxH != h { shrinkY = h / boxH }
        if shrinkX != 1 || shrinkY != 1 {
            var type = type
            if type == .auto {  // fill when both are landscape (a square counts as one) or both portrait
                type = (w >= h) == (boxW >= boxH) ? .fill : .fit
            }
            if width == 0, type != .force {
                shrinkX = shrinkY
            } else if height == 0, type != .force {
                shrinkY = shrinkX
            } else if type == .fit {
                shrinkX = max(shrinkX, shrinkY)
                shrinkY = shrinkX
            } else if type == .fill || type == .fillDown {
                shrinkX = min(shrinkX, shrinkY)
                shrinkY = shrinkX
            }
        }
        shrinkX /= zoomX
        shrinkY /= zoomY
        var dpr = dpr
        if !enlarges {
            let least = min(shrinkX, shrinkY)
            if least < 1 {  // the box is beyond the source: the source's own size at most
                shrinkX /= least
                shrinkY /= least
                if !extends { dpr /= least }
            }
            dpr = min(dpr, min(shrinkX, shrinkY))  // no DPR that would enlarge
        }
        if minWidth > 0, w / Double(minWidth) < shrinkX {
            shrinkY /= shrinkX / (w / Double(minWidth))
            shrinkX = w / Double(minWidth)
        }
        if minHeight > 0, h / Double(minHeight) < shrinkY {
            shrinkX /= shrinkY / (h / Double(minHeight))
            shrinkY = h / Double(minHeight)
        }
        var scaleX = 1 / min(shrinkX / dpr, w)  // never below one pixel
        var scaleY = 1 / min(shrinkY / dpr, h)
        var plan = sizes(source, scaleX: scaleX, scaleY: scaleY, dpr: dpr)
        let result = PixelSize(
            width: plan.target.width > 0 ? min(plan.scaled.width, plan.target.width) : plan.scaled.width,
            height: plan.target.height > 0 ? min(plan.scaled.height, plan.target.height) : plan.scaled.height)
        guard resultLimit > 0, max(result.width, result.height) > resultLimit else { return plan }
        // Over the result limit: the scales and the DPR (so the target) shrink by the same factor, no side below
        // 1 pixel, and what rounding leaves over it is cut.
        let shrink = Double(resultLimit) / Double(max(result.width, result.height))
        scaleX = max(scaleX * shrink, 1 / w)
        scaleY = max(scaleY * shrink, 1 / h)
        plan = sizes(source, scaleX: scaleX, scaleY: scaleY, dpr: dpr * shrink)
        func fitted(_ size: PixelSize) -> PixelSize {
            PixelSize(width: min(size.width, resultLimit), height: min(size.height, resultLimit))
        }
        if let crop = plan.crop { plan.crop = fitted(crop) } else { plan.scaled = fitted(plan.scaled) }
        return plan
    }

    /// The scaled size for scales `scaleX` and `scaleY` (at most ``OptionParser/maximumSide`` a side, aspect ratio
    /// kept), the target for `dpr`, and the cut to the target (for `fill-down` without `enlarge`, the largest area
    /// of the target's aspect ratio when the image is smaller than it).
    private func sizes(_ source: PixelSize, scaleX: Double, scaleY: Double, dpr: Double) -> Plan {
        let limit = OptionParser.maximumSide
        var scaled = PixelSize(
            width: max(1, Int((Double(source.width) * scaleX).rounded())),
            height: max(1, Int((Double(source.height) * scaleY).rounded())))
        if scaled.width > limit || scaled.height > limit {
            let shrink = min(Double(limit) / Double(scaled.width), Double(limit) / Double(scaled.height))
            scaled = PixelSize(
                width: min(limit, max(1, Int((Double(scaled.width) * shrink).rounded()))),
                height: min(limit, max(1, Int((Double(scaled.height) * shrink).rounded()))))
        }
        let target = Self.target(width: width, height: height, zoomX: zoomX, zoomY: zoomY, dpr: dpr)
        var cut = target
        if type == .fillDown, !enlarges, target.width > 0, target.height > 0 {
            let ratio = Double(target.width) / Double(target.height)
            let overX = Double(target.width) / Double(scaled.width)
            let overY = Double(target.height) / Double(scaled.height)
            if overX > overY, overX > 1 {
                cut = PixelSize(width: scaled.width, height: Int((Double(scaled.width) / ratio).rounded()))
            } else if overY > overX, overY > 1 {
                cut = PixelSize(width: Int((Double(scaled.height) * ratio).rounded()), height: scaled.height)
            }
        }
        // Cut on each axis the target sets, to at most the image; nothing when that is the image.
        let crop = PixelSize(
            width: cut.width > 0 ? min(cut.width, scaled.width) : scaled.width,
            height: cut.height > 0 ? min(cut.height, scaled.height) : scaled.height)
        return Plan(scaled: scaled, crop: crop == scaled ? nil : crop, dpr: dpr, target: target)
    }

    /// imgproxy's target: the box times `dpr` and the zoom, rounded, at most ``OptionParser/maximumSide`` a side
    /// (0 where the box is 0).
    static func target(width: Int, height: Int, zoomX: Double, zoomY: Double, dpr: Double) -> PixelSize {
        PixelSize(
            width: min(OptionParser.maximumSide, Int((Double(width) * dpr * zoomX).rounded())),
            height: min(OptionParser.maximumSide, Int((Double(height) * dpr * zoomY).rounded())))
    }
}

extension ProcessingOptions.Placement {
    /// Where a crop of `inner` goes in `image`: by ``origin(outer:inner:dpr:)``, or for
    /// ``ProcessingOptions/Gravity/smart`` the most interesting window (``ImageProcessors/SmartCrop``).
    func origin(of inner: PixelSize, in image: PixelBuffer, dpr: Double) throws -> (x: Int, y: Int) {
        guard gravity == .smart else { return origin(outer: image.size, inner: inner, dpr: dpr) }
        return try ImageProcessors.SmartCrop.origin(of: inner, in: image)
    }

    /// Where an `inner` rectangle goes in an `outer` one by this placement, as imgproxy places crops, extensions
    /// and watermarks: at the gravity's edge or centre, moved by the offsets away from that edge (pixels times
    /// `dpr` when at least 1 in size, else a fraction of the outer side), or centred on the focus point; then
    /// clamped so that the smaller rectangle stays inside the larger, or, with `allowsOverflow` (a watermark), so
    /// that at least one pixel of `inner` stays inside `outer`. Smart gravity, which needs the pixels, is centred
    /// here.
    func origin(outer: PixelSize, inner: PixelSize, dpr: Double, allowsOverflow: Bool = false) -> (x: Int, y: Int) {
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
            let low = allowsOverflow ? 1 - inner : min(0, outer - inner)
            let high = allowsOverflow ? outer - 1 : max(0, outer - inner)
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
