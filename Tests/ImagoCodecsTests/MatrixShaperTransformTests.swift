import CLCMS2
import Foundation
import ImagoCore
import Testing

@testable import ImagoCodecs

/// The table transform for matrix/TRC profiles gives lcms2's own result within one level on every channel.
@Suite struct MatrixShaperTransformTests {
    /// Every 5th level of every channel (52³ colours, the extremes included), alpha varied.
    static func grid() -> [UInt8] {
        let levels = Array(stride(from: 0, through: 255, by: 5)).map(UInt8.init)
        var pixels: [UInt8] = []
        pixels.reserveCapacity(levels.count * levels.count * levels.count * 4)
        for r in levels {
            for g in levels { for b in levels { pixels += [r, g, b, UInt8(truncatingIfNeeded: Int(r) &+ Int(b))] } }
        }
        return pixels
    }

    /// The lcms2 transform (relative colorimetric, no black-point compensation) of the profile embedded in the
    /// corpus JPEG at `path`, and its matrix/TRC fast path (required).
    static func transform(_ path: String) throws -> (LCMSTransform, MatrixShaperTransform) {
        var keep = DecodingOptions()
        keep.colorPolicy = .keep
        let data = try #require(try JPEGDecoder().decode(corpusData(path), options: keep).colorProfile?.data)
        let profile = try #require(LCMSProfile.open(data))
        let transform = try #require(
            LCMSTransform.make(
                from: profile, layout: .rgba, intent: .relativeColorimetric, blackPointCompensation: false))
        return (transform, try #require(transform.fast, "\(path) should take the matrix/TRC path"))
    }

    /// Both paths: `convert` (the vector kernel where the CPU and the profile allow it) and the scalar tables.
    @Test(
        arguments: [
            "icc/gen-kodim03-displayp3-v4.jpg", "icc/gen-kodim05-adobergb-v2.jpg", "icc/gen-kodim07-prophoto-v4.jpg",
        ], [false, true])
    func theTablePathMatchesLCMS2WithinOneLevel(_ path: String, scalar: Bool) throws {
        let (transform, fast) = try Self.transform(path)
        let input = Self.grid()
        var viaTables = input
        viaTables.withUnsafeMutableBytes { scalar ? fast.convertWithTables($0) : fast.convert($0) }
        var viaLCMS = [UInt8](repeating: 0, count: input.count)
        input.withUnsafeBytes { source in
            viaLCMS.withUnsafeMutableBytes { output in
                cmsDoTransform(
                    transform.handle, source.baseAddress, output.baseAddress, cmsUInt32Number(input.count / 4))
            }
        }
        var worst = 0
        var total = 0
        for i in input.indices {
            if i % 4 == 3 {
                #expect(viaTables[i] == input[i])  // alpha untouched
                continue
            }
            let difference = abs(Int(viaTables[i]) - Int(viaLCMS[i]))
            worst = max(worst, difference)
            total += difference
        }
        let mean = Double(total) / Double(input.count / 4 * 3)
        let name = scalar || fast.kernel == nil ? "table path" : "vector kernel"
        print("\(path): \(name) vs lcms2: worst \(worst) level(s), mean \(mean)")
        #expect(worst <= 1, "\(path) \(name)")
        #expect(mean < 0.05, "\(path) \(name)")
    }

    /// A kept profile's own transfer curve for linear light: ProPhoto's gamma 1.8 and Adobe RGB's 2.2 read from
    /// their TRC tags, Display P3's taken as sRGB's (nil), and no curve from bytes that are not a profile.
    @Test func profilesGiveTheirOwnTransferCurves() throws {
        var keep = DecodingOptions()
        keep.colorPolicy = .keep
        func profile(_ path: String) throws -> Data {
            try #require(try JPEGDecoder().decode(corpusData(path), options: keep).colorProfile?.data)
        }
        for (path, gamma) in [("icc/gen-kodim07-prophoto-v4.jpg", 1.8), ("icc/gen-kodim05-adobergb-v2.jpg", 2.2)] {
            let curve = try #require(ColorManagement.transferCurve(of: try profile(path)), "\(path)")
            // Past ProPhoto's linear toe (below 1/512 of light) both are pure power curves
            for value in [64, 128, 200, 255] {
                #expect(
                    abs(Double(curve.toLinear[value]) - pow(Double(value) / 255, gamma)) < 0.002, "\(path) \(value)")
            }
        }
        #expect(ColorManagement.transferCurve(of: try profile("icc/gen-kodim03-displayp3-v4.jpg")) == nil, "sRGB's")
        #expect(ColorManagement.transferCurve(of: Data("not a profile".utf8)) == nil)
    }
}
