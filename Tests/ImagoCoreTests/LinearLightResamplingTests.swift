import Foundation
import ImagoCore
import Testing

/// ``PixelBuffer/resampledInLinearLight(to:curve:)``: averages of light, not of sRGB values (imgproxy's
/// `IMGPROXY_USE_LINEAR_COLORSPACE`).
@Suite struct LinearLightResamplingTests {
    /// A `size` × `size` checkerboard of 1-pixel black and white squares.
    func checkerboard(_ size: Int, format: PixelBuffer.PixelFormat = .rgba8) throws -> PixelBuffer {
        let channels = format == .gray8 ? 1 : 4
        var bytes = [UInt8](repeating: 0, count: size * size * channels)
        for y in 0..<size {
            for x in 0..<size {
                let value: UInt8 = (x + y) % 2 == 0 ? 255 : 0
                for c in 0..<channels { bytes[(y * size + x) * channels + c] = c == 3 ? 255 : value }
            }
        }
        return try PixelBuffer(width: size, height: size, format: format, bytes: bytes)
    }

    @Test func halfTheLightIsSRGB188NotTheMeanOfTheValues() throws {
        for format in [PixelBuffer.PixelFormat.rgba8, .gray8] {
            let board = try checkerboard(8, format: format)
            let linear = try board.resampledInLinearLight(to: PixelSize(width: 2, height: 2))
            let values = try board.resampled(to: PixelSize(width: 2, height: 2))
            #expect(linear.format == format && linear[pixel: 1, 1].r == 188 && linear[pixel: 0, 0].g == 188)
            #expect(values[pixel: 1, 1].r == 128, "the sRGB average, for contrast")
        }
    }

    /// Another curve (ProPhoto's gamma 1.8): half the light is 0.5^(1/1.8) of full scale, 173.5, not sRGB's 188;
    /// the inverse table gives every value back; tables that are not curves are refused.
    @Test func anotherCurveAveragesItsOwnLight() throws {
        let gamma18 = try #require(TransferCurve(toLinear: (0..<256).map { Float(pow(Double($0) / 255, 1.8)) }))
        let half = try checkerboard(8).resampledInLinearLight(to: PixelSize(width: 2, height: 2), curve: gamma18)
        #expect([173, 174].contains(half[pixel: 1, 1].r) && half[pixel: 0, 0].g == half[pixel: 1, 1].r)
        for value in 0...255 {
            var image = try PixelBuffer(width: 4, height: 4)
            for y in 0..<4 { for x in 0..<4 { image[pixel: x, y] = RGBA(r: UInt8(value), g: 9, b: 200) } }
            let out = try image.resampledInLinearLight(to: PixelSize(width: 2, height: 2), curve: gamma18)
            #expect(out[pixel: 0, 0] == RGBA(r: UInt8(value), g: 9, b: 200), "\(value)")
        }
        #expect(TransferCurve(toLinear: [0, 1]) == nil)
        #expect(TransferCurve(toLinear: (0..<256).map { Float(255 - $0) / 255 }) == nil, "decreasing")
        #expect(TransferCurve(toLinear: (0..<256).map { _ in Float.nan }) == nil)
        // sRGB's own table through the general inverse: the same encoding
        let rebuilt = try #require(TransferCurve(toLinear: TransferCurve.sRGB.toLinear))
        let board = try checkerboard(8)
        #expect(
            try board.resampledInLinearLight(to: PixelSize(width: 3, height: 3), curve: rebuilt)
                == board.resampledInLinearLight(to: PixelSize(width: 3, height: 3)))
    }

    @Test func uniformImagesStayExactlyTheirColour() throws {
        for value in 0...255 {
            var image = try PixelBuffer(width: 5, height: 3)
            for y in 0..<3 {
                for x in 0..<5 { image[pixel: x, y] = RGBA(r: UInt8(value), g: 7, b: UInt8(255 - value)) }
            }
            for size in [PixelSize(width: 2, height: 2), PixelSize(width: 11, height: 7)] {
                let out = try image.resampledInLinearLight(to: size)
                #expect(out[pixel: 1, 1] == RGBA(r: UInt8(value), g: 7, b: UInt8(255 - value)), "\(value) \(size)")
                #expect(out.isKnownOpaque)
            }
        }
    }

    @Test func transparentPixelsDoNotBleedTheirColour() throws {
        var image = try PixelBuffer(width: 2, height: 1)
        image[pixel: 0, 0] = RGBA(r: 255, g: 0, b: 0, a: 255)
        image[pixel: 1, 0] = RGBA(r: 0, g: 255, b: 0, a: 0)
        let out = try image.resampledInLinearLight(to: PixelSize(width: 1, height: 1))
        #expect(out[pixel: 0, 0] == RGBA(r: 255, g: 0, b: 0, a: 128))
    }

    @Test func aPhotoChangesLittleAndOnlyWhereDetailIsFine() throws {
        // A smooth gradient: both ways within a level or two; the checkerboard above shows where they part
        var gradient = try PixelBuffer(width: 64, height: 64)
        for y in 0..<64 { for x in 0..<64 { gradient[pixel: x, y] = RGBA(r: UInt8(4 * x), g: UInt8(4 * y), b: 90) } }
        let size = PixelSize(width: 16, height: 16)
        let (linear, values) = (try gradient.resampledInLinearLight(to: size), try gradient.resampled(to: size))
        for y in 0..<16 {
            for x in 0..<16 {
                let (a, b) = (linear[pixel: x, y], values[pixel: x, y])
                #expect(abs(Int(a.r) - Int(b.r)) <= 2 && abs(Int(a.g) - Int(b.g)) <= 2 && a.b == b.b, "\(x),\(y)")
            }
        }
    }
}
