import ImagoCore
import Testing

@testable import ImagoCLI

@Suite struct HalfBlockRendererTests {
    func twoByTwo() throws -> PixelBuffer {
        var image = try PixelBuffer(width: 2, height: 2)
        image[pixel: 0, 0] = RGBA(r: 255, g: 0, b: 0)
        image[pixel: 1, 0] = RGBA(r: 0, g: 255, b: 0)
        image[pixel: 0, 1] = RGBA(r: 0, g: 0, b: 255)
        image[pixel: 1, 1] = RGBA(r: 0, g: 0, b: 0, a: 0)
        return image
    }

    @Test func trueColorCellsCarryTopAsForegroundAndBottomAsBackground() throws {
        let lines = try HalfBlockRenderer(mode: .trueColor).render(twoByTwo(), columns: 80)
        #expect(lines.count == 1)
        // left cell: red over blue; right cell: green over transparent (lower half empty → ▀ without background)
        #expect(lines[0].contains("\u{1B}[38;2;255;0;0m\u{1B}[48;2;0;0;255m▀"))
        #expect(lines[0].contains("\u{1B}[38;2;0;255;0m▀"))
        #expect(lines[0].hasSuffix("\u{1B}[0m"))
    }

    @Test func paletteModeUses256ColourCodes() throws {
        let lines = try HalfBlockRenderer(mode: .palette256).render(twoByTwo(), columns: 80)
        #expect(lines[0].contains("\u{1B}[38;5;196m"))  // pure red is cube index 16 + 36*5
        #expect(!lines[0].contains(";2;"))
    }

    @Test func plainModeHasNoEscapeCodes() throws {
        let lines = try HalfBlockRenderer(mode: .none).render(twoByTwo(), columns: 80)
        #expect(lines.count == 1)
        #expect(!lines[0].contains("\u{1B}"))
        #expect(lines[0].count == 2)
    }

    @Test func fitsWideImagesIntoTheColumnsKeepingAspect() {
        let cells = HalfBlockRenderer.cellSize(for: PixelSize(width: 768, height: 512), columns: 80)
        #expect(cells.columns == 80)
        #expect(cells.rows == 27)  // 512 * 80 / 768 = 53.3 pixel rows → 27 cell rows
        let small = HalfBlockRenderer.cellSize(for: PixelSize(width: 10, height: 4), columns: 80)
        #expect(small == (10, 2))
    }

    @Test func paletteIndexPicksGrayRampForGrays() {
        #expect(HalfBlockRenderer.paletteIndex(r: 128, g: 128, b: 128) == 244)
        #expect(HalfBlockRenderer.paletteIndex(r: 0, g: 0, b: 0) == 16)
        #expect(HalfBlockRenderer.paletteIndex(r: 255, g: 255, b: 255) == 231)
    }
}
