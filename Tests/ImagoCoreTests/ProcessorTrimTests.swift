import Testing

@testable import ImagoCore

@Suite struct ProcessorTrimTests {
    let white = RGBA(r: 255, g: 255, b: 255)
    let red = RGBA(r: 200, g: 0, b: 0)

    /// A `width` × `height` image of `border` with `content` over `columns` × `rows`.
    func framed(
        _ width: Int, _ height: Int, columns: Range<Int>, rows: Range<Int>, border: RGBA, content: RGBA
    ) throws -> PixelBuffer {
        try TestImages.rgba(width, height) { x, y in columns.contains(x) && rows.contains(y) ? content : border }
    }

    @Test func cutsTheBorderOfTheTopLeftColour() throws {
        let image = try framed(20, 10, columns: 3..<15, rows: 2..<9, border: white, content: red)
        let out = try ImageProcessors.Trim().process(image)
        #expect(out.size == PixelSize(width: 12, height: 7) && out[pixel: 0, 0] == red && out[pixel: 11, 6] == red)
        // Noise within the threshold is background, beyond it content
        var noisy = image
        noisy[pixel: 0, 9] = RGBA(r: 250, g: 250, b: 250)
        #expect(try ImageProcessors.Trim(threshold: 10).process(noisy).size == PixelSize(width: 12, height: 7))
        #expect(try ImageProcessors.Trim(threshold: 2).process(noisy).size == PixelSize(width: 15, height: 8))
    }

    @Test func evensTheSidesAndTakesAGivenColour() throws {
        let image = try framed(20, 10, columns: 3..<15, rows: 2..<9, border: white, content: red)
        #expect(try ImageProcessors.Trim(equalHorizontal: true).process(image).size == PixelSize(width: 14, height: 7))
        #expect(try ImageProcessors.Trim(equalVertical: true).process(image).size == PixelSize(width: 12, height: 8))
        // Red as the background: everything is red or white, and white is the content
        let inverse = try ImageProcessors.Trim(color: red).process(image)
        #expect(inverse == image)
        let plain = try TestImages.uniform(5, 5, white)
        #expect(try ImageProcessors.Trim().process(plain) == plain)  // nothing but background: unchanged
    }

    @Test func aTransparentBorderIsFoundByAlphaAlone() throws {
        // Transparent pixels of varying colour around an opaque block
        let image = try TestImages.rgba(10, 10) { x, y in
            (4..<7).contains(x) && (2..<5).contains(y)
                ? RGBA(r: 0, g: 0, b: 0) : RGBA(r: UInt8(x * 20), g: 9, b: 0, a: 0)
        }
        #expect(try ImageProcessors.Trim().process(image).size == PixelSize(width: 3, height: 3))
        let gray = try TestImages.gray(6, 4) { x, y in x == 4 && y == 1 ? 0 : 200 }
        let cut = try ImageProcessors.Trim().process(gray)
        #expect(cut.format == .gray8 && cut.size == PixelSize(width: 1, height: 1) && cut.bytes == [0])
    }
}
