import Foundation
import ImagoCodecs
import ImagoCore
import Testing

/// Animated GIFs over ``DecodingOptions/animationMemoryBudget`` are decoded on demand, frame by frame, with the
/// same pixels as the up-front decode.
@Suite struct OnDemandGIFTests {
    /// `frames` frames on a `width`×`height` screen: a full first frame, then sub-rectangles that move, with every
    /// disposal method and a transparent index, so that compositing depends on the frames before.
    static func animatedGIF(width: Int, height: Int, frames: Int, patch: Int) -> Data {
        var gif = TestGIF(width: width, height: height)
        gif.loopCount = 0
        gif.globalPalette = (0..<256).map { [UInt8($0), UInt8((Int($0) * 7) & 255), UInt8(255 - $0)] }
        gif.frames.append(
            TestGIF.Frame(
                width: width, height: height,
                indices: (0..<(width * height)).map { UInt8(($0 % width + $0 / width) & 255) }, delay: 4))
        for index in 1..<frames {
            let x = (index * 13) % max(1, width - patch)
            let y = (index * 5) % max(1, height - patch)
            let indices = (0..<(patch * patch)).map { UInt8(($0 * 3 + index * 11) & 255) }
            gif.frames.append(
                TestGIF.Frame(
                    x: x, y: y, width: patch, height: patch, indices: indices, disposal: index % 4,
                    delay: 2 + index % 5, transparentIndex: index % 3 == 0 ? indices[0] : nil,
                    isInterlaced: index % 5 == 0))
        }
        return gif.encoded()
    }

    static func options(budget: Int, target: PixelSize? = nil) -> DecodingOptions {
        var options = DecodingOptions(targetSize: target)
        options.animationMemoryBudget = budget
        return options
    }

    @Test(arguments: [nil, PixelSize(width: 30, height: 30)])
    func framesOnDemandEqualTheUpFrontDecodeInOrderAndAfterSeeks(_ target: PixelSize?) throws {
        // Given a 30-frame GIF decoded up front and on demand
        let data = Self.animatedGIF(width: 64, height: 48, frames: 30, patch: 16)
        let upFront = try GIFDecoder().decode(data, options: Self.options(budget: .max, target: target))
        let onDemand = try GIFDecoder().decode(data, options: Self.options(budget: 1, target: target))
        #expect(upFront.frameSource == nil && upFront.frames.count == 30)
        #expect(onDemand.frameSource != nil && onDemand.frames.count == 1 && onDemand.frameCount == 30)
        #expect(onDemand.loopCount == upFront.loopCount && onDemand.totalDuration == upFront.totalDuration)
        // When played in order, Then every frame equals the up-front one
        for index in 0..<30 {
            let frame = try onDemand.frame(at: index)
            #expect(frame.buffer == upFront.frames[index].buffer, "frame \(index)")
            #expect(frame.duration == upFront.frames[index].duration)
        }
        // And after seeks
        for index in [29, 0, 15, 14, 3, 28, 28, 1, 2] {
            #expect(try onDemand.frame(at: index).buffer == upFront.frames[index].buffer, "seek to \(index)")
        }
    }

    @Test(.timeLimit(.minutes(3))) func imagoDecodeOfA300FrameFullHDGIFStaysUnder80MB() throws {
        // Given a 300-frame 1920×1080 GIF (2.4 GB of frames decoded up front)
        let tool = try #require(HugeImageScaleDownTests.imagoExecutable(), "build the imago executable first")
        let data = Self.animatedGIF(width: 1920, height: 1080, frames: 300, patch: 96)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("imago-anim-\(UUID().uuidString).gif")
        try data.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        // When `imago decode --json` reads it, Then all 300 frames are reported within 80 MB of peak RSS
        let run = try HugeImageScaleDownTests.runMeasured(tool, ["decode", "--json", file.path])
        #expect(run.status == 0 && run.output.contains("\"frames\":300"), "\(run.output)")
        #expect(run.peakRSSKB < 80_000, "peak RSS \(run.peakRSSKB) KB")
        print("imago decode --json of a 300-frame 1920x1080 GIF (\(data.count) bytes): peak RSS \(run.peakRSSKB) KB")
    }
}
