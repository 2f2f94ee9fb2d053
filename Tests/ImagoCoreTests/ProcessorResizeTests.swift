import Testing

@testable import ImagoCore

@Suite struct ProcessorResizeTests {
    @Test func aspectFitKeepsTheRatioInsideTheTarget() throws {
        // Given landscape and portrait images
        let landscape = try PixelBuffer(width: 768, height: 512)
        let portrait = try PixelBuffer(width: 100, height: 300)
        // When fitted into 256x256 and 50x50
        let a = try ImageProcessors.Resize(size: PixelSize(width: 256, height: 256)).process(landscape)
        let b = try ImageProcessors.Resize(size: PixelSize(width: 50, height: 50)).process(portrait)
        // Then the long side matches the target and the short side keeps the ratio, rounded (170.67 → 171)
        #expect(a.size == PixelSize(width: 256, height: 171))
        #expect(b.size == PixelSize(width: 17, height: 50))
    }

    @Test func aspectFillCoversTheTargetThenCropsTheCentre() throws {
        // Given an 8x4 gray ramp whose 2x2 block means are whole numbers
        let image = try TestImages.gray(8, 4) { x, y in UInt8(10 * x + 40 * y) }
        // When filled into 2x2 (scale 1/2 to 4x2, then the centre 2 columns of 4)
        let out = try ImageProcessors.Resize(size: PixelSize(width: 2, height: 2), mode: .aspectFill).process(image)
        // Then each pixel is the mean of the source block under scaled column 1 + i, row j
        #expect(out.size == PixelSize(width: 2, height: 2))
        var expected: [UInt8] = []
        for j in 0..<2 {
            for i in 0..<2 {
                let sx = 2 * (1 + i)
                let sy = 2 * j
                let sum = [(0, 0), (1, 0), (0, 1), (1, 1)].reduce(0) { $0 + 10 * (sx + $1.0) + 40 * (sy + $1.1) }
                expected.append(UInt8(sum / 4))
            }
        }
        #expect(out.bytes == expected)
    }

    @Test func exactStretchesToTheTarget() throws {
        // Given a 4x2 gray image
        let image = try TestImages.gray(4, 2) { x, y in UInt8(10 * x + 100 * y) }
        // When stretched to 2x2 (halved horizontally only)
        let out = try ImageProcessors.Resize(size: PixelSize(width: 2, height: 2), mode: .exact).process(image)
        // Then columns are averaged in pairs and rows kept
        #expect(out.bytes == [5, 25, 105, 125])
    }

    @Test func neverUpscalesUnlessAllowed() throws {
        let image = try TestImages.gray(50, 40) { x, y in UInt8((x + y) % 256) }
        let fit = try ImageProcessors.Resize(size: PixelSize(width: 100, height: 100)).process(image)
        #expect(fit == image)
        let fitUp = try ImageProcessors.Resize(size: PixelSize(width: 100, height: 100), allowsUpscaling: true)
            .process(image)
        #expect(fitUp.size == PixelSize(width: 100, height: 80))
        // A fill that would need enlarging only crops the centre: 30 of 50 columns from x = 10
        let fill = try ImageProcessors.Resize(size: PixelSize(width: 30, height: 60), mode: .aspectFill).process(image)
        #expect(fill.size == PixelSize(width: 30, height: 40))
        #expect(fill[pixel: 0, 0] == image[pixel: 10, 0])
        #expect(fill[pixel: 29, 39] == image[pixel: 39, 39])
        let exact = try ImageProcessors.Resize(size: PixelSize(width: 100, height: 20), mode: .exact).process(image)
        #expect(exact.size == PixelSize(width: 50, height: 20))
        let fillUp = try ImageProcessors.Resize(
            size: PixelSize(width: 100, height: 100), mode: .aspectFill, allowsUpscaling: true
        ).process(image)
        #expect(fillUp.size == PixelSize(width: 100, height: 100))
    }

    @Test func averagesPremultipliedSoTransparentColourDoesNotBleed() throws {
        // Given opaque red on the left half and fully transparent green on the right
        let image = try TestImages.rgba(4, 2) { x, _ in
            x < 2 ? RGBA(r: 255, g: 0, b: 0, a: 255) : RGBA(r: 0, g: 255, b: 0, a: 0)
        }
        // When shrunk to one pixel
        let out = try ImageProcessors.Resize(size: PixelSize(width: 1, height: 1), mode: .exact).process(image)
        // Then it is half-transparent pure red
        #expect(out[pixel: 0, 0] == RGBA(r: 255, g: 0, b: 0, a: 128))
    }

    @Test func maxDimensionBoundsTheLongerSide() throws {
        let image = try PixelBuffer(width: 300, height: 120)
        let out = try ImageProcessors.Resize.resize(maxDimension: 100).process(image)
        #expect(out.size == PixelSize(width: 100, height: 40))
        #expect(
            ImageProcessors.Resize.resize(maxDimension: 100).identifier == "imago.resize?w=100&h=100&mode=fit&upscale=0"
        )
    }

    @Test(arguments: [(0, 10), (10, 0), (-1, 5)])
    func rejectsAnEmptyTarget(width: Int, height: Int) throws {
        let image = try PixelBuffer(width: 4, height: 4)
        #expect(throws: ImageProcessors.Error.invalidTargetSize(width: width, height: height)) {
            try ImageProcessors.Resize(size: PixelSize(width: width, height: height)).process(image)
        }
    }
}

extension ProcessorResizeTests {
    @Test("Issue 23 item 10: fill without crop scales to cover and keeps the whole image")
    func fillWithoutCrop() throws {
        let image = try TestImages.uniform(640, 480, RGBA(r: 200, g: 100, b: 50, a: 255))

        let out = try ImageProcessors.Resize(
            size: PixelSize(width: 400, height: 400), mode: .aspectFillWithoutCrop
        ).process(image)
        let small = try ImageProcessors.Resize(
            size: PixelSize(width: 800, height: 800), mode: .aspectFillWithoutCrop
        ).process(image)
        let upscaled = try ImageProcessors.Resize(
            size: PixelSize(width: 800, height: 800), mode: .aspectFillWithoutCrop, allowsUpscaling: true
        ).process(image)

        #expect(out.size == PixelSize(width: 533, height: 400))
        #expect(out[pixel: 266, 200] == RGBA(r: 200, g: 100, b: 50, a: 255))
        #expect(small.size == PixelSize(width: 640, height: 480))
        #expect(upscaled.size == PixelSize(width: 1067, height: 800))
        #expect(
            ImageProcessors.Resize(size: PixelSize(width: 4, height: 4), mode: .aspectFillWithoutCrop).identifier
                == "imago.resize?w=4&h=4&mode=fill-nocrop&upscale=0")
    }
}
