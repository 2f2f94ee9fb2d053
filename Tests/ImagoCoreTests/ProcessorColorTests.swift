import Testing

@testable import ImagoCore

@Suite struct ProcessorGrayscaleTests {
    @Test(arguments: [
        // colour, Rec. 601 luma, Rec. 709 luma (worked by hand from the weights, rounded)
        (RGBA(r: 255, g: 0, b: 0, a: 255), 76 as UInt8, 54 as UInt8),  // 76.245, 54.213
        (RGBA(r: 0, g: 255, b: 0, a: 128), 150, 182),  // 149.685, 182.376
        (RGBA(r: 0, g: 0, b: 255, a: 0), 29, 18),  // 29.07, 18.411
        (RGBA(r: 10, g: 20, b: 30, a: 7), 18, 19),  // 18.15, 18.596
        (RGBA(r: 255, g: 255, b: 255, a: 255), 255, 255),
    ])
    func replacesColourByLumaAndKeepsAlpha(color: RGBA, rec601: UInt8, rec709: UInt8) throws {
        let image = try TestImages.uniform(2, 1, color)
        let a = try ImageProcessors.Grayscale().process(image)
        let b = try ImageProcessors.Grayscale(luma: .rec709).process(image)
        #expect(a.format == .rgba8)
        #expect(a[pixel: 1, 0] == RGBA(r: rec601, g: rec601, b: rec601, a: color.a))
        #expect(b[pixel: 1, 0] == RGBA(r: rec709, g: rec709, b: rec709, a: color.a))
        #expect(a[pixel: 0, 0].r == color.luminance)
    }

    @Test func grayInputIsReturnedAsItIs() throws {
        let gray = try TestImages.gray(3, 3) { x, y in UInt8(x * 50 + y) }
        #expect(try ImageProcessors.Grayscale().process(gray) == gray)
    }
}

@Suite struct ProcessorTintTests {
    /// The documented formula, in doubles: s + (target − s) × k.
    func reference(_ s: UInt8, _ t: UInt8, _ k: UInt8, multiply: Bool) -> UInt8 {
        let sd = Double(s)
        let target = multiply ? sd * Double(t) / 255 : Double(t)
        let strength = Double(k) / 255
        return UInt8((sd + (target - sd) * strength).rounded())
    }

    let image = try! TestImages.rgba(16, 16) { x, y in
        RGBA(r: UInt8(x * 16), g: UInt8(y * 16), b: UInt8(255 - x * 8 - y * 7), a: UInt8(x * 16 + y))
    }

    @Test(arguments: [ImageProcessors.Tint.Blend.sourceAtop, .multiply], [255, 128, 1] as [UInt8])
    func coloursEveryChannelByTheBlendFormula(blend: ImageProcessors.Tint.Blend, strength: UInt8) throws {
        let tint = RGBA(r: 30, g: 144, b: 255, a: strength)
        let out = try ImageProcessors.Tint(color: tint, blend: blend).process(image)
        for y in 0..<16 {
            for x in 0..<16 {
                let s = image[pixel: x, y]
                let m = blend == .multiply
                let expected = RGBA(
                    r: reference(s.r, tint.r, strength, multiply: m), g: reference(s.g, tint.g, strength, multiply: m),
                    b: reference(s.b, tint.b, strength, multiply: m), a: s.a)
                #expect(out[pixel: x, y] == expected, "(\(x), \(y))")
            }
        }
    }

    @Test func opaqueSourceAtopTintGivesASilhouette() throws {
        let tint = RGBA(r: 1, g: 2, b: 3)
        let out = try ImageProcessors.Tint(color: tint).process(image)
        for y in 0..<16 {
            for x in 0..<16 { #expect(out[pixel: x, y] == RGBA(r: 1, g: 2, b: 3, a: image[pixel: x, y].a)) }
        }
    }

    @Test func multiplyKeepsBlackAndTurnsWhiteIntoTheTint() throws {
        let image = try TestImages.rgba(2, 1) { x, _ in x == 0 ? RGBA(r: 0, g: 0, b: 0) : RGBA(r: 255, g: 255, b: 255) }
        let out = try ImageProcessors.Tint(color: RGBA(r: 200, g: 100, b: 50), blend: .multiply).process(image)
        #expect(out[pixel: 0, 0] == RGBA(r: 0, g: 0, b: 0))
        #expect(out[pixel: 1, 0] == RGBA(r: 200, g: 100, b: 50))
    }

    @Test func grayInputBecomesRGBA() throws {
        let gray = try TestImages.gray(2, 2) { _, _ in 255 }
        let out = try ImageProcessors.Tint(color: RGBA(r: 255, g: 0, b: 0), blend: .multiply).process(gray)
        #expect(out.format == .rgba8)
        #expect(out[pixel: 1, 1] == RGBA(r: 255, g: 0, b: 0))
    }
}
