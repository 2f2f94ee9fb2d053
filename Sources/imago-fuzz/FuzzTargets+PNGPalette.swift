import Foundation
import Imago
import ImagoCodecs

extension FuzzTargets {
    /// `PNGEncoder(paletteColors:)` on raw pixels: the first byte gives the width (1…64), the second the number of
    /// colours (2…257 clamped to 256), the rest are straight RGBA pixels, row by row (at most 64 rows). Written and
    /// read again with the encoder's promises checked (a broken one traps): the same size; opaque pixels opaque
    /// and fully transparent ones transparent; at most that many RGBA colours unless the image came back exactly
    /// (written truecolor, when 2 colours cannot keep opaque pixels opaque); an image with that many or fewer back
    /// exactly. Every pixel value reaches the quantizer, so both its RGB and its premultiplied-RGBA paths and
    /// their nearest-colour cells see what no decoder would produce.
    static func pngPalette(_ data: Data) {
        let bytes = [UInt8](data)
        guard bytes.count >= 6 else { return }
        let width = Int(bytes[0]) % 64 + 1
        let colors = Int(bytes[1]) + 2
        let height = min(64, (bytes.count - 2) / 4 / width)
        guard height > 0, var image = try? PixelBuffer(width: width, height: height) else { return }
        var distinct = Set<UInt32>()
        for y in 0..<height {
            for x in 0..<width {
                let p = 2 + (y * width + x) * 4
                let pixel = RGBA(r: bytes[p], g: bytes[p + 1], b: bytes[p + 2], a: bytes[p + 3])
                image[pixel: x, y] = pixel
                distinct.insert(
                    pixel.a == 0
                        ? 0 : UInt32(pixel.r) << 24 | UInt32(pixel.g) << 16 | UInt32(pixel.b) << 8 | UInt32(pixel.a))
            }
        }
        let encoder = PNGEncoder(paletteColors: colors)
        let written: PixelBuffer
        do {
            let png = try encoder.encode(image, options: EncodingOptions())
            written = try PNGDecoder().decode(png, options: DecodingOptions()).image.convertedToRGBA()
        } catch {
            preconditionFailure("a palette PNG could not be written or read again: \(error)")
        }
        precondition(written.size == image.size, "size")
        var colours = Set<UInt32>()
        for y in 0..<height {
            for x in 0..<width {
                let (was, now) = (image[pixel: x, y], written[pixel: x, y])
                precondition(was.a != 0 || now.a == 0, "a transparent pixel at \(x),\(y) became \(now.a)")
                precondition(was.a != 255 || now.a == 255, "an opaque pixel at \(x),\(y) became \(now.a)")
                if distinct.count <= encoder.paletteColors ?? 0, was.a != 0 {
                    precondition(was == now, "\(distinct.count) colours: \(was) became \(now) at \(x),\(y)")
                }
                colours.insert(UInt32(now.r) << 24 | UInt32(now.g) << 16 | UInt32(now.b) << 8 | UInt32(now.a))
            }
        }
        precondition(colours.count <= encoder.paletteColors ?? 0 || written == image, "\(colours.count) colours")
    }
}
