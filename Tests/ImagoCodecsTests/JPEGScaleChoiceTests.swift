import Foundation
import ImagoCore
import Testing

@testable import ImagoCodecs

@Suite("JPEGDecoder: DCT scaling picks the power-of-two scale that covers the target")
struct JPEGScaleChoiceTests {
    @Test(arguments: [
        // full, target, expected: 1/2 rather than 3/8, 1/1 rather than 3/4, 1/4 where it covers, 1/2 for 5/8's case
        (PixelSize(width: 768, height: 512), PixelSize(width: 256, height: 171), PixelSize(width: 384, height: 256)),
        (PixelSize(width: 384, height: 256), PixelSize(width: 256, height: 171), PixelSize(width: 384, height: 256)),
        (PixelSize(width: 1152, height: 768), PixelSize(width: 256, height: 171), PixelSize(width: 288, height: 192)),
        (PixelSize(width: 960, height: 640), PixelSize(width: 256, height: 171), PixelSize(width: 480, height: 320)),
        (PixelSize(width: 4000, height: 3000), PixelSize(width: 500, height: 375), PixelSize(width: 500, height: 375)),
    ])
    func powerOfTwoScales(full: PixelSize, target: PixelSize, expected: PixelSize) {
        #expect(JPEGDecoder.scaledSize(of: full, covering: target) == expected)
    }

    @Test func theSmallestCoveringScaleWhenThePowerOfTwoIsNotAllowed() {
        let full = PixelSize(width: 768, height: 512)
        let target = PixelSize(width: 256, height: 171)
        // 1/2 (384 × 256) refused, e.g. over the pixel limit: 3/8 (288 × 192) still covers the target
        let scaled = JPEGDecoder.scaledSize(of: full, covering: target) { $0.pixelCount < 384 * 256 }
        #expect(scaled == PixelSize(width: 288, height: 192))
    }

    @Test func decodesToTheFittedSizeThroughTheLargerScale() throws {
        var image = try PixelBuffer(width: 768, height: 512)
        for y in 0..<512 {
            for x in 0..<768 { image[pixel: x, y] = RGBA(r: UInt8(x / 3), g: UInt8(y / 2), b: 128, a: 255) }
        }
        let jpeg = try JPEGEncoder().encode(image, options: EncodingOptions(quality: 0.9))
        var options = DecodingOptions()
        options.targetSize = PixelSize(width: 256, height: 256)
        let decoded = try JPEGDecoder().decode(jpeg, options: options).image
        #expect(decoded.size == PixelSize(width: 256, height: 171))
        // The gradient survives the 1/2 DCT scale and the area average to within JPEG's error
        let pixel = decoded[pixel: 128, 85]
        #expect(abs(Int(pixel.r) - 128) <= 6 && abs(Int(pixel.g) - 128) <= 6 && abs(Int(pixel.b) - 128) <= 6)
    }
}
