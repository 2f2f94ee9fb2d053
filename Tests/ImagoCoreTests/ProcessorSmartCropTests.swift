import Testing

@testable import ImagoCore

@Suite struct ProcessorSmartCropTests {
    /// A flat gray `width` × `height` image with a black-and-white checkerboard of 2-pixel squares over `detail`.
    func gray(_ width: Int, _ height: Int, detail: Range<Int>, rows: Range<Int>? = nil) throws -> PixelBuffer {
        try TestImages.rgba(width, height) { x, y in
            guard detail.contains(x), rows?.contains(y) ?? true else { return RGBA(r: 128, g: 128, b: 128) }
            let v: UInt8 = (x / 2 + y / 2) % 2 == 0 ? 0 : 255
            return RGBA(r: v, g: v, b: v)
        }
    }

    @Test func keepsTheWindowWithTheDetail() throws {
        let image = try gray(200, 100, detail: 150..<200)
        let origin = try ImageProcessors.SmartCrop.origin(of: PixelSize(width: 100, height: 100), in: image)
        #expect(origin.x == 100 && origin.y == 0)
        let cropped = try ImageProcessors.SmartCrop(width: 100, height: 100).process(image)
        #expect(cropped.size == PixelSize(width: 100, height: 100) && cropped[pixel: 99, 0] == image[pixel: 199, 0])
        let tall = try gray(60, 300, detail: 0..<60, rows: 10..<40)
        #expect(try ImageProcessors.SmartCrop.origin(of: PixelSize(width: 60, height: 60), in: tall).y <= 10)
    }

    @Test func keepsSkinTonesOverFlatColour() throws {
        let image = try TestImages.rgba(300, 100) { x, _ in
            x < 60 ? RGBA(r: 224, g: 172, b: 140) : RGBA(r: 90, g: 120, b: 200)
        }
        #expect(try ImageProcessors.SmartCrop.origin(of: PixelSize(width: 100, height: 100), in: image).x == 0)
    }

    @Test func aFeaturelessImageIsCroppedInTheMiddleAndSizesAreClamped() throws {
        let flat = try TestImages.uniform(201, 99, RGBA(r: 10, g: 200, b: 30))
        #expect(try ImageProcessors.SmartCrop.origin(of: PixelSize(width: 101, height: 99), in: flat) == (50, 0))
        #expect(try ImageProcessors.SmartCrop(width: 500, height: 500).process(flat) == flat)
        let gray = try TestImages.gray(40, 20) { x, _ in x >= 30 ? UInt8((x % 2) * 255) : 100 }
        let cut = try ImageProcessors.SmartCrop(width: 20, height: 20).process(gray)
        // The window over columns 20…39: the detailed ones and nothing left of them
        #expect(cut.format == .gray8 && (0..<20).allSatisfy { cut.bytes[$0 * 20] == gray.bytes[$0 * 40 + 20] })
        #expect(cut.bytes[19] == gray.bytes[39])
        #expect(throws: ImageProcessors.Error.self) { try ImageProcessors.SmartCrop(width: 0, height: 5).process(flat) }
    }

    @Test func largeImagesAreScoredOnASmallerCopy() throws {
        let image = try gray(1600, 900, detail: 1300..<1600, rows: 600..<900)
        let origin = try ImageProcessors.SmartCrop.origin(of: PixelSize(width: 400, height: 400), in: image)
        #expect(origin.x >= 1180 && origin.y >= 480)
    }
}
