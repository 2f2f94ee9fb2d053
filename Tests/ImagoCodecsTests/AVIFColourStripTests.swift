import Foundation
import ImagoCore
import Testing

@testable import ImagoCodecs

/// AVIFDecoder converts a full-size frame to sRGB strip by strip while it comes out of YUV; the result must be
/// byte for byte what converting the whole decoded frame after gives (the chroma rows around each strip's edges
/// included), for every chroma layout, alpha and odd sizes.
@Suite struct AVIFColourStripTests {
    /// The frame decoded as stored, then converted as a whole by the colour stage.
    private static func convertedAfter(_ data: Data) throws -> ImageContainer {
        let options = DecodingOptions()
        return ColorManagement.applying(try AVIFDecoder().decodeWithColour(data, options: options), options: options)
    }

    /// Each strip size: 2 rows (every view reaches beyond both its edges), 16, and the default (one strip for a
    /// small image).
    private static let stripRows = [2, 16, 1 << 20]

    private static func checkStripsMatchWholeFrame(_ data: Data) throws {
        let reference = try convertedAfter(data)
        var keep = DecodingOptions()
        keep.colorPolicy = .keep
        let stored = try AVIFDecoder().decode(data, options: keep)
        let referenceBytes = reference.image.withUnsafeBytes { Array($0) }
        // The file's colour does convert (otherwise nothing here would be tested).
        let isConverted = stored.image.withUnsafeBytes { Array($0) } != referenceBytes
        #expect(isConverted)
        for rows in stripRows {
            var decoder = AVIFDecoder()
            decoder.colourStripBytes = rows == 1 << 20 ? rows : rows * reference.image.width * 4
            let strips = try decoder.decode(data, options: DecodingOptions())
            #expect(strips.image.size == reference.image.size)
            let isSame = strips.image.withUnsafeBytes { Array($0) } == referenceBytes
            #expect(isSame, "strips of \(rows) rows")
            #expect(strips.sourceColorProfileDescription == reference.sourceColorProfileDescription)
            #expect(strips.image.isKnownOpaque == reference.image.isKnownOpaque)
        }
    }

    @Test func corpusFileWithAProfile() throws {
        // Given the corpus's 4:2:0 AVIF with a non-sRGB ICC profile (the other, libavif-paris_icc_exif_xmp.avif,
        // carries an sRGB-equivalent profile: nothing to convert)
        let data = try Data(
            contentsOf: corpusURL("avif").appendingPathComponent(
                "linku-red-at-12-oclock-with-color-profile-lossy.avif"))
        // Then converting in strips gives the bytes of converting after
        try Self.checkStripsMatchWholeFrame(data)
    }

    @Test(arguments: [false, true], [false, true])
    func displayP3WithOddSize(alpha: Bool, isLossless: Bool) throws {
        // Given an AVIF of odd width and height tagged Display P3: 4:2:0 (lossy) or 4:4:4 (lossless), with or
        // without alpha
        let width = 97
        let height = 131
        let image = try PixelBuffer(width: width, height: height, format: .rgba8) { bytes in
            for y in 0..<height {
                for x in 0..<width {
                    let i = (y * width + x) * 4
                    bytes[i] = UInt8(truncatingIfNeeded: x * 5 + y)
                    bytes[i + 1] = UInt8(truncatingIfNeeded: y * 3)
                    bytes[i + 2] = UInt8(truncatingIfNeeded: (x ^ y) * 7)
                    bytes[i + 3] = alpha ? UInt8(truncatingIfNeeded: 255 - x - y) : 255
                }
            }
        }
        let icc = try #require(ColorManagement.iccProfile(cicpPrimaries: 12, transfer: 13))
        let data = try AVIFEncoder().encode(
            image,
            options: EncodingOptions(quality: 0.7, isLossless: isLossless, colorProfile: ColorProfile(data: icc)))
        // Then converting in strips gives the bytes of converting after
        try Self.checkStripsMatchWholeFrame(data)
    }

    @Test func downsampledFramesAreConvertedAfterFitting() throws {
        // Given the 800×800 4:2:0 file with a profile, decoded to fit 100×100
        let data = try Data(
            contentsOf: corpusURL("avif").appendingPathComponent(
                "linku-red-at-12-oclock-with-color-profile-lossy.avif"))
        var options = DecodingOptions()
        options.targetSize = PixelSize(width: 100, height: 100)
        var decoder = AVIFDecoder()
        decoder.colourStripBytes = 2 * 800 * 4
        let fitted = try decoder.decode(data, options: options)
        // Then it is what fitting and then converting gives (the colour stage runs on the small frame)
        let reference = ColorManagement.applying(
            try AVIFDecoder().decodeWithColour(data, options: options), options: options)
        #expect(fitted.image.size == PixelSize(width: 100, height: 100))
        let isSame = fitted.image.withUnsafeBytes { Array($0) } == reference.image.withUnsafeBytes { Array($0) }
        #expect(isSame)
    }
}
