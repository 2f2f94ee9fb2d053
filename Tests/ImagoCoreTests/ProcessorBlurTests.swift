import Foundation
import Testing

@testable import ImagoCore

/// The 1-D kernel of successive box blurs of `radii`, by direct convolution.
private func boxKernel(_ radii: [Int]) -> [Double] {
    var kernel = [1.0]
    for r in radii {
        let box = [Double](repeating: 1 / Double(2 * r + 1), count: 2 * r + 1)
        var next = [Double](repeating: 0, count: kernel.count + box.count - 1)
        for i in kernel.indices { for j in box.indices { next[i + j] += kernel[i] * box[j] } }
        kernel = next
    }
    return kernel
}

@Suite struct ProcessorBlurTests {
    @Test func uniformImageStaysUnchanged() throws {
        let color = RGBA(r: 10, g: 200, b: 30, a: 180)
        let image = try TestImages.uniform(23, 17, color)
        let out = try ImageProcessors.GaussianBlur(radius: 3).process(image)
        #expect(out == image)
    }

    /// The 1-D kernel the blur should apply for `sigma`: boxes from 3 up, a sampled Gaussian below.
    func expectedKernel(sigma: Double) -> [Double] {
        if sigma >= 3 { return boxKernel(ImageProcessors.GaussianBlur.boxRadii(sigma: sigma)) }
        let r = Int((3 * sigma).rounded(.up))
        let raw = (-r...r).map { exp(-Double($0 * $0) / (2 * sigma * sigma)) }
        let total = raw.reduce(0, +)
        return raw.map { $0 / total }
    }

    @Test(arguments: [1.5, 3, 5])
    func singleWhitePixelSpreadsSymmetricallyLikeTheKernel(sigma: Double) throws {
        // Given one white pixel in the middle of a 41x41 opaque black image
        let c = 20
        let image = try TestImages.rgba(41, 41) { x, y in
            x == c && y == c ? RGBA(r: 255, g: 255, b: 255) : RGBA(r: 0, g: 0, b: 0)
        }
        // When blurred
        let out = try ImageProcessors.GaussianBlur(radius: sigma).process(image)
        // Then every pixel is 255 × k(dx) × k(dy) for the expected 1-D kernel k, to within one level
        let kernel = expectedKernel(sigma: sigma)
        let reach = kernel.count / 2
        for y in 0..<41 {
            for x in 0..<41 {
                let (dx, dy) = (x - c, y - c)
                let k = abs(dx) <= reach && abs(dy) <= reach ? kernel[dx + reach] * kernel[dy + reach] : 0
                let p = out[pixel: x, y]
                #expect(abs(Double(p.r) - 255 * k) <= 1, "(\(x), \(y)) \(p.r) vs \(255 * k)")
                #expect(p.r == p.g && p.g == p.b && p.a == 255)
                // And it spreads symmetrically, in both axes and across the diagonal
                #expect(p == out[pixel: 2 * c - x, y] && p == out[pixel: x, 2 * c - y] && p == out[pixel: y, x])
                if max(abs(dx), abs(dy)) > reach { #expect(p.r == 0) }
            }
        }
        #expect(out[pixel: c, c].r < 255 && out[pixel: c, c].r > 0)
    }

    @Test(arguments: [1.5, 3, 8])
    func preservesTotalEnergyWithinRounding(sigma: Double) throws {
        // Given a white 21x21 square on black, far enough from the edges that no light is clamped away
        let image = try TestImages.rgba(81, 81) { x, y in
            abs(x - 40) <= 10 && abs(y - 40) <= 10 ? RGBA(r: 255, g: 255, b: 255) : RGBA(r: 0, g: 0, b: 0)
        }
        // When blurred
        let out = try ImageProcessors.GaussianBlur(radius: sigma).process(image)
        // Then the total light (441 × 255) is kept within 1 % (8-bit rounding drops the faintest tail)
        var total = 0
        for y in 0..<81 { for x in 0..<81 { total += Int(out[pixel: x, y].r) } }
        #expect(abs(total - 441 * 255) <= 441 * 255 / 100, "total \(total)")
        #expect(out[pixel: 30, 40].r < 255 && out[pixel: 29, 40].r > 0)
    }

    @Test func filtersApproximateTheGaussianSpread() {
        for sigma in [1, 1.5, 2, 2.9, 3, 3.5, 5, 8, 13, 20, 50] {
            let kernel = expectedKernel(sigma: sigma)
            let reach = kernel.count / 2
            let variance = kernel.indices.reduce(0.0) { $0 + kernel[$1] * Double(($1 - reach) * ($1 - reach)) }
            #expect(abs(variance.squareRoot() - sigma) / sigma < 0.06, "σ \(sigma): \(variance.squareRoot())")
        }
        #expect(ImageProcessors.GaussianBlur.boxRadii(sigma: 8) == [7, 7, 8])
        #expect(ImageProcessors.GaussianBlur.passes(sigma: 8) == [.box(radius: 7), .box(radius: 7), .box(radius: 8)])
    }

    @Test(arguments: [1.5, 4])
    func tallImagesBlurredInBandsMatchOneBand(sigma: Double) throws {
        // Given a tall image and a working-memory budget of a few rows (so it is blurred in many bands)
        let image = try TestImages.rgba(24, 150) { x, y in
            RGBA(
                r: UInt8((x * 11 + y * 7) % 256), g: UInt8((y * 3) % 256), b: UInt8(x * 10),
                a: UInt8(128 + (x + y) % 128))
        }
        let gray = try TestImages.gray(24, 150) { x, y in UInt8((x * 31 + y * 17) % 256) }
        let passes = ImageProcessors.GaussianBlur.passes(sigma: sigma)
        for source in [image, gray] {
            // When blurred in bands and in one piece
            let banded = try source.blurred(passes: passes, bandBudgetBytes: 24 * 16 * 8)
            let whole = try source.blurred(passes: passes, bandBudgetBytes: .max / 2)
            // Then the pixels agree (to one level: float sums start at different rows)
            #expect(banded.size == whole.size && banded.format == whole.format)
            var differing = 0
            for (a, b) in zip(banded.bytes, whole.bytes) where a != b {
                differing += 1
                #expect(abs(Int(a) - Int(b)) <= 1)
            }
            #expect(differing <= banded.bytes.count / 100)
        }
    }

    @Test func radiusZeroIsIdentity() throws {
        let image = try TestImages.rgba(9, 7) { x, y in RGBA(r: UInt8(x * 20), g: UInt8(y * 30), b: 5, a: 77) }
        #expect(try ImageProcessors.GaussianBlur(radius: 0).process(image) == image)
    }

    @Test func transparentPixelsDoNotBleedColour() throws {
        // Given opaque red on the left and fully transparent green on the right
        let image = try TestImages.rgba(20, 10) { x, _ in
            x < 10 ? RGBA(r: 255, g: 0, b: 0, a: 255) : RGBA(r: 0, g: 255, b: 0, a: 0)
        }
        // When blurred
        let out = try ImageProcessors.GaussianBlur(radius: 2).process(image)
        // Then alpha fades across the edge, and every visible pixel is pure red
        #expect(out[pixel: 9, 5].a < 255 && out[pixel: 10, 5].a > 0)
        for y in 0..<10 {
            for x in 0..<20 {
                let p = out[pixel: x, y]
                if p.a > 0 { #expect(p.r == 255 && p.g == 0 && p.b == 0, "(\(x), \(y)) \(p)") }
            }
        }
    }

    @Test func edgesRepeatTheBorderPixel() throws {
        // A left-right split blurred only keeps its far columns intact (clamped edges add no dark halo)
        let image = try TestImages.gray(30, 4) { x, _ in x < 15 ? 200 : 50 }
        let out = try ImageProcessors.GaussianBlur(radius: 1.5).process(image)
        #expect(out.format == .gray8)
        for y in 0..<4 {
            #expect(out.bytes[y * 30] == 200 && out.bytes[y * 30 + 29] == 50)
            #expect(out.bytes[y * 30 + 14] < 200 && out.bytes[y * 30 + 15] > 50)
        }
    }

    @Test func grayAndOpaqueRGBAAgreeWithinOneLevel() throws {
        // (RGBA divides by a blurred alpha that may be 255 ± a float rounding, so a level may round apart.)
        let gray = try TestImages.gray(15, 11) { x, y in UInt8((x * 37 + y * 91) % 256) }
        let rgba = gray.convertedToRGBA()
        let a = try ImageProcessors.GaussianBlur(radius: 2).process(gray)
        let b = try ImageProcessors.GaussianBlur(radius: 2).process(rgba)
        #expect(a.format == .gray8 && b.format == .rgba8)
        for y in 0..<11 {
            for x in 0..<15 {
                let (g, p) = (a[pixel: x, y], b[pixel: x, y])
                #expect(abs(Int(g.r) - Int(p.r)) <= 1 && p.r == p.g && p.g == p.b && p.a == 255)
            }
        }
    }

    @Test(arguments: [-0.5, Double.nan, -Double.infinity])
    func rejectsAnInvalidRadius(radius: Double) throws {
        let image = try TestImages.uniform(3, 3, RGBA(r: 1, g: 2, b: 3))
        #expect(throws: ImageProcessors.Error.self) { try ImageProcessors.GaussianBlur(radius: radius).process(image) }
    }
}
