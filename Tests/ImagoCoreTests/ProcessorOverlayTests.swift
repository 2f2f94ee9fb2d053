import Testing

@testable import ImagoCore

@Suite struct ProcessorOverlayTests {
    let white = RGBA(r: 255, g: 255, b: 255)
    let red = RGBA(r: 255, g: 0, b: 0)

    @Test func drawsSourceOverWithOpacityAndDropsWhatFallsOutside() throws {
        let image = try TestImages.uniform(4, 4, white).assumingOpaque()
        let mark = try TestImages.uniform(2, 2, red)
        let out = try ImageProcessors.Overlay(mark, id: "red", x: 1, y: 1, opacity: 0.5).process(image)
        #expect(out[pixel: 1, 1] == RGBA(r: 255, g: 128, b: 128) && out[pixel: 2, 2] == out[pixel: 1, 1])
        #expect(out[pixel: 0, 0] == white && out[pixel: 3, 3] == white)
        #expect(out.isKnownOpaque)
        let edge = try ImageProcessors.Overlay(mark, id: "red", x: 3, y: -1).process(image)
        #expect(edge[pixel: 3, 0] == red && edge[pixel: 2, 0] == white && edge[pixel: 3, 1] == white)
        for (x, y) in [(Int.max, 0), (Int.min, 0), (0, Int.min), (-2, 0)] {
            #expect(try ImageProcessors.Overlay(mark, id: "red", x: x, y: y).process(image) == image)
        }
    }

    @Test func overTransparencyTheOverlayKeepsItsColourAndGainsOnlyItsAlpha() throws {
        let clear = try TestImages.uniform(2, 1, RGBA(r: 0, g: 0, b: 0, a: 0))
        let out = try ImageProcessors.Overlay(try TestImages.uniform(1, 1, red), id: "r", x: 0, y: 0, opacity: 0.5)
            .process(clear)
        #expect(out[pixel: 0, 0] == RGBA(r: 255, g: 0, b: 0, a: 128) && out[pixel: 1, 0].a == 0)
        #expect(throws: ImageProcessors.Error.self) {
            try ImageProcessors.Overlay(clear, id: "c", x: 0, y: 0, opacity: 1.5).process(clear)
        }
        #expect(
            ImageProcessors.Overlay(clear, id: "a", x: 0, y: 0).identifier
                != ImageProcessors.Overlay(clear, id: "b", x: 0, y: 0).identifier)
    }
}
