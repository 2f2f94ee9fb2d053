import Testing

@testable import ImagoCore

@Suite struct ProcessorCropTests {
    // 10x8 gray, each pixel unique: value = 10 y + x
    let image = try! TestImages.gray(10, 8) { x, y in UInt8(10 * y + x) }

    @Test func cutsOutTheRectangle() throws {
        let out = try ImageProcessors.Crop(x: 2, y: 3, width: 4, height: 2).process(image)
        #expect(out.size == PixelSize(width: 4, height: 2))
        #expect(out.bytes == [32, 33, 34, 35, 42, 43, 44, 45])
    }

    @Test func keepsRGBAPixelsWhole() throws {
        let rgba = try TestImages.rgba(3, 3) { x, y in RGBA(r: UInt8(x), g: UInt8(y), b: 7, a: UInt8(100 + x + y)) }
        let out = try ImageProcessors.Crop(x: 1, y: 1, width: 2, height: 2).process(rgba)
        for y in 0..<2 { for x in 0..<2 { #expect(out[pixel: x, y] == rgba[pixel: x + 1, y + 1]) } }
    }

    @Test func clampsARectangleReachingOutsideTheImage() throws {
        // Negative origin: the top-left 3x2 survives
        let a = try ImageProcessors.Crop(x: -2, y: -1, width: 5, height: 3).process(image)
        #expect(a.size == PixelSize(width: 3, height: 2))
        #expect(a.bytes == [0, 1, 2, 10, 11, 12])
        // Past the far edges: clamped to the bottom-right corner
        let b = try ImageProcessors.Crop(x: 8, y: 6, width: 100, height: 100).process(image)
        #expect(b.bytes == [68, 69, 78, 79])
        // Sizes that would overflow an addition are clamped too
        let c = try ImageProcessors.Crop(x: 9, y: 7, width: .max, height: .max).process(image)
        #expect(c.bytes == [79])
    }

    @Test func wholeImageCropReturnsTheSamePixels() throws {
        #expect(try ImageProcessors.Crop(x: 0, y: 0, width: 10, height: 8).process(image) == image)
    }

    @Test func rejectsAnEmptyRectangle() {
        #expect(throws: ImageProcessors.Error.invalidCropSize(width: 0, height: 3)) {
            try ImageProcessors.Crop(x: 0, y: 0, width: 0, height: 3).process(image)
        }
    }

    @Test(arguments: [(10, 0), (0, 8), (-5, 0), (Int.min, Int.min), (Int.max, 0)])
    func rejectsARectangleThatMissesTheImage(x: Int, y: Int) {
        #expect(throws: ImageProcessors.Error.cropOutsideImage(x: x, y: y, width: 5, height: 5, image: image.size)) {
            try ImageProcessors.Crop(x: x, y: y, width: 5, height: 5).process(image)
        }
    }
}
