import CColorKernel
import CLCMS2
import Foundation
import ImagoCore
import Testing

@testable import ImagoCodecs

/// The vector kernels (`CColorKernel`: half floats with AVX-512 FP16, single precision with AVX-512 VBMI alone)
/// against lcms2 and against the scalar table path, over a dense grid of 8-bit colours, and the JPEG decode fused
/// with them. Runs where the CPU has AVX-512 VBMI (CI's Sapphire Rapids machines run both kernels, AMD Zen 4/5
/// the single-precision one); elsewhere the scalar path is all there is, and `MatrixShaperTransformTests` covers
/// it.
@Suite(.enabled(if: cimago_color_kernel_available() != 0, "this CPU has no AVX-512 VBMI"))
struct ColorKernelTests {
    /// The kernels this CPU runs (`CIMAGO_COLOR_KERNEL_HALF`, `CIMAGO_COLOR_KERNEL_SINGLE`).
    static let variants = [CIMAGO_COLOR_KERNEL_HALF, CIMAGO_COLOR_KERNEL_SINGLE].filter {
        cimago_color_kernel_variants() & $0 != 0
    }

    /// Converts `pixels` in place with `fast`'s kernel tables, forced to `variant`.
    static func convert(_ pixels: inout [UInt8], _ fast: MatrixShaperTransform, variant: Int32) throws {
        var tables = try #require(fast.kernel)
        tables.variant = variant
        pixels.withUnsafeMutableBufferPointer { p in
            cimago_color_kernel_convert(&tables, p.baseAddress, p.count / 4)
        }
    }

    /// 129³ colours (0 and every odd level, 255 included: a debug build checks all 2^24 too slowly on a loaded
    /// machine; all 2^24 were checked with a release build when the kernel was written, see BENCHMARKS.md),
    /// alpha varied.
    static func denseColours() -> [UInt8] {
        let levels = [UInt8(0)] + stride(from: 1, through: 255, by: 2).map { UInt8($0) }
        var pixels = [UInt8](repeating: 0, count: 4 * levels.count * levels.count * levels.count)
        pixels.withUnsafeMutableBufferPointer { p in
            var i = 0
            for r in levels {
                for g in levels {
                    for b in levels {
                        p[i] = r
                        p[i + 1] = g
                        p[i + 2] = b
                        p[i + 3] = r &+ b
                        i += 4
                    }
                }
            }
        }
        return pixels
    }

    /// The worst and mean difference over the colour channels, and whether every alpha byte is `input`'s.
    static func compare(_ a: [UInt8], _ b: [UInt8], input: [UInt8]) -> (worst: Int, mean: Double, alphaKept: Bool) {
        var worst = 0
        var total = 0
        var alphaKept = true
        a.withUnsafeBufferPointer { a in
            b.withUnsafeBufferPointer { b in
                input.withUnsafeBufferPointer { input in
                    for i in stride(from: 0, to: a.count, by: 4) {
                        for c in 0..<3 {
                            let d = abs(Int(a[i + c]) - Int(b[i + c]))
                            worst = max(worst, d)
                            total += d
                        }
                        if a[i + 3] != input[i + 3] { alphaKept = false }
                    }
                }
            }
        }
        return (worst, Double(total) / Double(a.count / 4 * 3), alphaKept)
    }

    @Test(
        .timeLimit(.minutes(1)),
        arguments: ["icc/gen-kodim03-displayp3-v4.jpg", "icc/gen-kodim05-adobergb-v2.jpg"], Self.variants)
    func denseColoursAreWithinOneLevelOfLCMS2AndOfTheTablePath(_ path: String, variant: Int32) throws {
        let (transform, fast) = try MatrixShaperTransformTests.transform(path)
        #expect(fast.kernel != nil, "\(path) should take the vector kernel")
        try Self.expectWithinOneLevel(transform, fast, variant: variant, path)
    }

    /// A profile with a different curve a channel (gamma 2.2, 1.8, 2.4; Display P3's primaries): the kernels'
    /// per-channel tables (the other tests' profiles share one curve).
    @Test(.timeLimit(.minutes(1)), arguments: Self.variants)
    func aDifferentCurveAChannelIsWithinOneLevelOfLCMS2(variant: Int32) throws {
        var white = cmsCIExyY(x: 0.3457, y: 0.3585, Y: 1)
        var primaries = cmsCIExyYTRIPLE(
            Red: cmsCIExyY(x: 0.680, y: 0.320, Y: 1), Green: cmsCIExyY(x: 0.265, y: 0.690, Y: 1),
            Blue: cmsCIExyY(x: 0.150, y: 0.060, Y: 1))
        var curves: [OpaquePointer?] = [cmsBuildGamma(nil, 2.2), cmsBuildGamma(nil, 1.8), cmsBuildGamma(nil, 2.4)]
        defer { curves.forEach { cmsFreeToneCurve($0) } }
        let handle = try #require(
            curves.withUnsafeMutableBufferPointer { cmsCreateRGBProfile(&white, &primaries, $0.baseAddress) })
        defer { cmsCloseProfile(handle) }
        var size: cmsUInt32Number = 0
        #expect(cmsSaveProfileToMem(handle, nil, &size) != 0)
        var bytes = [UInt8](repeating: 0, count: Int(size))
        #expect(cmsSaveProfileToMem(handle, &bytes, &size) != 0)
        let profile = try #require(LCMSProfile.open(Data(bytes)))
        let transform = try #require(
            LCMSTransform.make(
                from: profile, layout: .rgba, intent: .relativeColorimetric, blackPointCompensation: false))
        let fast = try #require(transform.fast)
        #expect(try #require(fast.kernel).same_curves == 0)
        try Self.expectWithinOneLevel(transform, fast, variant: variant, "gamma 2.2/1.8/2.4")
    }

    /// The kernel (forced to `variant`) over `denseColours()`: within one level of lcms2 and of the scalar tables,
    /// mean differences under 0.05 and 0.1, alpha untouched.
    static func expectWithinOneLevel(
        _ transform: LCMSTransform, _ fast: MatrixShaperTransform, variant: Int32, _ label: String
    ) throws {
        let input = Self.denseColours()
        var viaKernel = input
        try Self.convert(&viaKernel, fast, variant: variant)
        var viaTables = input
        viaTables.withUnsafeMutableBytes { fast.convertWithTables($0) }
        var viaLCMS = [UInt8](repeating: 0, count: input.count)
        input.withUnsafeBytes { source in
            viaLCMS.withUnsafeMutableBytes { output in
                cmsDoTransform(
                    transform.handle, source.baseAddress, output.baseAddress, cmsUInt32Number(input.count / 4))
            }
        }
        let lcms = Self.compare(viaKernel, viaLCMS, input: input)
        let tables = Self.compare(viaKernel, viaTables, input: input)
        print("\(label), kernel \(variant): vs lcms2 worst \(lcms.worst), mean \(lcms.mean); vs tables \(tables.worst)")
        #expect(lcms.worst <= 1)
        #expect(lcms.mean < 0.05)
        #expect(lcms.alphaKept)
        #expect(tables.worst <= 1)
        #expect(tables.mean < 0.1)
    }

    /// Counts that are not a multiple of the kernel's 64-pixel block: the tail goes through a scratch block and
    /// gives the same pixels as a long run; the bytes after the last pixel are not touched.
    @Test(arguments: [1, 2, 15, 16, 17, 63, 64, 65, 127, 130, 1000], Self.variants)
    func shortAndRaggedRunsMatchALongRun(_ count: Int, variant: Int32) throws {
        let (_, fast) = try MatrixShaperTransformTests.transform("icc/gen-kodim03-displayp3-v4.jpg")
        var long = (0..<(4 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ ($0 >> 5)) }
        var short = long
        try Self.convert(&long, fast, variant: variant)
        // The kernel on the first `count` pixels of the buffer: nothing after them is read or written.
        var tables = try #require(fast.kernel)
        tables.variant = variant
        short.withUnsafeMutableBufferPointer { cimago_color_kernel_convert(&tables, $0.baseAddress, count) }
        #expect(short[0..<(4 * count)] == long[0..<(4 * count)])
        let untouched = (0..<(4 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ ($0 >> 5)) }
        #expect(short[(4 * count)...] == untouched[(4 * count)...])
    }

    /// The JPEG decode that converts strip by strip while libjpeg writes (`CJPEGStrips`) gives exactly the pixels
    /// of TurboJPEG's decode followed by the conversion of the whole image, and reports the same profile.
    @Test(arguments: ["icc/gen-kodim03-displayp3-v4.jpg", "icc/gen-kodim05-adobergb-v2.jpg"])
    func theFusedJPEGDecodeEqualsDecodeThenConvert(_ path: String) throws {
        let data = try corpusData(path)
        var ignore = DecodingOptions()
        ignore.colorPolicy = .ignore
        var keep = DecodingOptions()
        keep.colorPolicy = .keep
        let profile = try #require(try JPEGDecoder().decode(data, options: keep).colorProfile)
        let raw = try JPEGDecoder().decode(data, options: ignore).image
        let (twoPass, outcome) = ColorManagement.convertToSRGB(buffer: raw, iccProfile: profile.data)
        #expect(outcome == .converted)
        let fused = try JPEGDecoder().decode(data, options: DecodingOptions())
        #expect(fused.image.width == twoPass.width && fused.image.height == twoPass.height)
        let same = fused.image.withUnsafeBytes { a in twoPass.withUnsafeBytes { b in a.elementsEqual(b) } }
        #expect(same)
        #expect(fused.sourceColorProfileDescription == profile.description)
    }

    /// A truncated Display P3 file does not take the fused path (libjpeg would warn): it decodes as before, the
    /// missing rows filled, and is still converted.
    @Test func aTruncatedFileStillDecodesAndConverts() throws {
        let data = try corpusData("icc/gen-kodim03-displayp3-v4.jpg")
        var options = DecodingOptions()
        options.allowsPartialData = true
        let cut = data.prefix(data.count * 2 / 3)
        let decoded = try JPEGDecoder().decode(cut, options: options)
        #expect(decoded.isPreview)
        #expect(decoded.sourceColorProfileDescription != nil)
    }

    /// HEIC and AVIF photos from phones say Display P3 with CICP code points (`nclx` 12/13) rather than an ICC
    /// profile: the profile built for them is matrix/TRC too, so their decodes take the same vector kernel.
    @Test func cicpDisplayP3TakesTheVectorKernel() throws {
        let prepared = ColorManagement.prepared(
            .cicp(primaries: 12, transfer: 13), layout: .rgba, options: DecodingOptions())
        guard case .transform(let transform) = prepared.kind else {
            Issue.record("CICP 12/13 should need a transform")
            return
        }
        #expect(transform.fast?.kernel != nil)
    }

    /// ProPhoto's matrix is far from the identity (entries about 1): half floats would lose up to 2 levels near
    /// black (and the single-precision kernel, which linearises to half floats, 2 levels in 134 of 2^24 colours),
    /// so it keeps the scalar tables.
    @Test func proPhotoKeepsTheTablePath() throws {
        let (_, fast) = try MatrixShaperTransformTests.transform("icc/gen-kodim07-prophoto-v4.jpg")
        #expect(fast.kernel == nil)
    }
}
