import Foundation
import Imago
import ImagoCore
import Testing

/// Decompression bombs through the default registry with the DEFAULT options (the pipeline's budgets): each is
/// rejected with a typed error before pixels are allocated. The inputs live in Tests/Fuzz/decode/ (made by
/// scripts/hostile-inputs.py; scripts/hostile-rss.sh measures the peak RSS of each in its own process). The
/// 100,000-frame GIF and the per-decoder frame/byte limits are covered by GIFDecoderRobustnessTests and
/// WebPDecoderLimitsTests.
@Suite struct HostileImageTests {
    static func fuzzInput(_ name: String, filePath: String = #filePath) throws -> Data {
        let root = URL(fileURLWithPath: filePath).deletingLastPathComponent().deletingLastPathComponent()
        return try Data(contentsOf: root.appendingPathComponent("Fuzz/decode/\(name)"))
    }

    static let bombs: [(file: String, error: CodecError)] = [
        ("bomb-png-100000x100000.png", .tooManyPixels(width: 100_000, height: 100_000, limit: 100_000_000)),
        ("bomb-jpeg-65500x65500.jpg", .tooManyPixels(width: 65_500, height: 65_500, limit: 100_000_000)),
        ("bomb-webp-lossless-16384x16384.webp", .tooManyPixels(width: 16_384, height: 16_384, limit: 100_000_000)),
        ("bomb-webp-canvas-30000x30000.webp", .tooManyPixels(width: 30_000, height: 30_000, limit: 100_000_000)),
        ("bomb-gif-65535x65535.gif", .tooManyPixels(width: 65_535, height: 65_535, limit: 100_000_000)),
        // Over the animation memory budget, so it would be decoded on demand (holding no frames): the compositing
        // work limit is what refuses it.
        ("bomb-gif-animation-32GB.gif", .animationTooMuchWork(limit: 2_000_000_000)),
    ]

    @Test(arguments: bombs.indices)
    func bombIsRejectedByTheDefaultBudgets(_ index: Int) throws {
        // Given a tiny file declaring a huge image (or a huge animation)
        let (file, expected) = Self.bombs[index]
        let data = try Self.fuzzInput(file)
        #expect(data.count < 2_000)

        // When it is decoded with the default options, Then the budget's typed error comes back
        #expect(throws: expected) {
            try ImageDecoderRegistry.makeDefault().decode(data)
        }
    }

    @Test func hugeCanvasAnimationWithASmallTargetIsRefusedUpFront() throws {
        // Given 100 one-pixel frames on a 9000x9000 screen: with a 256 px target the output is small (the byte
        // budget lets it through), but every frame would be composited on the 81 MP screen (8.1 G pixels)
        let data = try Self.fuzzInput("bomb-gif-animation-32GB.gif")
        let options = DecodingOptions(targetSize: PixelSize(width: 256, height: 256))

        // When it is decoded, Then the work budget refuses it before any frame is drawn
        let started = ContinuousClock.now
        #expect(throws: CodecError.animationTooMuchWork(limit: 2_000_000_000)) {
            try ImageDecoderRegistry.makeDefault().decode(data, options: options)
        }
        // (generous bound: refusing up front takes milliseconds; compositing 100 frames took tens of seconds)
        #expect(ContinuousClock.now - started < .seconds(20))
    }

    @Test func defaultBudgetsAreBounded() {
        let options = DecodingOptions()
        #expect(options.pixelLimit == 100_000_000)
        #expect(options.frameLimit == 10_000)
        #expect(options.animationByteLimit == 1 << 30)
        #expect(options.animationWorkLimit == 2_000_000_000)
    }
}
