@testable import ImagoCore

/// Small images built pixel by pixel for processor tests.
enum TestImages {
    static func rgba(_ width: Int, _ height: Int, _ pixel: (Int, Int) -> RGBA) throws -> PixelBuffer {
        var image = try PixelBuffer(width: width, height: height, format: .rgba8)
        for y in 0..<height { for x in 0..<width { image[pixel: x, y] = pixel(x, y) } }
        return image
    }

    static func gray(_ width: Int, _ height: Int, _ value: (Int, Int) -> UInt8) throws -> PixelBuffer {
        var bytes: [UInt8] = []
        for y in 0..<height { for x in 0..<width { bytes.append(value(x, y)) } }
        return try PixelBuffer(width: width, height: height, format: .gray8, bytes: bytes)
    }

    static func uniform(_ width: Int, _ height: Int, _ color: RGBA) throws -> PixelBuffer {
        try rgba(width, height) { _, _ in color }
    }
}
