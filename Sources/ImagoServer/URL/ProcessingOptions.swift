import ImagoCore

/// What an imgproxy URL asks to be done to its source, typed: each field is one of imgproxy's processing options
/// with its meaning. Defaults: fit, no size (keep the source's), centre gravity, default quality, negotiated
/// format, no blur, no rotation, DPR 1.
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
        /// Stretches to exactly the box.
        case force
    }

    /// Which part of the image a `fill` keeps (imgproxy's `gravity` types).
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
    }

    /// The resizing type. Default ``ResizingType/fit``.
    public var resizingType: ResizingType = .fit
    /// Target width in pixels before DPR; 0 (the default) derives it from the height and the aspect ratio.
    public var width = 0
    /// Target height in pixels before DPR; 0 (the default) derives it from the width and the aspect ratio.
    public var height = 0
    /// Whether an image smaller than the box may be enlarged. Default `false`.
    public var enlarges = false
    /// Where a `fill` crops. Default ``Gravity/center``.
    public var gravity: Gravity = .center
    /// Horizontal offset of the crop from the gravity's edge, in pixels. Default 0.
    public var gravityOffsetX = 0
    /// Vertical offset of the crop from the gravity's edge, in pixels. Default 0.
    public var gravityOffsetY = 0
    /// Output quality 1…100; `nil` (the default, also `q:0`) uses the server's.
    public var quality: Int?
    /// The output format asked for (`format:` or the URL's extension); `nil` (the default) negotiates it.
    public var format: ImageFormat?
    /// Gaussian blur sigma in output pixels; 0 (the default) does not blur.
    public var blurSigma: Double = 0
    /// Clockwise rotation in degrees: 0 (the default), 90, 180 or 270; applied before resizing, so the box is
    /// the output's.
    public var rotation = 0
    /// Device pixel ratio multiplying the box (and the blur). Default 1.
    public var dpr: Double = 1

    /// Options with every default.
    public init() {}

    /// The box in output pixels (DPR applied); 0 on an axis derives it.
    public var scaledBox: (width: Int, height: Int) {
        (Int((Double(width) * dpr).rounded()), Int((Double(height) * dpr).rounded()))
    }

    /// A stable text naming every field (for disk keys and logs); equal options give equal text.
    public var canonicalDescription: String {
        var text = "rs:\(resizingType.rawValue):\(width):\(height):\(enlarges ? 1 : 0)"
        text += "/g:\(gravity.rawValue):\(gravityOffsetX):\(gravityOffsetY)"
        text += "/q:\(quality ?? 0)/f:\(format?.description ?? "auto")"
        text += "/bl:\(blurSigma)/rot:\(rotation)/dpr:\(dpr)"
        return text
    }
}
