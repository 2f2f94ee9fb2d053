import Foundation
import ImagoCodecs
import ImagoCore
import Testing

/// `PNGEncoder(interlaced: true)`: Adam7 PNGs (imgproxy's `IMGPROXY_PNG_INTERLACED`) with the same chunks and
/// pixels as the sequential files.
@Suite("PNGEncoder: interlaced output")
struct PNGInterlacedEncoderTests {
    /// The chunk types of `png`, in order, with runs of `IDAT` counted once.
    func chunkTypes(_ png: Data) -> [String] {
        let bytes = [UInt8](png)
        var types: [String] = []
        var at = 8
        while at + 8 <= bytes.count {
            let length = Int(bytes[at]) << 24 | Int(bytes[at + 1]) << 16 | Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
            let type = String(decoding: bytes[(at + 4)..<(at + 8)], as: UTF8.self)
            if type != "IDAT" || types.last != "IDAT" { types.append(type) }
            at += 12 + length
        }
        return types
    }

    func decoded(_ png: Data) throws -> PixelBuffer {
        try PNGDecoder().decode(png, options: DecodingOptions()).image
    }

    /// A Kodak photograph at 123 × 77 (odd sizes leave Adam7's last passes partly empty), its right third fading
    /// out when `alpha`, its green channel as gray when `gray`.
    func photo(alpha: Bool, gray: Bool = false) throws -> PixelBuffer {
        let source = try PNGDecoder().decode(try corpusData("kodak/01.png"), options: DecodingOptions()).image
        var image = try source.convertedToRGBA().resampled(to: PixelSize(width: 123, height: 77))
        if alpha {
            for y in 0..<77 {
                for x in 82..<123 {
                    var p = image[pixel: x, y]
                    p.a = UInt8((122 - x) * 255 / 40)
                    image[pixel: x, y] = p
                }
            }
        }
        guard gray else { return image }
        let rgba = image
        return try PixelBuffer(width: 123, height: 77, format: .gray8) { out in
            for i in 0..<(123 * 77) { out[i] = rgba.bytes[i * 4 + 1] }
        }
    }

    @Test(arguments: ["gray", "rgb", "rgba", "palette"])
    func interlacedFilesDecodeToTheSamePixelsAsSequentialOnes(_ kind: String) throws {
        let image = try photo(alpha: kind == "rgba" || kind == "palette", gray: kind == "gray")
        let colors = kind == "palette" ? 64 : nil
        let sequential = try PNGEncoder(paletteColors: colors).encode(image, options: EncodingOptions())
        let interlaced = try PNGEncoder(paletteColors: colors, interlaced: true).encode(
            image, options: EncodingOptions())
        // IHDR: same depth and colour type; interlace method 1 (Adam7) instead of 0
        #expect(Array(interlaced[16..<28]) == Array(sequential[16..<28]))
        #expect(sequential[28] == 0 && interlaced[28] == 1)
        let expectedType: UInt8 = ["gray": 0, "rgb": 2, "rgba": 6, "palette": 3][kind]!
        #expect(interlaced[25] == expectedType)
        // The same chunks (sRGB, and PLTE and tRNS for a palette), in the same order
        #expect(chunkTypes(interlaced) == chunkTypes(sequential))
        #expect(chunkTypes(interlaced).contains("sRGB"))
        // libpng de-interlaces it to exactly the pixels of the sequential file
        #expect(try decoded(interlaced) == decoded(sequential))
        if kind != "palette" {
            #expect(try decoded(interlaced) == image, "lossless")
        }
        // Adam7 costs bytes, but not many: filters work on shorter rows of pixels farther apart
        #expect(interlaced.count > sequential.count && interlaced.count < sequential.count * 3 / 2)
    }

    @Test func colourProfilesAndMetadataAreWrittenIntoInterlacedFilesToo() throws {
        let profileSource = try PNGDecoder().decode(
            try corpusData("icc/gen-kodim03-displayp3-v4.png"),
            options: {
                var o = DecodingOptions(); o.colorPolicy = .keep; return o
            }())
        let profile = try #require(profileSource.colorProfile)
        var options = EncodingOptions(colorProfile: profile)
        options.metadata = ImageMetadata(xmp: Data("<x:xmpmeta xmlns:x='adobe:ns:meta/'/>".utf8))
        let png = try PNGEncoder(interlaced: true).encode(try photo(alpha: false), options: options)
        #expect(png[28] == 1)
        #expect(chunkTypes(png).prefix(4) == ["IHDR", "iCCP", "iTXt", "IDAT"], "the profile replaces sRGB")
        var keep = DecodingOptions()
        keep.colorPolicy = .keep
        keep.readsMetadata = true
        let again = try PNGDecoder().decode(png, options: keep)
        #expect(again.colorProfile?.data == profile.data)
        #expect(again.metadata?.xmp == options.metadata?.xmp)
    }

    @Test func aOnePixelImageAndTheIdentifiers() throws {
        var dot = try PixelBuffer(width: 1, height: 1)
        dot[pixel: 0, 0] = RGBA(r: 10, g: 20, b: 30, a: 255)
        let png = try PNGEncoder(interlaced: true).encode(dot, options: EncodingOptions())
        let back = try decoded(png).convertedToRGBA()
        #expect(png[28] == 1 && back[pixel: 0, 0] == dot[pixel: 0, 0])
        #expect(PNGEncoder().settingsIdentifier == nil)
        #expect(PNGEncoder(interlaced: true).settingsIdentifier == "adam7")
        #expect(PNGEncoder(paletteColors: 64, interlaced: true).settingsIdentifier == "palette=64;alpha;adam7")
    }
}
