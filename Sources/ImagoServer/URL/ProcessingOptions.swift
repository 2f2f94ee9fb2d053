import ImagoCore

/// What an imgproxy URL asks to be done to its source, typed: each field is one of imgproxy's processing options
/// with its meaning. Defaults: fit, no size (keep the source's), centre gravity, default quality, negotiated
/// format, no crop, no extension, no padding, no background, no filters, no rotation, DPR and zoom 1.
///
/// The order the work is done in is imgproxy's, whatever the order of the options in the URL: trim, rotate, flip,
/// crop, resize (with `fill`'s crop around the gravity), blur, sharpen, pixelate, extend to the box, extend to its
/// aspect ratio, padding, the background, then the watermark (and the flattening a format without alpha needs).
///
/// ```swift
/// var options = ProcessingOptions()
/// options.resizingType = .fill
/// options.width = 256
/// options.height = 256
/// ```
public struct ProcessingOptions: Sendable, Hashable {
    /// How the image is fitted to `width` × `height` (imgproxy's `resizing_type`).
    public enum ResizingType: String, Sendable, Hashable, CaseIterable {
        /// Fits inside the box, keeping the aspect ratio (the default).
        case fit
        /// Covers the box keeping the aspect ratio, then crops to it around ``ProcessingOptions/gravity``.
        case fill
        /// As `fill`, but an image smaller than the box is not enlarged: it is cropped to the box's aspect ratio
        /// at the largest size it has.
        case fillDown = "fill-down"
        /// Stretches to exactly the box.
        case force
        /// `fill` when the source and the box have the same orientation (both portrait or both landscape), else
        /// `fit`.
        case auto
    }

    /// Which part of the image a crop keeps (imgproxy's `gravity` types).
    public enum Gravity: String, Sendable, Hashable, CaseIterable {
        /// The centre (`ce`, the default).
        case center = "ce"
        /// The top edge (`no`).
        case north = "no"
        /// The bottom edge (`so`).
        case south = "so"
        /// The right edge (`ea`).
        case east = "ea"
        /// The left edge (`we`).
        case west = "we"
        /// The top-right corner (`noea`).
        case northEast = "noea"
        /// The top-left corner (`nowe`).
        case northWest = "nowe"
        /// The bottom-right corner (`soea`).
        case southEast = "soea"
        /// The bottom-left corner (`sowe`).
        case southWest = "sowe"
        /// A focus point (`fp`): the offsets are the point's coordinates, 0…1 from the left and from the top, and
        /// the crop is centred on it as far as the image allows.
        case focusPoint = "fp"
        /// Smart (`sm`): the crop keeps the window with the most detail, colour and skin
        /// (``ImagoCore/ImageProcessors/SmartCrop``); for crops only, without offsets.
        case smart = "sm"
    }

    /// A gravity with its offsets: where a crop is taken, or where the image sits in a larger canvas.
    public struct Placement: Sendable, Hashable {
        /// The edge, corner, centre or focus point.
        public var gravity: Gravity
        /// Offset from the gravity's edge along x, in pixels before DPR when ≥ 1 (or ≤ −1), else a fraction of
        /// the free space; for ``Gravity/focusPoint`` the point's x from 0 (left) to 1 (right). Default 0.
        public var offsetX: Double
        /// As ``offsetX``, along y (for ``Gravity/focusPoint``, 0 is the top). Default 0.
        public var offsetY: Double

        /// A placement at `gravity` (default centre) moved by the offsets (default 0).
        public init(gravity: Gravity = .center, offsetX: Double = 0, offsetY: Double = 0) {
            self.gravity = gravity
            self.offsetX = offsetX
            self.offsetY = offsetY
        }
    }

    /// An area cut from the source before anything else (imgproxy's `crop`).
    public struct CropArea: Sendable, Hashable {
        /// Width: pixels when ≥ 1, a fraction of the source's width when below 1, the whole width when 0.
        public var width: Double
        /// Height: pixels when ≥ 1, a fraction of the source's height when below 1, the whole height when 0.
        public var height: Double
        /// Where the area is taken; `nil` (the default) uses the URL's ``ProcessingOptions/gravity``.
        public var placement: Placement?

        /// An area of `width` × `height` at `placement` (default: the URL's gravity).
        public init(width: Double, height: Double, placement: Placement? = nil) {
            self.width = width
            self.height = height
            self.placement = placement
        }
    }

    /// Where and how the server's watermark is drawn (imgproxy's `watermark`).
    public struct WatermarkPlacement: Sendable, Hashable {
        /// Multiplies the server's watermark opacity, 0…1.
        public var opacity: Double
        /// An edge, corner or the centre; `nil` repeats the watermark over the whole image (imgproxy's `re`).
        public var gravity: Gravity?
        /// Offset from the edge (or, repeated, the spacing between tiles) along x: pixels before DPR when at least
        /// 1 in size, else a fraction of the image's width. Default 0.
        public var offsetX: Double
        /// As ``offsetX``, along y.
        public var offsetY: Double
        /// The watermark's size as a fraction of the result's (fitted in that box); 0 keeps its own size.
        public var scale: Double

        /// A watermark at `opacity`, `gravity` (default centre; `nil` tiles), offsets (default 0) and `scale`
        /// (default 0: its own size).
        public init(
            opacity: Double, gravity: Gravity? = .center, offsetX: Double = 0, offsetY: Double = 0, scale: Double = 0
        ) {
            self.opacity = opacity
            self.gravity = gravity
            self.offsetX = offsetX
            self.offsetY = offsetY
            self.scale = scale
        }
    }

    /// Space added around the result, in pixels before DPR (imgproxy's `padding`).
    public struct Padding: Sendable, Hashable {
        /// Above the image. Default 0.
        public var top = 0
        /// Right of the image. Default 0.
        public var right = 0
        /// Below the image. Default 0.
        public var bottom = 0
        /// Left of the image. Default 0.
        public var left = 0

        /// Padding of the given sides (each default 0).
        public init(top: Int = 0, right: Int = 0, bottom: Int = 0, left: Int = 0) {
            self.top = top
            self.right = right
            self.bottom = bottom
            self.left = left
        }

        /// Whether every side is 0.
        public var isEmpty: Bool { top == 0 && right == 0 && bottom == 0 && left == 0 }
    }

    /// The resizing type. Default ``ResizingType/fit``.
    public var resizingType: ResizingType = .fit
    /// Target width in pixels before DPR; 0 (the default) derives it from the height and the aspect ratio.
    public var width = 0
    /// Target height in pixels before DPR; 0 (the default) derives it from the width and the aspect ratio.
    public var height = 0
    /// The smallest width of the result in pixels before DPR (imgproxy's `min-width`). Default 0 (none).
    public var minWidth = 0
    /// The smallest height of the result in pixels before DPR (imgproxy's `min-height`). Default 0 (none).
    public var minHeight = 0
    /// Factors multiplying the resize's scale along x (imgproxy's `zoom`); unlike DPR they do not scale offsets
    /// or padding. Default 1.
    public var zoomX: Double = 1
    /// As ``zoomX``, along y. Default 1.
    public var zoomY: Double = 1
    /// Whether an image smaller than the box may be enlarged. Default `false`.
    public var enlarges = false
    /// Where a `fill` crops. Default ``Gravity/center``.
    public var gravity: Gravity = .center
    /// Horizontal offset of the crop from the gravity's edge (see ``Placement/offsetX``). Default 0.
    public var gravityOffsetX: Double = 0
    /// Vertical offset of the crop from the gravity's edge (see ``Placement/offsetY``). Default 0.
    public var gravityOffsetY: Double = 0
    /// A uniform border cut away before anything else (imgproxy's `trim`). Default `nil` (none).
    public var trim: ImageProcessors.Trim?
    /// An area cut from the source before resizing (imgproxy's `crop`). Default `nil` (none).
    public var crop: CropArea?
    /// When set, an image smaller than the box is extended to it, placed by the placement, the rest filled with
    /// ``background`` or transparency (imgproxy's `extend`). Default `nil` (no extension).
    public var extend: Placement?
    /// When set, the image is extended to the box's aspect ratio (imgproxy's `extend_aspect_ratio`). Default
    /// `nil`.
    public var extendAspectRatio: Placement?
    /// Space added around the result (imgproxy's `padding`). Default none.
    public var padding = Padding()
    /// The colour behind the image: transparency is flattened onto it, and extensions and padding are filled
    /// with it (imgproxy's `background`). Default `nil`: transparent, or white where the format has no alpha.
    public var background: RGBA?
    /// The server's watermark drawn over the result (imgproxy's `watermark`). Default `nil` (none).
    public var watermark: WatermarkPlacement?
    /// Output quality 1…100; `nil` (the default, also `q:0`) uses ``formatQuality`` or the server's.
    public var quality: Int?
    /// Qualities by output format, used when ``quality`` is `nil` (imgproxy's `format_quality`). Default empty.
    public var formatQuality: [ImageFormat: Int] = [:]
    /// The largest output in bytes: a lossy output over it is encoded again at lower qualities, down to 10
    /// (imgproxy's `max_bytes`). Default 0 (no limit).
    public var maxBytes = 0
    /// The output format asked for (`format:` or the URL's extension); `nil` (the default) negotiates it.
    public var format: ImageFormat?
    /// Gaussian blur sigma in output pixels, whatever the DPR (as imgproxy's); 0 (the default) does not blur.
    public var blurSigma: Double = 0
    /// Unsharp-mask sigma in output pixels, whatever the DPR; 0 (the default) does not sharpen.
    public var sharpenSigma: Double = 0
    /// The side of pixelation blocks in output pixels, whatever the DPR; 0 or 1 (the default 0) does not pixelate.
    public var pixelateSize = 0
    /// Clockwise rotation in degrees: 0 (the default), 90, 180 or 270; applied before cropping and resizing, so
    /// the crop and the box are the output's.
    public var rotation = 0
    /// Whether the image is mirrored left-right after the rotation (imgproxy's `flip`, first argument). Default
    /// `false`.
    public var flipsHorizontally = false
    /// Whether the image is mirrored top-bottom after the rotation (imgproxy's `flip`, second argument). Default
    /// `false`.
    public var flipsVertically = false
    /// Whether the source's EXIF orientation is applied before anything else (imgproxy's `auto_rotate`). Default
    /// `true`.
    public var autoRotates = true
    /// Device pixel ratio multiplying the box, the minimum sizes, offsets in pixels and padding; at most what keeps
    /// the image from being enlarged unless ``enlarges`` (``ProxyResize``). Default 1.
    public var dpr: Double = 1
    /// Source formats answered with the source's own bytes, never resized or re-encoded, when the URL names no
    /// other output format (imgproxy's `skip_processing`; `png` covers APNG, `heic` all HEIF). The source is still
    /// checked: a decoder must read it as that format and its size must be within the pixel limit. Default empty.
    public var skippedFormats: Set<ImageFormat> = []
    /// Changes the URL (and so the cache keys and the ETag) without changing the image (imgproxy's
    /// `cachebuster`). Default empty.
    public var cacheBuster = ""
    /// A Unix time after which the URL is answered 404 (imgproxy's `expires`). Default `nil` (never).
    public var expires: Int?
    /// The file name of `Content-Disposition`, without extension (the output's is added); `nil` (the default)
    /// takes it from the source URL's last path segment (imgproxy's `filename`).
    public var filename: String?
    /// Whether `Content-Disposition` says `attachment` rather than `inline` (imgproxy's `return_attachment`).
    /// Default `nil`: the server's ``ImageProxy/Configuration/returnsAttachment``.
    public var returnsAttachment: Bool?
    /// Whether a source's embedded thumbnail (HEIC) is rendered instead of its image whatever the size asked for,
    /// for fast previews (imgproxy's `enforce_thumbnail`; ``DecodingOptions/EmbeddedThumbnails/always``). A
    /// thumbnail large enough for the result is used anyway. `nil` (the default): the server's
    /// ``ImageProxy/Configuration/enforcesThumbnail``.
    public var enforcesThumbnail: Bool?
    /// Whether the result keeps the source's colour profile, its pixels left in the profile's space (imgproxy's
    /// `strip_color_profile:0`), when its format can carry one (JPEG, PNG, WebP, AVIF, JPEG XL, HEIC, TIFF);
    /// otherwise, and when `false`, pixels are converted to sRGB and no profile is written. `nil` (the default):
    /// the server's ``ImageProxy/Configuration/keepsColorProfile``.
    public var keepsColorProfile: Bool?
    /// Whether the result keeps the source's EXIF, XMP and IPTC blocks as they are (imgproxy's
    /// `strip_metadata:0`), the EXIF orientation set upright when the image was turned, in formats that carry them
    /// (JPEG and TIFF, whose EXIF is its text tags; PNG, WebP, AVIF, HEIC and JPEG XL without IPTC). `nil` (the
    /// default): the server's
    /// ``ImageProxy/Configuration/stripsMetadata``.
    public var keepsMetadata: Bool?
    /// Whether a result whose metadata is stripped keeps who made the image and its rights
    /// (``ImageMetadata/copyrightOnly``; imgproxy's `keep_copyright`). `nil` (the default): the server's
    /// ``ImageProxy/Configuration/keepsCopyright``.
    public var keepsCopyright: Bool?
    /// Limits the URL sets for itself (imgproxy's security options), taken only with
    /// ``ImageProxy/Configuration/allowsSecurityOptions``. Default none.
    public var security = SecurityLimits()
    /// The longest side of the result in pixels (imgproxy's `IMGPROXY_MAX_RESULT_DIMENSION`, set by the server
    /// from ``ImageProxy/Configuration/maxResultDimension``): a larger result is scaled down, aspect ratio kept,
    /// until its longer side fits, extensions and padding included. Default 0: no limit but
    /// ``OptionParser/maximumSide``.
    public var maxResultDimension = 0
    /// Whether resizes average in linear light (set by the server from
    /// ``ImageProxy/Configuration/usesLinearColorspace``, imgproxy's `IMGPROXY_USE_LINEAR_COLORSPACE`). Default
    /// `false`.
    public var resizesInLinearLight = false
    /// Whether every raster source is decoded at full size before it is resized, never shrunk while decoding (set
    /// by the server from ``ImageProxy/Configuration/shrinksOnLoad``, imgproxy's
    /// `IMGPROXY_DISABLE_SHRINK_ON_LOAD`). Default `false`.
    public var disablesShrinkOnLoad = false

    /// Options with every default.
    public init() {}

    /// The box in output pixels (DPR applied); 0 on an axis derives it.
    public var scaledBox: (width: Int, height: Int) {
        (scaled(width), scaled(height))
    }

    /// `pixels` times the DPR, rounded.
    func scaled(_ pixels: Int) -> Int { Int((Double(pixels) * dpr).rounded()) }

    /// Whether the options ask for a canvas around the resized image: `extend`, `extend_aspect_ratio` or
    /// `padding` (``ProxyCanvas``; a result limit then applies to the finished canvas, ``ProxyResultLimit``).
    var asksForCanvas: Bool { extend != nil || extendAspectRatio != nil || !padding.isEmpty }

    /// The `fill` gravity and its offsets as a placement.
    public var placement: Placement {
        Placement(gravity: gravity, offsetX: gravityOffsetX, offsetY: gravityOffsetY)
    }

    /// A stable text naming every field (for disk keys and logs); equal options give equal text. Fields at their
    /// defaults that imgproxy's first options did not have are left out, so that older keys stay valid.
    public var canonicalDescription: String {
        var text = "rs:\(resizingType.rawValue):\(width):\(height):\(enlarges ? 1 : 0)"
        text += "/g:\(gravity.rawValue):\(Self.text(gravityOffsetX)):\(Self.text(gravityOffsetY))"
        text += "/q:\(quality ?? 0)/f:\(format?.description ?? "auto")"
        text += "/bl:\(Self.text(blurSigma))/rot:\(rotation)/dpr:\(Self.text(dpr))"
        // A crop of a rotated image has been cut after the rotation since stop 36 (before, from the source): the
        // mark keeps outputs made the old way from answering such URLs.
        if crop != nil, rotation != 0 { text += "/rc" }
        // Since stop 37 the resize follows imgproxy's sizes (``ProxyLayout``): the DPR is bounded to keep the image
        // from being enlarged and no longer scales blur, sharpen and pixelate; `auto` counts a square as landscape;
        // a minimum size or a zoom with a box cuts to the box times the zoom. The mark keeps outputs made the old
        // way from answering the URLs whose images changed.
        if layoutChanged { text += "/l2" }
        if flipsHorizontally || flipsVertically {
            text += "/fl:\(flipsHorizontally ? 1 : 0):\(flipsVertically ? 1 : 0)"
        }
        if minWidth != 0 || minHeight != 0 { text += "/min:\(minWidth):\(minHeight)" }
        if zoomX != 1 || zoomY != 1 { text += "/z:\(Self.text(zoomX)):\(Self.text(zoomY))" }
        if let trim {
            let color = trim.color.map { "\($0.r),\($0.g),\($0.b),\($0.a)" } ?? "auto"
            text += "/t:\(trim.threshold):\(color):\(trim.equalHorizontal ? 1 : 0):\(trim.equalVertical ? 1 : 0)"
        }
        if let crop {
            text += "/c:\(Self.text(crop.width)):\(Self.text(crop.height))"
            if let placement = crop.placement { text += ":" + Self.text(placement) }
        }
        if let extend { text += "/ex:" + Self.text(extend) }
        if let extendAspectRatio { text += "/exar:" + Self.text(extendAspectRatio) }
        if !padding.isEmpty { text += "/pd:\(padding.top):\(padding.right):\(padding.bottom):\(padding.left)" }
        if let background { text += "/bg:\(background.r):\(background.g):\(background.b):\(background.a)" }
        if let watermark {
            text += "/wm:\(Self.text(watermark.opacity)):\(watermark.gravity?.rawValue ?? "re")"
            text += ":\(Self.text(watermark.offsetX)):\(Self.text(watermark.offsetY)):\(Self.text(watermark.scale))"
            // Since stop 37 tiles are centred on the image and offsets may take a watermark past the edge, as
            // imgproxy's: the mark keeps outputs made the old way from answering the URLs that may differ.
            if watermark.gravity == nil || watermark.offsetX != 0 || watermark.offsetY != 0 { text += ":2" }
        }
        if !formatQuality.isEmpty {
            text += "/fq:" + formatQuality.map { "\($0.key):\($0.value)" }.sorted().joined(separator: ":")
        }
        if maxBytes != 0 { text += "/mb:\(maxBytes)" }
        if sharpenSigma != 0 { text += "/sh:\(Self.text(sharpenSigma))" }
        if pixelateSize > 1 { text += "/pix:\(pixelateSize)" }
        if !autoRotates { text += "/ar:0" }
        if !skippedFormats.isEmpty { text += "/skp:" + skippedFormats.map(\.rawValue).sorted().joined(separator: ":") }
        if !cacheBuster.isEmpty { text += "/cb:\(cacheBuster)" }
        if maxResultDimension != 0 { text += "/mrd:\(maxResultDimension)" }
        if resizesInLinearLight { text += "/lin:1" }
        if disablesShrinkOnLoad { text += "/sol:0" }
        if enforcesThumbnail == true { text += "/eth:1" }
        if keepsColorProfile == true { text += "/kcp:1" }
        if keepsMetadata == true { text += "/sm:0" }
        if keepsCopyright == false { text += "/kcr:0" }
        if let pixels = security.maxSourcePixels { text += "/msr:\(pixels)" }
        if let bytes = security.maxSourceBytes { text += "/msfs:\(bytes)" }
        if let frames = security.maxAnimationFrames { text += "/maf:\(frames)" }
        if let pixels = security.maxAnimationFramePixels { text += "/mafr:\(pixels)" }
        return text
    }

    /// Whether stop 37's resize (imgproxy's sizes) may make another image for these options than the one before.
    private var layoutChanged: Bool {
        let hasBox = width > 0 || height > 0
        return dpr != 1 || (resizingType == .auto && width > 0 && height > 0)
            || (hasBox && (minWidth > 0 || minHeight > 0 || zoomX != 1 || zoomY != 1))
    }

    /// A number as the same text in every process: the processors' identifiers' form (integers plainly, others in
    /// Swift's shortest round-trip form).
    static func text(_ value: Double) -> String { ImageProcessors.format(value) }

    static func text(_ placement: Placement) -> String {
        "\(placement.gravity.rawValue):\(text(placement.offsetX)):\(text(placement.offsetY))"
    }
}
