// Helpers shared by the built-in processors.

extension ImageProcessors {
    // Identifiers end up in cache keys on disk, so numbers must print the same in every process and release:
    // integers plainly, other values by Swift's shortest round-trip form (deterministic, not locale-dependent).
    package static func format(_ value: Double) -> String {
        if value.isFinite, value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return value.description
    }

    /// `#rrggbbaa`, lower-case hex.
    package static func format(_ color: RGBA) -> String {
        var s = "#"
        for byte in [color.r, color.g, color.b, color.a] {
            let hex = String(byte, radix: 16)
            s += byte < 16 ? "0" + hex : hex
        }
        return s
    }

    /// The part of `0..<size` that `length` pixels starting at `offset` cover (empty when none), computed without
    /// overflow whatever the offset: where an image placed at `offset` lands on a canvas `size` wide.
    static func covered(offset: Int, length: Int, within size: Int) -> Range<Int> {
        let start = min(max(offset, 0), size)
        let end = offset > size - length ? size : offset + length
        return start..<max(start, end)
    }

    /// A `width` × `height` `rgba8` buffer of `color` (straight alpha), marked opaque when the colour is.
    static func filled(width: Int, height: Int, with color: RGBA) throws(PixelBuffer.Error) -> PixelBuffer {
        var out = try PixelBuffer(width: width, height: height)
        if color != RGBA(r: 0, g: 0, b: 0, a: 0) {
            out.bytes.withUnsafeMutableBufferPointer { p in
                var i = 0
                while i < p.count {
                    p[i] = color.r
                    p[i + 1] = color.g
                    p[i + 2] = color.b
                    p[i + 3] = color.a
                    i += 4
                }
            }
        }
        out.opaqueMark = color.a == 255
        return out
    }

    /// Straight-alpha input for processors whose arithmetic assumes it (a no-op for what decoders return).
    package static func straight(_ image: PixelBuffer) -> PixelBuffer {
        image.alphaMode == .straight ? image : image.unpremultiplied()
    }
}

/// `v` rounded to the nearest integer (halves away from zero) and clamped to 0…255.
@inline(__always)
func clampedByte(_ v: Double) -> UInt8 {
    let r = v.rounded()
    return r <= 0 ? 0 : (r >= 255 ? 255 : UInt8(r))
}
