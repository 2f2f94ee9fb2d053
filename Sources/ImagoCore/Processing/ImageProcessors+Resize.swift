extension ImageProcessors {
    /// Scales the image to a target size, keeping or filling its aspect ratio.
    ///
    /// Resampling is ``PixelBuffer/resampled(to:)``: area averaging when shrinking, bilinear when enlarging,
    /// premultiplied so that transparent pixels never bleed colour. Sizes are rounded to the nearest pixel (at
    /// least 1). By default the image is never enlarged (`allowsUpscaling: false`): a source already smaller than
    /// the target is returned as it is (``Mode-swift.enum/aspectFit``), only centre-cropped
    /// (``Mode-swift.enum/aspectFill``) or clamped per axis (``Mode-swift.enum/exact``).
    /// Throws ``ImageProcessors/Error/invalidTargetSize(width:height:)`` for a target under 1x1.
    public struct Resize: ImageProcessing {
        /// How the source's aspect ratio relates to the target's.
        public enum Mode: String, Sendable, Hashable, CaseIterable {
            /// Scales to fit inside the target, keeping the aspect ratio; one side may come out shorter (default).
            case aspectFit = "fit"
            /// Scales to cover the target, keeping the aspect ratio, then crops the centre to exactly the target.
            case aspectFill = "fill"
            /// Stretches to exactly the target, ignoring the aspect ratio.
            case exact = "exact"
            /// Scales to cover the target, keeping the aspect ratio, and keeps the whole image: one side may come
            /// out longer than the target's (640×480 into 400×400 gives 533×400). Nuke's `.aspectFill` with
            /// `crop: false`.
            case aspectFillWithoutCrop = "fill-nocrop"
        }

        /// The target size in pixels.
        public var size: PixelSize
        /// How to fit the aspect ratio (default ``Mode-swift.enum/aspectFit``).
        public var mode: Mode
        /// Whether an image smaller than the target may be enlarged (default `false`).
        public var allowsUpscaling: Bool
        /// Whether pixels are averaged in linear light (``PixelBuffer/resampledInLinearLight(to:curve:)``) rather than
        /// as sRGB values (default `false`: ``PixelBuffer/resampled(to:)``, somewhat faster, and the decoder may
        /// shrink the image first).
        public var inLinearLight: Bool

        /// A resize to `size` with `mode` (default `.aspectFit`), never enlarging unless `allowsUpscaling`,
        /// averaging sRGB values unless `inLinearLight`.
        public init(
            size: PixelSize, mode: Mode = .aspectFit, allowsUpscaling: Bool = false, inLinearLight: Bool = false
        ) {
            self.size = size
            self.mode = mode
            self.allowsUpscaling = allowsUpscaling
            self.inLinearLight = inLinearLight
        }

        /// `imago.resize?w=…&h=…&mode=fit|fill|exact&upscale=0|1`, then `&light=linear` in linear light.
        public var identifier: String {
            "imago.resize?w=\(size.width)&h=\(size.height)&mode=\(mode.rawValue)&upscale=\(allowsUpscaling ? 1 : 0)"
                + (inLinearLight ? "&light=linear" : "")
        }

        /// What the decoder must at least produce for this resize to give the same result as on the full image:
        /// the target size, fitted (``Mode-swift.enum/aspectFit``) or covered (every other mode); in linear light
        /// reached only by a reduced decode (``DecodeTarget/shrinksOnlyWhileDecoding``: a decoder's resampling
        /// would average sRGB values). `nil` for an empty target (the resize throws).
        public var decodeTarget: DecodeTarget? {
            guard size.width > 0, size.height > 0 else { return nil }
            return DecodeTarget(
                size: size, mode: mode == .aspectFit ? .fit : .cover, shrinksOnlyWhileDecoding: inLinearLight)
        }

        /// The resized image; the input itself when nothing changes.
        public func process(_ image: PixelBuffer) throws -> PixelBuffer {
            guard size.width > 0, size.height > 0 else {
                throw Error.invalidTargetSize(width: size.width, height: size.height)
            }
            let w = Double(image.width)
            let h = Double(image.height)
            let sx = Double(size.width) / w
            let sy = Double(size.height) / h
            switch mode {
            case .exact:
                let target =
                    allowsUpscaling
                    ? size : PixelSize(width: min(size.width, image.width), height: min(size.height, image.height))
                return try image.resampled(to: target, inLinearLight: inLinearLight)
            case .aspectFit:
                let scale = allowsUpscaling ? min(sx, sy) : min(sx, sy, 1)
                let target = PixelSize(
                    width: min(size.width, max(1, Int((w * scale).rounded()))),
                    height: min(size.height, max(1, Int((h * scale).rounded()))))
                return try image.resampled(to: target, inLinearLight: inLinearLight)
            case .aspectFill:
                let scale = allowsUpscaling ? max(sx, sy) : min(max(sx, sy), 1)
                // The covering side must not round below the target, or the crop would come out short.
                let floorW = allowsUpscaling ? size.width : min(size.width, image.width)
                let floorH = allowsUpscaling ? size.height : min(size.height, image.height)
                let scaled = PixelSize(
                    width: max(floorW, Int((w * scale).rounded())), height: max(floorH, Int((h * scale).rounded())))
                let covering = try image.resampled(to: scaled, inLinearLight: inLinearLight)
                let cropW = min(size.width, scaled.width)
                let cropH = min(size.height, scaled.height)
                return covering.cropped(
                    x: (scaled.width - cropW) / 2, y: (scaled.height - cropH) / 2, width: cropW, height: cropH)
            case .aspectFillWithoutCrop:
                guard allowsUpscaling else {
                    return try image.resampled(to: image.size.covering(size), inLinearLight: inLinearLight)
                }
                let scale = max(sx, sy)
                let target = PixelSize(
                    width: max(size.width, Int((w * scale).rounded())),
                    height: max(size.height, Int((h * scale).rounded())))
                return try image.resampled(to: target, inLinearLight: inLinearLight)
            }
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Resize {
    /// Scales to `width` × `height` with `mode` (default `.aspectFit`); never enlarges unless `allowsUpscaling`.
    ///
    /// ```swift
    /// let request = ImageRequest(url: url, processors: [.resize(width: 256, height: 256, mode: .aspectFill)])
    /// ```
    public static func resize(
        width: Int, height: Int, mode: ImageProcessors.Resize.Mode = .aspectFit, allowsUpscaling: Bool = false
    ) -> Self {
        ImageProcessors.Resize(
            size: PixelSize(width: width, height: height), mode: mode, allowsUpscaling: allowsUpscaling)
    }

    /// Scales so that the longer side is at most `maxDimension` pixels, keeping the aspect ratio (never enlarges
    /// unless `allowsUpscaling`); the same as `.resize(width: m, height: m, mode: .aspectFit)`.
    public static func resize(maxDimension: Int, allowsUpscaling: Bool = false) -> Self {
        resize(width: maxDimension, height: maxDimension, mode: .aspectFit, allowsUpscaling: allowsUpscaling)
    }
}
