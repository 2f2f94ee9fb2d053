import Testing

@testable import ImagoCore

@Suite struct ProcessorGeometryTests {
    // A 3x2 gray image:   1 2 3
    //                     4 5 6
    let image = try! PixelBuffer(width: 3, height: 2, format: .gray8, bytes: [1, 2, 3, 4, 5, 6])

    @Test(arguments: [
        (90, 2, [4, 1, 5, 2, 6, 3] as [UInt8]),
        (180, 3, [6, 5, 4, 3, 2, 1]),
        (270, 2, [3, 6, 2, 5, 1, 4]),
        (-90, 2, [3, 6, 2, 5, 1, 4]),
        (450, 2, [4, 1, 5, 2, 6, 3]),
        (0, 3, [1, 2, 3, 4, 5, 6]),
        (360, 3, [1, 2, 3, 4, 5, 6]),
    ])
    func rotatesClockwiseByQuarterTurns(degrees: Int, width: Int, expected: [UInt8]) throws {
        let out = try ImageProcessors.Rotate(degrees: degrees).process(image)
        #expect(out.width == width)
        #expect(out.height == 6 / width)
        #expect(out.bytes == expected)
    }

    @Test func rotatingRGBAMovesWholePixels() throws {
        let rgba = try TestImages.rgba(3, 2) { x, y in RGBA(r: UInt8(x), g: UInt8(y), b: 100, a: UInt8(10 * x + y)) }
        let out = try ImageProcessors.Rotate(degrees: 90).process(rgba)
        // Clockwise: output (x, y) comes from input (y, h − 1 − x)
        for y in 0..<3 { for x in 0..<2 { #expect(out[pixel: x, y] == rgba[pixel: y, 1 - x]) } }
    }

    @Test(arguments: [45, 1, -100])
    func rejectsAnglesThatAreNotQuarterTurns(degrees: Int) {
        #expect(throws: ImageProcessors.Error.invalidRotation(degrees: degrees)) {
            try ImageProcessors.Rotate(degrees: degrees).process(image)
        }
    }

    @Test func flipsHorizontallyAndVertically() throws {
        #expect(try ImageProcessors.Flip(.horizontal).process(image).bytes == [3, 2, 1, 6, 5, 4])
        #expect(try ImageProcessors.Flip(.vertical).process(image).bytes == [4, 5, 6, 1, 2, 3])
        let twice = try ImageProcessors.Flip(.horizontal).process(ImageProcessors.Flip(.horizontal).process(image))
        #expect(twice == image)
    }
}
