import Foundation

extension ImageProcessors {
    /// Blurs the image with a close approximation of a Gaussian of standard deviation `radius` pixels.
    ///
    /// From `radius` 3 up: three successive box blurs (odd widths chosen so that their combined variance is close
    /// to `radius`², after W. Jarosz and I. Kutskir) run separably with running sums, so the cost per pixel does
    /// not grow with the radius (the spread is within 6 % of the Gaussian's, closer as the radius grows). Below 3,
    /// where whole box widths are too coarse, a sampled Gaussian kernel of ±⌈3 × radius⌉ pixels is convolved
    /// directly. Colour is blurred premultiplied by alpha, so transparent pixels never bleed their colour; pixels
    /// beyond the image edge are taken to repeat the edge pixel (clamp). The visible spread reaches about
    /// 3 × `radius`. `radius` 0 (or one too small to move any pixel) returns the input unchanged; the format is
    /// kept (`rgba8` or `gray8`).
    /// Throws ``ImageProcessors/Error/invalidRadius(processor:radius:)`` for a negative or non-finite radius.
    public struct GaussianBlur: ImageProcessing {
        /// The Gaussian's standard deviation σ in pixels (≥ 0).
        public var radius: Double

        /// A blur with standard deviation `radius` pixels (default 8).
        public init(radius: Double = 8) {
            self.radius = radius
        }

        /// `imago.gaussianBlur?r=…`.
        public var identifier: String { "imago.gaussianBlur?r=\(ImageProcessors.format(radius))" }

        /// The blurred image.
        public func process(_ image: PixelBuffer) throws -> PixelBuffer {
            guard radius.isFinite, radius >= 0 else { throw Error.invalidRadius(processor: "blur", radius: radius) }
            let passes = Self.passes(sigma: radius)
            if passes.isEmpty { return image }
            return try image.blurred(passes: passes)
        }

        /// The 1-D filters that approximate a Gaussian of `sigma`, applied along each axis; empty for identity.
        static func passes(sigma: Double) -> [BlurPass] {
            if sigma >= 3 { return boxRadii(sigma: sigma).filter { $0 > 0 }.map { .box(radius: $0) } }
            let r = Int((3 * sigma).rounded(.up))
            guard r > 0 else { return [] }
            let raw = (-r...r).map { exp(-Double($0 * $0) / (2 * sigma * sigma)) }
            let total = raw.reduce(0, +)
            // Weights so small the centre keeps (nearly) everything would only add float noise.
            guard raw[r] / total < 0.9999 else { return [] }
            return [.kernel(raw.map { Float($0 / total) })]
        }

        /// Radii of the three boxes whose successive application has variance closest to `sigma`².
        static func boxRadii(sigma: Double) -> [Int] {
            // Box of width w has variance (w² − 1) / 12; pick odd widths wl and wl + 2 so that their sum matches.
            guard sigma > 0 else { return [0, 0, 0] }
            let n = 3.0
            let ideal = (12 * sigma * sigma / n + 1).squareRoot()
            var wl = Int(ideal.rounded(.down))
            if wl % 2 == 0 { wl -= 1 }
            let l = Double(wl)
            let m = Int(((12 * sigma * sigma - n * l * l - 4 * n * l - 3 * n) / (-4 * l - 4)).rounded())
            return (0..<3).map { ($0 < m ? wl : wl + 2) / 2 }
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.GaussianBlur {
    /// Blurs with a Gaussian of standard deviation `radius` pixels (default 8); 0 leaves the image unchanged.
    ///
    /// ```swift
    /// let request = ImageRequest(url: url, processors: [.resize(width: 256, height: 256), .gaussianBlur(radius: 4)])
    /// ```
    public static func gaussianBlur(radius: Double = 8) -> Self {
        ImageProcessors.GaussianBlur(radius: radius)
    }
}
