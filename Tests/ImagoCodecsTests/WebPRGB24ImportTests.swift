import Foundation
import ImagoCore
import Testing

@testable import ImagoCodecs

/// Opaque images reach libwebp as RGB (its vector converters) rather than RGBA (its scalar loop): the same bytes.
@Suite struct WebPRGB24ImportTests {
    @Test func anOpaqueImageEncodesToTheSameBytesEitherWay() throws {
        // Kodak photos at odd and even sizes (the last row and column take their own paths), gray and colour,
        // at the serve default quality and a low one, and every method
        var images: [PixelBuffer] = []
        for name in ["01", "13", "23"] {
            let photo = try PNGDecoder().decode(try corpusData("kodak/\(name).png"), options: DecodingOptions()).image
            images.append(try photo.resampled(to: PixelSize(width: 256, height: 171)))
            images.append(try photo.resampled(to: PixelSize(width: 97, height: 63)))
        }
        images.append(
            try PNGDecoder().decode(try corpusData("pngsuite/png/basn0g08.png"), options: DecodingOptions()).image)
        for (index, image) in images.enumerated() {
            #expect(!image.hasTransparency)
            for (quality, method) in [(0.8, 4), (0.3, 0), (0.9, 6)] {
                let encoder = WebPEncoder(method: method)
                let options = EncodingOptions(quality: quality)
                let rgb = try encoder.encode(image, options: options, importsRGB24: true)
                let rgba = try encoder.encode(image, options: options, importsRGB24: false)
                #expect(rgb == rgba, "image \(index), q \(quality), method \(method)")
            }
        }
    }

    @Test func anImageWithTransparencyStillGoesAsRGBA() throws {
        // One pixel below 255 keeps the alpha plane
        var image = try PixelBuffer(width: 8, height: 8, format: .rgba8) { out in
            for i in 0..<out.count { out[i] = i % 4 == 3 ? 255 : UInt8(i % 200) }
        }
        image[pixel: 3, 3] = RGBA(r: 10, g: 20, b: 30, a: 128)
        let decoded = try WebPDecoder().decode(
            try WebPEncoder().encode(image, options: EncodingOptions(quality: 0.9)), options: DecodingOptions()
        ).image
        #expect(decoded.hasTransparency)
    }
}
