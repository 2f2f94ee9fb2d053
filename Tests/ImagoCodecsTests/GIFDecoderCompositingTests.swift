import Foundation
import ImagoCodecs
import ImagoCore
import Testing

/// How frames are composited onto the canvas, on small GIFs built for each rule (global palette: 0 black,
/// 1 red, 2 green, 3 blue).
@Suite struct GIFDecoderCompositingTests {
    static let clear = RGBA(r: 0, g: 0, b: 0, a: 0)
    static let red = RGBA(r: 255, g: 0, b: 0)
    static let green = RGBA(r: 0, g: 255, b: 0)
    static let blue = RGBA(r: 0, g: 0, b: 255)

    static func solid(
        _ index: UInt8, x: Int = 0, y: Int = 0, width: Int, height: Int, disposal: Int = 0
    )
        -> TestGIF.Frame
    {
        TestGIF.Frame(
            x: x, y: y, width: width, height: height, indices: [UInt8](repeating: index, count: width * height),
            disposal: disposal)
    }

    func decode(_ gif: TestGIF, options: DecodingOptions = DecodingOptions()) throws -> ImageContainer {
        try GIFDecoder().decode(gif.encoded(), options: options)
    }

    @Test func keepDisposalLeavesThePreviousFrameUnderTheNext() throws {
        // Given a red full frame kept, then a green 2x2 frame at (1,1)
        let gif = TestGIF(
            width: 4, height: 4,
            frames: [Self.solid(1, width: 4, height: 4, disposal: 1), Self.solid(2, x: 1, y: 1, width: 2, height: 2)])

        // When decoded
        let frames = try decode(gif).frames

        // Then frame 1 shows green over red, and frame 0 is unchanged
        #expect(frames.count == 2)
        #expect(frames[0].buffer[pixel: 1, 1] == Self.red)
        #expect(frames[1].buffer[pixel: 0, 0] == Self.red)
        #expect(frames[1].buffer[pixel: 1, 1] == Self.green)
        #expect(frames[1].buffer[pixel: 2, 2] == Self.green)
        #expect(frames[1].buffer[pixel: 3, 3] == Self.red)
    }

    @Test func backgroundDisposalClearsTheFrameAreaToTransparent() throws {
        let gif = TestGIF(
            width: 4, height: 4,
            frames: [
                Self.solid(1, width: 2, height: 2, disposal: 2), Self.solid(2, x: 2, y: 2, width: 2, height: 2),
            ])
        let frames = try decode(gif).frames
        #expect(frames[0].buffer[pixel: 0, 0] == Self.red)
        #expect(frames[0].buffer[pixel: 3, 3] == Self.clear)
        #expect(frames[1].buffer[pixel: 0, 0] == Self.clear)
        #expect(frames[1].buffer[pixel: 1, 1] == Self.clear)
        #expect(frames[1].buffer[pixel: 2, 2] == Self.green)
    }

    @Test func previousDisposalRestoresTheCanvasFromBeforeTheFrame() throws {
        let gif = TestGIF(
            width: 4, height: 4,
            frames: [
                Self.solid(1, width: 4, height: 4, disposal: 1), Self.solid(2, width: 2, height: 2, disposal: 3),
                Self.solid(3, x: 3, y: 3, width: 1, height: 1),
            ])
        let frames = try decode(gif).frames
        #expect(frames[1].buffer[pixel: 0, 0] == Self.green)
        #expect(frames[2].buffer[pixel: 0, 0] == Self.red)
        #expect(frames[2].buffer[pixel: 1, 1] == Self.red)
        #expect(frames[2].buffer[pixel: 3, 3] == Self.blue)
    }

    @Test func transparentIndexLeavesTheCanvasUntouched() throws {
        var top = Self.solid(0, width: 4, height: 4)
        top.indices[0] = 2
        top.transparentIndex = 0
        let gif = TestGIF(width: 4, height: 4, frames: [Self.solid(1, width: 4, height: 4, disposal: 1), top])
        let frames = try decode(gif).frames
        #expect(frames[1].buffer[pixel: 0, 0] == Self.green)
        #expect(frames[1].buffer[pixel: 1, 0] == Self.red)
        #expect(frames[1].buffer[pixel: 3, 3] == Self.red)
    }

    @Test func interlacedRowsLandInTheirPlace() throws {
        // Given a 2x10 interlaced frame whose row r has colour index r % 4 (all four passes used)
        let indices = (0..<10).flatMap { row in [UInt8(row % 4), UInt8(row % 4)] }
        var frame = TestGIF.Frame(width: 2, height: 10, indices: indices)
        frame.isInterlaced = true
        let image = try decode(TestGIF(width: 2, height: 10, frames: [frame])).image

        // Then every row has its own colour
        let palette = [RGBA(r: 0, g: 0, b: 0), Self.red, Self.green, Self.blue]
        for row in 0..<10 { #expect(image[pixel: 1, row] == palette[row % 4], "row \(row)") }
    }

    @Test func framesReachingOutsideTheCanvasAreClipped() throws {
        let gif = TestGIF(
            width: 4, height: 4,
            frames: [Self.solid(2, x: 2, y: 2, width: 4, height: 4), Self.solid(3, x: 10, y: 0, width: 2, height: 2)])
        let frames = try decode(gif).frames
        #expect(frames.count == 2)
        #expect(frames[0].buffer.size == PixelSize(width: 4, height: 4))
        #expect(frames[0].buffer[pixel: 3, 3] == Self.green)
        #expect(frames[0].buffer[pixel: 1, 1] == Self.clear)
        #expect(frames[1].buffer == frames[0].buffer)
    }

    @Test func missingColourMapDrawsAGreyRamp() throws {
        var gif = TestGIF(width: 3, height: 1, frames: [TestGIF.Frame(width: 3, height: 1, indices: [0, 128, 255])])
        gif.globalPalette = nil
        let image = try decode(gif).image
        #expect(image[pixel: 0, 0] == RGBA(r: 0, g: 0, b: 0))
        #expect(image[pixel: 1, 0] == RGBA(r: 128, g: 128, b: 128))
        #expect(image[pixel: 2, 0] == RGBA(r: 255, g: 255, b: 255))
    }

    @Test func localColourMapOverridesTheGlobalOneAndOutOfRangeIndicesAreBlack() throws {
        var local = TestGIF.Frame(width: 2, height: 1, indices: [1, 0])
        local.localPalette = [[10, 20, 30], [40, 50, 60]]
        let outOfRange = TestGIF.Frame(x: 0, y: 1, width: 1, height: 1, indices: [200])
        let frames = try decode(TestGIF(width: 2, height: 2, frames: [local, outOfRange])).frames
        #expect(frames[0].buffer[pixel: 0, 0] == RGBA(r: 40, g: 50, b: 60))
        #expect(frames[0].buffer[pixel: 1, 0] == RGBA(r: 10, g: 20, b: 30))
        #expect(frames[1].buffer[pixel: 0, 1] == RGBA(r: 0, g: 0, b: 0, a: 255))
        #expect(frames[1].buffer[pixel: 0, 0] == RGBA(r: 40, g: 50, b: 60))
    }

    @Test func loopCountComesFromTheNetscapeBlockAndDefaultsToOnce() throws {
        var frame = Self.solid(1, width: 1, height: 1)
        frame.delay = 7
        var gif = TestGIF(width: 1, height: 1, frames: [frame, frame])
        #expect(try decode(gif).loopCount == 1)
        gif.loopCount = 0
        #expect(try decode(gif).loopCount == 0)
        gif.loopCount = 3
        let container = try decode(gif)
        #expect(container.loopCount == 3)
        #expect(container.frames.map { milliseconds($0.duration) } == [70, 70])
    }

    @Test func zeroSizedLogicalScreenTakesTheFirstFramesExtent() throws {
        let gif = TestGIF(width: 0, height: 0, frames: [Self.solid(3, x: 1, y: 0, width: 2, height: 2)])
        let image = try decode(gif).image
        #expect(image.size == PixelSize(width: 3, height: 2))
        #expect(image[pixel: 2, 1] == Self.blue)
        #expect(image[pixel: 0, 0] == Self.clear)
    }

    @Test func emptyFrameIsSkippedWithoutDesynchronising() throws {
        let gif = TestGIF(
            width: 2, height: 2,
            frames: [TestGIF.Frame(width: 0, height: 0, indices: []), Self.solid(2, width: 2, height: 2)])
        let frames = try decode(gif).frames
        #expect(frames.count == 2)
        #expect(frames[0].buffer[pixel: 0, 0] == Self.clear)
        #expect(frames[1].buffer[pixel: 1, 1] == Self.green)
    }
}
