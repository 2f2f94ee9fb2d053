import Foundation
import Imago
import ImagoCodecs

extension FuzzTargets {
    /// `BMPEncoder`, `ICOEncoder` and `TIFFEncoder` on raw pixels: the first byte gives the width (1…64), the rest
    /// are straight RGBA pixels, row by row (at most 64 rows). Each output is read again with the encoders'
    /// promises checked (a broken one traps): BMP and ICO give back every pixel exactly (the colour of a fully
    /// transparent pixel aside; and an image transparent everywhere is BMP's one ambiguity, read as opaque, as
    /// browsers read it); TIFF every alpha exactly and colour within libtiff's premultiplying (255 / alpha levels,
    /// none for opaque pixels).
    static func stillEncoders(_ data: Data) {
        let bytes = [UInt8](data)
        guard bytes.count >= 5 else { return }
        let width = Int(bytes[0]) % 64 + 1
        let height = min(64, (bytes.count - 1) / 4 / width)
        guard height > 0,
            let image = try? PixelBuffer(
                width: width, height: height, bytes: Array(bytes[1..<(1 + width * height * 4)]))
        else { return }
        func decoded(_ encoder: any ImageEncoding, _ decoder: any ImageDecoding) -> PixelBuffer {
            do {
                let encoded = try encoder.encode(image, options: EncodingOptions())
                let back = try decoder.decode(encoded, options: DecodingOptions()).image.convertedToRGBA()
                precondition(back.size == image.size, "\(encoder.format): size \(back.size)")
                return back
            } catch {
                preconditionFailure("\(encoder.format) could not be written or read again: \(error)")
            }
        }
        func checkExact(_ back: PixelBuffer, _ format: ImageFormat) {
            for y in 0..<height {
                for x in 0..<width {
                    let (was, now) = (image[pixel: x, y], back[pixel: x, y])
                    precondition(
                        was == now || (was.a == 0 && now.a == 0), "\(format) at \(x),\(y): \(was) became \(now)")
                }
            }
        }
        let isTransparentEverywhere = stride(from: 3, to: image.bytes.count, by: 4).allSatisfy { image.bytes[$0] == 0 }
        if !isTransparentEverywhere { checkExact(decoded(BMPEncoder(), BMPDecoder()), .bmp) }
        checkExact(decoded(ICOEncoder(), ICODecoder()), .ico)
        let tiff = decoded(TIFFEncoder(), TIFFDecoder())
        for y in 0..<height {
            for x in 0..<width {
                let (was, now) = (image[pixel: x, y], tiff[pixel: x, y])
                precondition(was.a == now.a, "TIFF alpha at \(x),\(y): \(was.a) became \(now.a)")
                guard was.a != 0 else { continue }
                let tolerance = was.a == 255 ? 0 : 255 / Int(was.a) + 1
                precondition(
                    [(was.r, now.r), (was.g, now.g), (was.b, now.b)].allSatisfy { abs(Int($0) - Int($1)) <= tolerance },
                    "TIFF colour at \(x),\(y): \(was) became \(now)")
            }
        }
    }
}
