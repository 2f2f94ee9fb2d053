import Foundation
import ImagoCodecs
import ImagoCore
import ImagoTesting
import Testing

/// `PNGEncoder(paletteColors:)`: palette PNGs, partial alpha included (imgproxy's `IMGPROXY_PNG_QUANTIZE`).
@Suite("PNGEncoder: palette output")
struct PNGPaletteEncoderTests {
    /// The IHDR's bit depth and colour type, and the length of the `tRNS` chunk (nil when there is none).
    func header(_ png: Data) -> (bitDepth: UInt8, colorType: UInt8, transparencyEntries: Int?) {
        let bytes = [UInt8](png)
        var transparency: Int?
        var at = 8
        while at + 8 <= bytes.count {
            let length = Int(bytes[at]) << 24 | Int(bytes[at + 1]) << 16 | Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
            if String(decoding: bytes[(at + 4)..<(at + 8)], as: UTF8.self) == "tRNS" { transparency = length }
            at += 12 + length
        }
        return (bytes[24], bytes[25], transparency)
    }

    /// A 40 × 30 image of `colors` flat bands, its right quarter fully transparent when `transparent`.
    func bands(colors: Int, transparent: Bool) throws -> PixelBuffer {
        var image = try PixelBuffer(width: 40, height: 30)
        for y in 0..<30 {
            for x in 0..<40 {
                let band = x * colors / 40
                image[pixel: x, y] =
                    transparent && x >= 30
                    ? RGBA(r: 0, g: 0, b: 0, a: 0)
                    : RGBA(r: UInt8(band * 255 / max(1, colors - 1)), g: UInt8((band * 37) % 256), b: 90, a: 255)
            }
        }
        return image
    }

    @Test func fewColoursAreKeptExactlyInAPackedPalette() throws {
        let image = try bands(colors: 15, transparent: true)
        let png = try PNGEncoder(paletteColors: 256).encode(image, options: EncodingOptions())
        let (depth, type, transparency) = header(png)
        // 15 colours and the transparent entry: 4 bits a pixel, one tRNS byte (the transparent entry first)
        #expect(type == 3 && depth == 4 && transparency == 1)
        let decoded = try PNGDecoder().decode(png, options: DecodingOptions()).image.convertedToRGBA()
        for y in 0..<30 {
            for x in 0..<40 where image[pixel: x, y] != decoded[pixel: x, y] {
                Issue.record("pixel \(x),\(y): \(image[pixel: x, y]) became \(decoded[pixel: x, y])")
                return
            }
        }
        // Smaller than the truecolor file
        #expect(png.count < (try PNGEncoder().encode(image, options: EncodingOptions())).count)
        // Opaque: no tRNS at all
        let opaque = try PNGEncoder(paletteColors: 256).encode(
            try bands(colors: 15, transparent: false), options: EncodingOptions())
        #expect(header(opaque).colorType == 3 && header(opaque).transparencyEntries == nil)
    }

    @Test func aPhotographIsDitheredOntoTheColourLimit() throws {
        let source = try PNGDecoder().decode(
            try Data(contentsOf: corpusURL("kodak/01.png")), options: DecodingOptions()
        ).image.convertedToRGBA()
        let photo = try source.resampled(to: PixelSize(width: 192, height: 128))
        let truecolor = try PNGEncoder().encode(photo, options: EncodingOptions())
        for colors in [256, 16] {
            let png = try PNGEncoder(paletteColors: colors).encode(photo, options: EncodingOptions())
            let decoded = try PNGDecoder().decode(png, options: DecodingOptions()).image.convertedToRGBA()
            var distinct = Set<UInt32>()
            for y in 0..<decoded.height {
                for x in 0..<decoded.width {
                    let p = decoded[pixel: x, y]
                    distinct.insert(UInt32(p.r) << 16 | UInt32(p.g) << 8 | UInt32(p.b))
                }
            }
            #expect(header(png).colorType == 3 && distinct.count <= colors, "\(colors)")
            let error = try #require(meanChannelError(photo, decoded))
            // Dithering keeps the mean error per channel small; far smaller files
            #expect(error < (colors == 256 ? 4.0 : 12.0), "\(colors): mean error \(error)")
            let ratio = Double(png.count) / Double(truecolor.count)
            #expect(ratio < 0.6, "\(colors): \(png.count) vs \(truecolor.count)")
        }
    }

    /// Kodak 01 at 192 × 128 under a soft round mask (``ImagoTesting/featheredCutOut(_:)``).
    func feathered() throws -> PixelBuffer {
        let source = try PNGDecoder().decode(
            try Data(contentsOf: corpusURL("kodak/01.png")), options: DecodingOptions()
        ).image.convertedToRGBA()
        return try ImagoTesting.featheredCutOut(try source.resampled(to: PixelSize(width: 192, height: 128)))
    }

    @Test func partialAlphaOverManyColoursIsQuantizedWithItsAlpha() throws {
        let image = try feathered()
        let truecolor = try PNGEncoder().encode(image, options: EncodingOptions())
        for colors in [256, 32] {
            let png = try PNGEncoder(paletteColors: colors).encode(image, options: EncodingOptions())
            let (_, type, transparency) = header(png)
            // A palette whose tRNS holds many alphas, not just the transparent entry
            #expect(
                type == 3 && (transparency ?? 0) > colors / 8, "\(colors): tRNS \(String(describing: transparency))")
            let decoded = try PNGDecoder().decode(png, options: DecodingOptions()).image.convertedToRGBA()
            var distinct = Set<RGBA>()
            var (alphaError, colourError, translucent) = (0.0, 0.0, 0)
            for y in 0..<128 {
                for x in 0..<192 {
                    let (was, now) = (image[pixel: x, y], decoded[pixel: x, y])
                    distinct.insert(now)
                    // Fully transparent and opaque pixels keep their alpha exactly
                    if was.a == 0 || was.a == 255 {
                        if now.a != was.a {
                            Issue.record("\(colors): pixel \(x),\(y) alpha \(was.a) became \(now.a)")
                            return
                        }
                    } else {
                        translucent += 1
                    }
                    alphaError += abs(Double(now.a) - Double(was.a))
                    // Colour as it shows: premultiplied
                    for (c, d) in [(was.r, now.r), (was.g, now.g), (was.b, now.b)] {
                        colourError += abs(Double(c) * Double(was.a) - Double(d) * Double(now.a)) / 255
                    }
                }
            }
            let area = Double(192 * 128)
            #expect(distinct.count <= colors && translucent > 3000)
            // Dithered: small mean errors in alpha and in premultiplied colour; the file far smaller
            #expect(alphaError / area < (colors == 256 ? 2 : 4), "\(colors): alpha error \(alphaError / area)")
            #expect(
                colourError / area / 3 < (colors == 256 ? 3 : 8), "\(colors): colour error \(colourError / area / 3)")
            #expect(Double(png.count) < 0.6 * Double(truecolor.count), "\(colors): \(png.count) vs \(truecolor.count)")
        }
        // Deterministic
        #expect(
            try PNGEncoder(paletteColors: 64).encode(image, options: EncodingOptions())
                == PNGEncoder(paletteColors: 64).encode(image, options: EncodingOptions()))
    }

    @Test func flatTranslucentAreasKeepTheirOwnEntry() throws {
        // Two flat translucent areas whose red differs by 128 (a quantizer that confused their nearest-entry
        // cells maps one onto the other's entry), beside a strip of 200 translucent colours that forces a cut
        var image = try PixelBuffer(width: 80, height: 50)
        for y in 0..<50 {
            for x in 0..<80 {
                image[pixel: x, y] =
                    y >= 40
                    ? RGBA(r: UInt8(x * 3), g: UInt8(y * 5), b: UInt8((x * 7 + y) % 256), a: UInt8(60 + (x + y) % 150))
                    : RGBA(r: x < 40 ? 4 : 132, g: 100, b: 100, a: 254)
            }
        }
        let png = try PNGEncoder(paletteColors: 16).encode(image, options: EncodingOptions())
        #expect(header(png).colorType == 3)
        let decoded = try PNGDecoder().decode(png, options: DecodingOptions()).image.convertedToRGBA()
        for (from, red) in [(0, 4), (40, 132)] {
            var close = 0
            for y in 0..<40 {
                for x in from..<(from + 40) {
                    let p = decoded[pixel: x, y]
                    if abs(Int(p.r) - red) <= 3, abs(Int(p.g) - 100) <= 3, abs(Int(p.a) - 254) <= 3 { close += 1 }
                }
            }
            #expect(close >= 1520, "red \(red): \(close) of 1600 pixels within 3 levels")
        }
    }

    @Test func fewRGBAColoursStayExactAndGrayStaysLossless() throws {
        let encoder = PNGEncoder(paletteColors: 16)
        // Soft edges over few colours: a palette with each entry's alpha, exactly (partial alpha first in tRNS)
        var icon = try bands(colors: 4, transparent: true)
        icon[pixel: 3, 3] = RGBA(r: 10, g: 20, b: 30, a: 128)
        icon[pixel: 4, 3] = RGBA(r: 10, g: 20, b: 30, a: 64)
        let palette = try encoder.encode(icon, options: EncodingOptions())
        #expect(header(palette).colorType == 3 && header(palette).transparencyEntries == 3)
        let decoded = try PNGDecoder().decode(palette, options: DecodingOptions()).image.convertedToRGBA()
        #expect(decoded.bytes == icon.bytes)
        let gray = try PixelBuffer(width: 8, height: 8, format: .gray8)
        #expect(
            try encoder.encode(gray, options: EncodingOptions())
                == PNGEncoder().encode(gray, options: EncodingOptions()))
        // Two colours at the least, and the setting names itself for cache keys
        #expect(PNGEncoder(paletteColors: 1).paletteColors == 2 && PNGEncoder(paletteColors: 999).paletteColors == 256)
        #expect(
            PNGEncoder(paletteColors: 64).settingsIdentifier == "palette=64;alpha"
                && PNGEncoder().settingsIdentifier == nil)
        let two = try PNGEncoder(paletteColors: 2).encode(
            try bands(colors: 8, transparent: true), options: EncodingOptions())
        #expect(header(two).bitDepth == 1)  // one colour and the transparent entry
        // Two colours for transparent, translucent and opaque pixels cannot keep opaque pixels opaque: truecolor
        // (found by the png-palette fuzz target)
        var three = try bands(colors: 8, transparent: true)
        three[pixel: 0, 0] = RGBA(r: 10, g: 20, b: 30, a: 128)
        let kept = try PNGEncoder(paletteColors: 2).encode(three, options: EncodingOptions())
        #expect(header(kept).colorType == 6)
        #expect(try PNGDecoder().decode(kept, options: DecodingOptions()).image.convertedToRGBA().bytes == three.bytes)
        #expect(header(try PNGEncoder(paletteColors: 3).encode(three, options: EncodingOptions())).colorType == 3)
    }
}
