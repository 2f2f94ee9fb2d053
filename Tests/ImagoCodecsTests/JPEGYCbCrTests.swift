import Foundation
import ImagoCore
import Testing

@testable import ImagoCodecs

/// A JPEG's own Y, Cb and Cr planes, resampled and handed to libwebp without a trip through RGB.
@Suite struct JPEGYCbCrTests {
    static let box = DecodingOptions(targetSize: PixelSize(width: 256, height: 256))

    /// PSNR in dB over the R, G and B values of two images of one size.
    static func psnr(_ a: PixelBuffer, _ b: PixelBuffer) -> Double {
        var sum = 0.0
        for y in 0..<a.height {
            for x in 0..<a.width {
                let (p, q) = (a[pixel: x, y], b[pixel: x, y])
                for (u, v) in [(p.r, q.r), (p.g, q.g), (p.b, q.b)] {
                    let d = Double(u) - Double(v)
                    sum += d * d
                }
            }
        }
        let mse = sum / Double(a.width * a.height * 3)
        return mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
    }

    static func kodakJPEG(_ name: String, progressive: Bool = false) throws -> Data {
        let photo = try PNGDecoder().decode(try corpusData("kodak/\(name).png"), options: DecodingOptions()).image
        return try JPEGEncoder(isProgressive: progressive).encode(photo, options: EncodingOptions(quality: 0.9))
    }

    @Test func aKodakThumbnailInYCbCrIsTheRGBPathsWithinItsCoding() throws {
        // Landscape and portrait Kodak photos (768×512, 512×768) as 4:2:0 JPEGs, fitted into 256 × 256: the
        // planes come out at the RGB decode's size, and both WebPs, decoded, are close to the RGB decode before
        // encoding (the YCbCr one by at most 1 dB less) and to each other
        for name in ["01", "04", "13", "23"] {
            let jpeg = try Self.kodakJPEG(name)
            let reference = try JPEGDecoder().decode(jpeg, options: Self.box).image
            let planes = try #require(try JPEGDecoder().decodeYCbCr(jpeg, options: Self.box))
            #expect(planes.image.size == reference.size)
            #expect(planes.image.cb.size == YCbCrImage.chromaSize(of: reference.size))
            #expect(planes.originalSize == PixelSize(width: name == "04" ? 512 : 768, height: name == "04" ? 768 : 512))
            let options = EncodingOptions(quality: 0.8)
            let viaYCbCr = try WebPDecoder().decode(
                try WebPEncoder().encode(planes.image, options: options), options: DecodingOptions()
            ).image
            let viaRGB = try WebPDecoder().decode(
                try WebPEncoder().encode(reference, options: options), options: DecodingOptions()
            ).image
            let (ycbcr, rgb, between) = (
                Self.psnr(viaYCbCr, reference), Self.psnr(viaRGB, reference), Self.psnr(viaYCbCr, viaRGB)
            )
            #expect(ycbcr > rgb - 1, "Kodak \(name): \(ycbcr) dB against \(rgb) dB")
            #expect(ycbcr > 30 && between > 35, "Kodak \(name): \(ycbcr) dB, \(between) dB between")
        }
    }

    @Test func theLumaPlaneIsTheRGBDecodesLumaInTheVideoRange() throws {
        // Kodak 23: the BT.601 luma of the RGB decode, scaled to 16…235, within a level on average
        let jpeg = try Self.kodakJPEG("23")
        let reference = try JPEGDecoder().decode(jpeg, options: Self.box).image
        let planes = try #require(try JPEGDecoder().decodeYCbCr(jpeg, options: Self.box)).image
        var worst = 0.0
        var total = 0.0
        for y in 0..<reference.height {
            for x in 0..<reference.width {
                let p = reference[pixel: x, y]
                let luma = 0.299 * Double(p.r) + 0.587 * Double(p.g) + 0.114 * Double(p.b)
                let expected = 16 + luma * 219 / 255
                let actual = planes.y.withUnsafeBytes { Double($0[y * planes.y.bytesPerRow + x]) }
                worst = max(worst, abs(actual - expected))
                total += abs(actual - expected)
            }
        }
        #expect(total / Double(reference.width * reference.height) < 1, "mean \(total) worst \(worst)")
        let levels = planes.y.withUnsafeBytes { Set($0) }
        #expect(levels.min()! >= 16 && levels.max()! <= 235)
    }

    @Test func filesThisPathWouldDecodeDifferentlyAreLeftToTheRGBDecode() throws {
        let decoder = JPEGDecoder()
        // Gray, CMYK, a colour profile to convert, an orientation to apply, truncated, over the pixel limit
        #expect(
            try decoder.decodeYCbCr(try corpusData("jpeg/reference/grayscale_square.jpg"), options: Self.box) == nil)
        let cmyk = try corpusData("icc/sharp-Channel_digital_image_CMYK_color.jpg")
        #expect(try decoder.decodeYCbCr(cmyk, options: Self.box) == nil)
        let p3 = try corpusData("icc/gen-kodim03-displayp3-v4.jpg")
        #expect(try decoder.decodeYCbCr(p3, options: Self.box) == nil)
        var ignoring = Self.box
        ignoring.colorPolicy = .ignore
        #expect(try decoder.decodeYCbCr(p3, options: ignoring) != nil)
        // An sRGB profile changes nothing: the path is taken; one that does not parse is the RGB decode's (which
        // warns)
        #expect(try decoder.decodeYCbCr(try corpusData("icc/libavif-paris_exif_xmp_icc.jpg"), options: Self.box) != nil)
        #expect(try decoder.decodeYCbCr(try corpusData("icc/pillow-icc-after-SOF.jpg"), options: Self.box) == nil)
        var keeping = Self.box
        keeping.colorPolicy = .keep
        #expect(
            try decoder.decodeYCbCr(try corpusData("icc/libavif-paris_exif_xmp_icc.jpg"), options: keeping) == nil)
        let plain = try corpusData("formats/TestImage.jpg")
        #expect(try decoder.decodeYCbCr(plain, options: Self.box) != nil)
        let turned = TestImages.jpeg(plain, withOrientation: 6)
        #expect(try decoder.decodeYCbCr(turned, options: Self.box) == nil)
        var unturned = Self.box
        unturned.appliesOrientation = false
        #expect(try decoder.decodeYCbCr(turned, options: unturned) != nil)
        #expect(try decoder.decodeYCbCr(plain.prefix(plain.count / 2), options: Self.box) == nil)
        var small = Self.box
        small.pixelLimit = 80 * 60 - 1
        #expect(try decoder.decodeYCbCr(plain, options: small) == nil)
        #expect(try decoder.decodeYCbCr(Data(), options: Self.box) == nil)
    }

    @Test func progressiveFilesTakeThePathExceptWhereTheDCReaderWould() throws {
        let jpeg = try Self.kodakJPEG("23", progressive: true)
        let decoder = JPEGDecoder()
        // 1/2 scale for 256 px: libjpeg's planes, as close to the RGB decode as a baseline file's
        let planes = try #require(try decoder.decodeYCbCr(jpeg, options: Self.box)).image
        let reference = try decoder.decode(jpeg, options: Self.box).image
        let decoded = try WebPDecoder().decode(
            try WebPEncoder().encode(planes, options: EncodingOptions(quality: 0.9)), options: DecodingOptions()
        ).image
        #expect(Self.psnr(decoded, reference) > 30)
        // 1/8 scale for 96 px: the DC reader's, which holds less than libjpeg
        #expect(
            try decoder.decodeYCbCr(jpeg, options: DecodingOptions(targetSize: PixelSize(width: 96, height: 96))) == nil
        )
    }

    @Test func malformedFilesFailWithACodecErrorOrAreLeftToTheRGBDecode() throws {
        // Every malformed JPEG of the corpus: nil or a typed error, never a crash or any other error
        for url in try corpusFiles("jpeg/malformed", ext: "jpg") {
            do {
                _ = try JPEGDecoder().decodeYCbCr(try Data(contentsOf: url), options: Self.box)
            } catch {
                #expect(error is CodecError, "\(url.lastPathComponent): \(error)")
            }
        }
    }

    @Test func chromaPlanesOfTheWrongSizeAreRefusedByTheEncoder() throws {
        let y = try PixelBuffer(width: 8, height: 8, format: .gray8)
        let chroma = try PixelBuffer(width: 3, height: 4, format: .gray8)
        #expect(throws: CodecError.self) {
            try WebPEncoder().encode(YCbCrImage(y: y, cb: chroma, cr: chroma), options: EncodingOptions())
        }
    }
}
