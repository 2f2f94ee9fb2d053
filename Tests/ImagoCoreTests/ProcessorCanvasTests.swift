import Testing

@testable import ImagoCore

@Suite struct ProcessorCanvasTests {
    let red = RGBA(r: 255, g: 0, b: 0)
    let white = RGBA(r: 255, g: 255, b: 255)
    let clear = RGBA(r: 0, g: 0, b: 0, a: 0)

    @Test func placesTheImageAndFillsTheRest() throws {
        let image = try TestImages.rgba(2, 2) { x, y in RGBA(r: UInt8(x * 100), g: UInt8(y * 100), b: 7) }
        let out = try ImageProcessors.Canvas(width: 5, height: 4, x: 2, y: 1, fill: white).process(image)
        #expect(out.size == PixelSize(width: 5, height: 4))
        for y in 0..<4 {
            for x in 0..<5 {
                let inside = (2..<4).contains(x) && (1..<3).contains(y)
                let expected = inside ? image[pixel: x - 2, y - 1] : white
                #expect(out[pixel: x, y] == expected, "(\(x), \(y))")
            }
        }
        #expect(out.isKnownOpaque == false)  // the input was not marked
        #expect(try ImageProcessors.Canvas(width: 5, height: 4, x: 2, y: 1).process(image)[pixel: 0, 0] == clear)
    }

    @Test func cutsWhatFallsOutsideAndSurvivesHugeOffsets() throws {
        let image = try TestImages.rgba(4, 4) { x, y in RGBA(r: UInt8(x), g: UInt8(y), b: 0) }
        let cut = try ImageProcessors.Canvas(width: 3, height: 3, x: -2, y: -1).process(image)
        #expect(cut[pixel: 0, 0] == image[pixel: 2, 1] && cut[pixel: 1, 2] == image[pixel: 3, 3])
        #expect(cut[pixel: 2, 0] == clear)
        for (x, y) in [(Int.max, 0), (Int.min, 0), (0, Int.max), (0, Int.min), (3, 3), (-4, 0)] {
            let out = try ImageProcessors.Canvas(width: 3, height: 3, x: x, y: y, fill: red).process(image)
            #expect(out.size == PixelSize(width: 3, height: 3))
            #expect(out[pixel: 2, 2] == (x == 0 && y == 0 ? image[pixel: 2, 2] : red))
        }
        #expect(throws: ImageProcessors.Error.self) {
            try ImageProcessors.Canvas(width: 0, height: 3, x: 0, y: 0).process(image)
        }
    }

    @Test func grayAndPremultipliedInputComeOutStraightRGBA() throws {
        let gray = try TestImages.gray(1, 1) { _, _ in 90 }
        let out = try ImageProcessors.Canvas(width: 2, height: 1, x: 1, y: 0, fill: red).process(gray)
        #expect(out.format == .rgba8 && out[pixel: 1, 0] == RGBA(r: 90, g: 90, b: 90) && out[pixel: 0, 0] == red)
        #expect(out.isKnownOpaque)  // opaque image, opaque fill
        let half = try TestImages.uniform(1, 1, RGBA(r: 200, g: 100, b: 0, a: 128)).premultiplied()
        let placed = try ImageProcessors.Canvas(width: 1, height: 1, x: 0, y: 0).process(half)
        #expect(placed.alphaMode == .straight && placed == half.unpremultiplied())
    }

    @Test func backgroundFlattensOverAnOpaqueColourAndComposesOverATranslucentOne() throws {
        let image = try TestImages.rgba(3, 1) { x, _ in
            [RGBA(r: 0, g: 0, b: 255, a: 0), RGBA(r: 0, g: 0, b: 255, a: 51), RGBA(r: 0, g: 0, b: 255, a: 255)][x]
        }
        let flat = try ImageProcessors.Background(color: white).process(image)
        #expect(flat.isKnownOpaque)
        #expect(flat[pixel: 0, 0] == white)
        #expect(flat[pixel: 1, 0] == RGBA(r: 204, g: 204, b: 255))  // 255 × 0.8 over, blue 255 either way
        #expect(flat[pixel: 2, 0] == RGBA(r: 0, g: 0, b: 255))
        // Half-transparent red behind: alpha 0.2 + 0.5 × 0.8 = 0.6; red (255 × 0.4) / 0.6, blue (255 × 0.2) / 0.6
        let over = try ImageProcessors.Background(color: RGBA(r: 255, g: 0, b: 0, a: 128)).process(image)
        let mixed = over[pixel: 1, 0]
        #expect(abs(Int(mixed.a) - 153) <= 1 && abs(Int(mixed.r) - 170) <= 1 && abs(Int(mixed.b) - 85) <= 1)
        #expect(over[pixel: 0, 0] == RGBA(r: 255, g: 0, b: 0, a: 128))
        let opaque = try TestImages.uniform(2, 2, red).assumingOpaque()
        #expect(try ImageProcessors.Background(color: white).process(opaque) == opaque)
    }
}

@Suite struct ProcessorSharpenPixelateTests {
    /// A gray step: 60 on the left half, 180 on the right.
    func step(_ width: Int = 20) throws -> PixelBuffer {
        try TestImages.rgba(width, 3) { x, _ in x < width / 2 ? RGBA(r: 60, g: 60, b: 60) : RGBA(r: 180, g: 180, b: 180)
        }
    }

    @Test func sharpeningOvershootsEachSideOfAnEdgeAndLeavesFlatAreasAndAlpha() throws {
        let image = try step()
        let out = try ImageProcessors.Sharpen(sigma: 1).process(image)
        #expect(out[pixel: 9, 1].r < 60 && out[pixel: 10, 1].r > 180)  // darker dark side, brighter bright side
        #expect(out[pixel: 0, 1].r == 60 && out[pixel: 19, 1].r == 180)  // far from the edge: unchanged
        #expect(out[pixel: 9, 1].a == 255)
        let stronger = try ImageProcessors.Sharpen(sigma: 1, amount: 3).process(image)
        #expect(stronger[pixel: 10, 1].r > out[pixel: 10, 1].r)
        #expect(try ImageProcessors.Sharpen(sigma: 0).process(image) == image)
        let translucent = try TestImages.uniform(4, 4, RGBA(r: 10, g: 20, b: 30, a: 77))
        #expect(try ImageProcessors.Sharpen(sigma: 1).process(translucent) == translucent)
        #expect(throws: ImageProcessors.Error.self) { try ImageProcessors.Sharpen(sigma: -1).process(image) }
        #expect(throws: ImageProcessors.Error.self) {
            try ImageProcessors.Sharpen(sigma: 1, amount: .nan).process(image)
        }
    }

    @Test func pixelationAveragesEachBlockWeightedByAlpha() throws {
        let image = try TestImages.rgba(5, 2) { x, y in
            x < 2
                ? RGBA(r: 200, g: 0, b: 0)
                : (x < 4 ? RGBA(r: 0, g: 0, b: 100, a: y == 0 ? 0 : 255) : RGBA(r: 0, g: 50, b: 0))
        }
        let out = try ImageProcessors.Pixelate(size: 2).process(image)
        #expect(out[pixel: 0, 0] == RGBA(r: 200, g: 0, b: 0) && out[pixel: 1, 1] == out[pixel: 0, 0])
        // The transparent top row lends no colour: the block is the bottom row's blue at half alpha.
        #expect(out[pixel: 2, 0] == RGBA(r: 0, g: 0, b: 100, a: 128) && out[pixel: 3, 1] == out[pixel: 2, 0])
        // The last column is a block of its own, one pixel wide.
        #expect(out[pixel: 4, 0] == RGBA(r: 0, g: 50, b: 0) && out[pixel: 4, 1] == RGBA(r: 0, g: 50, b: 0))
        let wide = try ImageProcessors.Pixelate(size: 4).process(try TestImages.gray(4, 1) { x, _ in UInt8(x * 10) })
        #expect(wide.format == .gray8 && wide.bytes == [15, 15, 15, 15])
        #expect(try ImageProcessors.Pixelate(size: 1).process(image) == image)
        #expect(throws: ImageProcessors.Error.self) { try ImageProcessors.Pixelate(size: 0).process(image) }
    }
}
