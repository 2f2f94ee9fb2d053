import Testing

@testable import ImagoCore

@Suite struct ResamplingTests {
    @Test func sharedWeightTablesAreTheTablesOfTheirOwnParameters() {
        // Given parameter sets that differ in one thing each (770 → 256 has 3 and 4 taps, so padding changes it),
        // more destinations than the shared table holds, and a destination and a source longer than it keeps
        var cases: [(source: Int, destination: Int, bits: Int, isPadded: Bool)] = [
            (770, 256, 22, true), (770, 256, 22, false), (770, 256, 15, false), (771, 256, 22, true),
            (770, 255, 22, true), (3000, 2000, 22, true), (9000, 256, 22, true),
        ]
        cases += (0..<(ResamplingWeights.sharedCapacity + 8)).map { (1000, 100 + $0, 15, false) }
        // When each is asked for twice (the second time from the shared table, where it is still held)
        for _ in 0..<2 {
            for c in cases {
                let shared = ResamplingWeights.shared(
                    source: c.source, destination: c.destination, bits: c.bits, isPadded: c.isPadded)
                let fresh = ResamplingWeights(
                    source: c.source, destination: c.destination, bits: c.bits, isPadded: c.isPadded)
                // Then it is the table those parameters compute
                #expect(shared.bits == c.bits)
                #expect(shared.starts.count == c.destination)
                #expect(shared.starts == fresh.starts)
                #expect(shared.counts == fresh.counts)
                #expect(shared.offsets == fresh.offsets)
                #expect(shared.weights == fresh.weights)
                #expect(shared.taps == fresh.taps)
            }
        }
    }

    @Test func shrinkingByTwoAveragesEachTwoByTwoBlock() throws {
        // Given a 4x2 gray image of two 2x2 blocks with known sums
        let image = try PixelBuffer(width: 4, height: 2, format: .gray8, bytes: [0, 10, 100, 200, 20, 30, 50, 50])
        // When it is halved
        let small = try image.resampled(to: PixelSize(width: 2, height: 1))
        // Then each pixel is its block's mean: (0+10+20+30)/4 = 15, (100+200+50+50)/4 = 100
        #expect(small.bytes == [15, 100])
    }

    @Test func shrinkingByANonIntegerFactorWeighsPartialCoverage() throws {
        // 3 pixels to 2: output 0 covers pixel 0 fully and half of pixel 1 (weights 2/3, 1/3)
        let image = try PixelBuffer(width: 3, height: 1, format: .gray8, bytes: [90, 30, 60])
        let small = try image.resampled(to: PixelSize(width: 2, height: 1))
        #expect(small.bytes == [70, 50])
    }

    @Test func transparentPixelsDoNotBleedColour() throws {
        // Given opaque red next to fully transparent green
        var image = try PixelBuffer(width: 2, height: 1)
        image[pixel: 0, 0] = RGBA(r: 255, g: 0, b: 0, a: 255)
        image[pixel: 1, 0] = RGBA(r: 0, g: 255, b: 0, a: 0)
        // When averaged to one pixel
        let one = try image.resampled(to: PixelSize(width: 1, height: 1))
        // Then the colour is pure red at half alpha, not a red-green mix
        #expect(one[pixel: 0, 0] == RGBA(r: 255, g: 0, b: 0, a: 128))
    }

    @Test func uniformImageStaysUniformAtAnySize() throws {
        var image = try PixelBuffer(width: 7, height: 5)
        for y in 0..<5 { for x in 0..<7 { image[pixel: x, y] = RGBA(r: 12, g: 34, b: 56, a: 200) } }
        for size in [PixelSize(width: 3, height: 2), PixelSize(width: 11, height: 13), PixelSize(width: 1, height: 1)] {
            let out = try image.resampled(to: size)
            #expect(out.size == size)
            for y in 0..<size.height {
                for x in 0..<size.width { #expect(out[pixel: x, y] == RGBA(r: 12, g: 34, b: 56, a: 200)) }
            }
        }
    }

    @Test func enlargingInterpolatesBetweenNeighbours() throws {
        let image = try PixelBuffer(width: 2, height: 1, format: .gray8, bytes: [0, 200])
        let big = try image.resampled(to: PixelSize(width: 4, height: 1))
        // centres map to -0.25, 0.25, 0.75, 1.25 → 0, 50, 150, 200
        #expect(big.bytes == [0, 50, 150, 200])
    }

    @Test func rejectsAnEmptyTargetSize() throws {
        let image = try PixelBuffer(width: 2, height: 2)
        #expect(throws: PixelBuffer.Error.self) { try image.resampled(to: PixelSize(width: 0, height: 2)) }
    }
}

@Suite struct PixelSizeFittingTests {
    @Test(arguments: [
        (4032, 3024, 256, 256, 256, 192),
        (3024, 4032, 256, 256, 192, 256),
        (768, 512, 256, 256, 256, 171),
        (100, 50, 256, 256, 100, 50),  // already fits: never upscaled
        (1000, 1, 10, 10, 10, 1),  // never below 1
        (300, 200, 0, 10, 300, 200),  // empty target: unchanged
    ])
    func fitsWithinTheTargetKeepingAspectAndNeverUpscales(w: Int, h: Int, tw: Int, th: Int, ew: Int, eh: Int) {
        #expect(
            PixelSize(width: w, height: h).fitted(within: PixelSize(width: tw, height: th))
                == PixelSize(width: ew, height: eh))
    }
}
