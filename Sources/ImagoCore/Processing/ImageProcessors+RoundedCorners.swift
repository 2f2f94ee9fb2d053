extension ImageProcessors {
    /// A line painted just inside the edge of a rounded or circular mask.
    public struct Border: Sendable, Hashable {
        /// The line's colour (straight alpha; a translucent colour lets the image show through).
        public var color: RGBA
        /// The line's width in pixels (≥ 0; 0 draws nothing).
        public var width: Double

        /// A border of `width` pixels in `color`.
        public init(color: RGBA, width: Double) {
            self.color = color
            self.width = width
        }

        var identifierSuffix: String {
            "&border=\(ImageProcessors.format(width))&color=\(ImageProcessors.format(color))"
        }
    }

    /// Makes the image's corners transparent, rounding them with `radius`, optionally with a border.
    ///
    /// Pixels outside the rounded rectangle become transparent; pixels on its edge keep their colour with alpha
    /// scaled by the fraction of the pixel inside the shape (estimated from the distance of the pixel centre to
    /// the edge, so edges are anti-aliased). `radius` is in pixels of the image being processed and is clamped to
    /// half the shorter side (which gives a capsule or, on a square, a circle). A `border` is painted over the
    /// image in the band of `border.width` pixels just inside the edge. The result is `rgba8` (a `gray8` input
    /// gains alpha); radius 0 without a border returns the input unchanged.
    /// Throws ``ImageProcessors/Error/invalidRadius(processor:radius:)`` for a negative or non-finite radius.
    public struct RoundedCorners: ImageProcessing {
        /// Corner radius in pixels (≥ 0).
        public var radius: Double
        /// The border drawn along the edge, if any (default none).
        public var border: Border?

        /// Corners rounded with `radius` pixels and an optional `border` (default none).
        public init(radius: Double, border: Border? = nil) {
            self.radius = radius
            self.border = border
        }

        /// `imago.roundedCorners?r=…`, plus `&border=…&color=#rrggbbaa` with a border.
        public var identifier: String {
            "imago.roundedCorners?r=\(ImageProcessors.format(radius))" + (border?.identifierSuffix ?? "")
        }

        /// The masked image.
        public func process(_ image: PixelBuffer) throws -> PixelBuffer {
            guard radius.isFinite, radius >= 0 else {
                throw Error.invalidRadius(processor: "rounded corners", radius: radius)
            }
            if let border, !(border.width.isFinite && border.width >= 0) {
                throw Error.invalidBorderWidth(border.width)
            }
            if radius == 0, (border?.width ?? 0) == 0 { return image }
            return image.maskedToRoundedRect(radius: radius, border: border)
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.RoundedCorners {
    /// Rounds the corners with `radius` pixels, optionally drawing `border` along the edge (default none).
    ///
    /// ```swift
    /// let processors: [any ImageProcessing] = [.resize(width: 256, height: 256), .roundedCorners(radius: 16)]
    /// ```
    public static func roundedCorners(radius: Double, border: ImageProcessors.Border? = nil) -> Self {
        ImageProcessors.RoundedCorners(radius: radius, border: border)
    }
}

extension PixelBuffer {
    /// An `rgba8` copy whose pixels outside the rounded rectangle (the whole image, corners of `radius`) are
    /// transparent, edges anti-aliased, with `border` painted inside the edge. Parameters are already validated.
    func maskedToRoundedRect(radius: Double, border: ImageProcessors.Border?) -> PixelBuffer {
        var out = ImageProcessors.straight(self).convertedToRGBA()
        let w = width
        let h = height
        let halfW = Double(w) / 2
        let halfH = Double(h) / 2
        let outer = RoundedBox(halfWidth: halfW, halfHeight: halfH, radius: min(radius, halfW, halfH))
        let bw = border?.width ?? 0
        let inner = RoundedBox(halfWidth: halfW - bw, halfHeight: halfH - bw, radius: max(outer.radius - bw, 0))
        let bc = border?.color ?? RGBA(r: 0, g: 0, b: 0, a: 0)
        let ba = Double(bc.a) / 255
        let premultipliedBorder = (Double(bc.r) * ba, Double(bc.g) * ba, Double(bc.b) * ba)
        // Pixels deep inside both shapes are left alone: each row only visits the stretches outside the span
        // that is fully covered (every pixel inside the inner shape is inside the outer one too).
        let solid = bw > 0 ? inner : outer

        out.bytes.withUnsafeMutableBufferPointer { p in
            func shade(_ x: Int, _ y: Int) {
                let dx = abs(Double(x) + 0.5 - halfW)
                let dy = abs(Double(y) + 0.5 - halfH)
                let co = outer.coverage(dx, dy)
                let ci = bw > 0 ? inner.coverage(dx, dy) : co
                if co == 1, ci == 1 { return }
                let i = (y * w + x) * 4
                if co == 0 {
                    p[i] = 0
                    p[i + 1] = 0
                    p[i + 2] = 0
                    p[i + 3] = 0
                    return
                }
                // Border over image, premultiplied, then the whole pixel scaled by the outer coverage.
                let a = Double(p[i + 3]) / 255
                let ring = 1 - ci
                let keep = 1 - ba * ring
                let outA = (ba * ring + a * keep) * co
                guard outA > 0.5 / 255 else {
                    p[i] = 0
                    p[i + 1] = 0
                    p[i + 2] = 0
                    p[i + 3] = 0
                    return
                }
                let s = co / outA
                p[i] = clampedByte((premultipliedBorder.0 * ring + Double(p[i]) * a * keep) * s)
                p[i + 1] = clampedByte((premultipliedBorder.1 * ring + Double(p[i + 1]) * a * keep) * s)
                p[i + 2] = clampedByte((premultipliedBorder.2 * ring + Double(p[i + 2]) * a * keep) * s)
                p[i + 3] = clampedByte(outA * 255)
            }
            for y in 0..<h {
                let reach = solid.coveredHalfWidth(atDistance: abs(Double(y) + 0.5 - halfH))
                guard reach >= 0 else {
                    for x in 0..<w { shade(x, y) }
                    continue
                }
                // |x + 0.5 − halfW| ≤ reach  ⇔  x in first...last
                let first = min(max(Int((halfW - reach - 0.5).rounded(.up)), 0), w)
                let last = min(max(Int((halfW + reach - 0.5).rounded(.down)), first - 1), w - 1)
                for x in 0..<first { shade(x, y) }
                for x in (last + 1)..<w { shade(x, y) }
            }
        }
        return out
    }
}

/// A rectangle with rounded corners centred on the origin; `coverage` takes a pixel centre's distance from the
/// centre along each axis (folding the four quadrants into one).
private struct RoundedBox {
    var halfWidth: Double
    var halfHeight: Double
    var radius: Double

    /// The fraction of a pixel inside the shape, estimated as 0.5 minus the signed distance from the pixel centre
    /// to the edge (exact for edges parallel to the axes, within a few percent on curves), clamped to 0…1.
    @inline(__always)
    func coverage(_ dx: Double, _ dy: Double) -> Double {
        guard halfWidth > 0, halfHeight > 0 else { return 0 }
        let qx = dx - (halfWidth - radius)
        let qy = dy - (halfHeight - radius)
        let ox = max(qx, 0)
        let oy = max(qy, 0)
        let distance = (ox * ox + oy * oy).squareRoot() + min(max(qx, qy), 0) - radius
        return min(max(0.5 - distance, 0), 1)
    }

    /// For a row whose pixel centres lie `dy` from the centre: the largest `dx` at which ``coverage(_:_:)`` is
    /// surely 1 (a hair less, against rounding), or −1 when no pixel of the row is fully covered. Coverage is 1
    /// where the distance is at most −0.5: the same box shrunk by half a pixel, with its radius shrunk too.
    func coveredHalfWidth(atDistance dy: Double) -> Double {
        let a = halfWidth - 0.5
        let b = halfHeight - 0.5
        let r = max(radius - 0.5, 0)
        guard halfWidth > 0, halfHeight > 0, a > 0, dy <= b else { return -1 }
        let margin = 1e-6
        if dy <= b - r { return a - margin }
        let t = dy - (b - r)
        return max(a - r + (r * r - t * t).squareRoot() - margin, -1)
    }
}
