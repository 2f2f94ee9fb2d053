import Foundation
import ImagoCore
import ImagoTesting
import Testing

@testable import ImagoCodecs

/// A JPEG's own Y, Cb and Cr planes, resampled and handed to libwebp without a trip through RGB.
@Suite struct JPEGYCbCrTests {
    static let box = DecodingOptions(targetSize: PixelSize(width: 256, height: 256))

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
                ImagoTesting.psnr(viaYCbCr, reference), ImagoTesting.psnr(viaRGB, reference),
                ImagoTesting.psnr(viaYCbCr, viaRGB)
            )
            #expect(ycbcr > rgb - 1, "Kodak \(name): \(ycbcr) dB against \(rgb) dB")
            #expect(ycbcr > 30 && between > 35, "Kodak \(name): \(ycbcr) dB, \(between) dB between")
        }
    }

    @Test func theLumaPlaneIsTheRGBDecodesLuma() throws {
        // Kodak 23 fitted into 256 × 256, and at its own size cut to 501 × 333 (odd sides, which TurboJPEG pads in
        // its luma plane): the BT.601 luma of the RGB decode (JFIF's full range), within a level on average, and
        // within rounding where nothing is resampled
        let photo = try PNGDecoder().decode(try corpusData("kodak/23.png"), options: DecodingOptions()).image
        let odd = try ImageProcessors.Crop(x: 3, y: 5, width: 501, height: 333).process(photo)
        let cases = [
            (try Self.kodakJPEG("23"), Self.box, 1.0),
            (try JPEGEncoder().encode(odd, options: EncodingOptions(quality: 0.9)), DecodingOptions(), 0.6),
        ]
        for (jpeg, options, bound) in cases {
            let reference = try JPEGDecoder().decode(jpeg, options: options).image
            let planes = try #require(try JPEGDecoder().decodeYCbCr(jpeg, options: options)).image
            #expect(planes.y.size == reference.size)
            #expect(planes.cb.size == YCbCrImage.chromaSize(of: reference.size))
            var total = 0.0
            for y in 0..<reference.height {
                for x in 0..<reference.width {
                    let p = reference[pixel: x, y]
                    let luma = 0.299 * Double(p.r) + 0.587 * Double(p.g) + 0.114 * Double(p.b)
                    let actual = planes.y.withUnsafeBytes { Double($0[y * planes.y.bytesPerRow + x]) }
                    total += abs(actual - luma)
                }
            }
            let mean = total / Double(reference.width * reference.height)
            #expect(mean < bound, "\(reference.size): mean \(mean)")
        }
    }

    @Test func oddSidesAreEncodedFromThePlanesAlone() throws {
        // TurboJPEG reads the luma plane padded to even sides: the encoder pads it itself, so nothing outside the
        // planes is read (an unpadded plane gave a different last row of blocks from one encode to the next)
        let photo = try PNGDecoder().decode(try corpusData("kodak/23.png"), options: DecodingOptions()).image
        let jpeg = try JPEGEncoder().encode(photo, options: EncodingOptions(quality: 0.9))
        let planes = try #require(
            try JPEGDecoder().decodeYCbCr(
                jpeg, options: DecodingOptions(targetSize: PixelSize(width: 255, height: 255)))
        ).image
        #expect(planes.size == PixelSize(width: 255, height: 170))
        let first = try JPEGEncoder().encode(planes, options: EncodingOptions(quality: 0.8))
        for _ in 0..<8 {
            _ = [UInt8](repeating: 0xA5, count: 1 << 16)  // heap churn between encodes
            #expect(try JPEGEncoder().encode(planes, options: EncodingOptions(quality: 0.8)) == first)
        }
        // A flat picture with odd sides stays flat to its last row and column: the padding repeats the edge (no
        // bytes from beyond the plane, which would put a different block at the bottom and the right)
        let flat = YCbCrImage(
            y: try PixelBuffer(width: 255, height: 171, format: .gray8, bytes: .init(repeating: 200, count: 255 * 171)),
            cb: try PixelBuffer(width: 128, height: 86, format: .gray8, bytes: .init(repeating: 128, count: 128 * 86)),
            cr: try PixelBuffer(width: 128, height: 86, format: .gray8, bytes: .init(repeating: 128, count: 128 * 86)))
        let flatJPEG = try JPEGDecoder().decode(
            try JPEGEncoder().encode(flat, options: EncodingOptions(quality: 0.9)), options: DecodingOptions()
        ).image
        var worst = 0
        for y in 0..<flatJPEG.height {
            for x in 0..<flatJPEG.width { worst = max(worst, abs(Int(flatJPEG[pixel: x, y].g) - 200)) }
        }
        #expect(worst <= 1)
        let decoded = try JPEGDecoder().decode(first, options: DecodingOptions()).image
        let reference = try JPEGDecoder().decode(
            jpeg, options: DecodingOptions(targetSize: PixelSize(width: 255, height: 255))
        ).image
        #expect(decoded.size == reference.size && ImagoTesting.psnr(decoded, reference) > 30)
    }

    @Test func aJPEGThumbnailEncodedFromThePlanesIsTheRGBPathsWithinRounding() throws {
        // The planes written as a JPEG (no colour conversion, no chroma downsampling) against the RGB decode
        // encoded at the same quality: the same size, the same look, baseline or progressive as asked
        for name in ["01", "04", "23"] {
            let jpeg = try Self.kodakJPEG(name)
            let reference = try JPEGDecoder().decode(jpeg, options: Self.box).image
            let planes = try #require(try JPEGDecoder().decodeYCbCr(jpeg, options: Self.box)).image
            let options = EncodingOptions(quality: 0.8)
            let viaYCbCr = try JPEGDecoder().decode(
                try JPEGEncoder().encode(planes, options: options), options: DecodingOptions()
            ).image
            let viaRGB = try JPEGDecoder().decode(
                try JPEGEncoder().encode(reference, options: options), options: DecodingOptions()
            ).image
            #expect(viaYCbCr.size == reference.size)
            let (ycbcr, rgb) = (ImagoTesting.psnr(viaYCbCr, reference), ImagoTesting.psnr(viaRGB, reference))
            #expect(
                ycbcr > rgb - 1 && ImagoTesting.psnr(viaYCbCr, viaRGB) > 36, "Kodak \(name): \(ycbcr) against \(rgb) dB"
            )
        }
        let planes = try #require(try JPEGDecoder().decodeYCbCr(try Self.kodakJPEG("23"), options: Self.box)).image
        let progressive = try JPEGEncoder(isProgressive: true).encode(planes, options: EncodingOptions(quality: 0.8))
        #expect(progressive.contains(Data([0xFF, 0xC2])) && !progressive.contains(Data([0xFF, 0xC0])))
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
        #expect(ImagoTesting.psnr(decoded, reference) > 30)
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

    @Test func theCallerIsAskedForThePlanesSizeBeforeAnythingIsDecoded() throws {
        // Asked once, with the size the planes come out at; refused, no planes
        let jpeg = try Self.kodakJPEG("13")
        var asked: [PixelSize] = []
        let planes = try #require(
            try JPEGDecoder().decodeYCbCr(jpeg, options: Self.box) { size in
                asked.append(size)
                return true
            })
        #expect(asked == [planes.image.size])
        #expect(try JPEGDecoder().decodeYCbCr(jpeg, options: Self.box) { _ in false } == nil)
        // Before the decode: a progressive file whose second scan declares a spectral band past 63 (a fatal error
        // of libjpeg's once it reaches that scan, after the header) gives no planes and no error when refused
        var broken = [UInt8](try Self.kodakJPEG("13", progressive: true))
        let scans = broken.indices.dropLast().filter { broken[$0] == 0xFF && broken[$0 + 1] == 0xDA }
        try #require(scans.count > 2)
        let second = scans[1]
        let components = Int(broken[second + 4])
        broken[second + 5 + 2 * components + 1] = 0x7F  // Se
        let data = Data(broken)
        #expect(throws: CodecError.self) { try JPEGDecoder().decodeYCbCr(data, options: Self.box) }
        #expect(try JPEGDecoder().decodeYCbCr(data, options: Self.box) { _ in false } == nil)
    }

    @Test func cropsAtEvenOffsetsCutTheChromaAtHalfThem() throws {
        // Luma 0…255 along x, chroma the same at half the resolution: a cut at (4, 2) starts at luma 4, chroma 2
        let y = try PixelBuffer(width: 10, height: 6, format: .gray8) { out in
            for i in 0..<out.count { out[i] = UInt8(i % 10) }
        }
        let chroma = try PixelBuffer(width: 5, height: 3, format: .gray8) { out in
            for i in 0..<out.count { out[i] = UInt8(i % 5) }
        }
        let image = YCbCrImage(y: y, cb: chroma, cr: chroma)
        let cut = try #require(try image.cropped(x: 4, y: 2, size: PixelSize(width: 5, height: 3)))
        #expect(cut.size == PixelSize(width: 5, height: 3) && cut.cb.size == PixelSize(width: 3, height: 2))
        #expect(cut.y[pixel: 0, 0].r == 4 && cut.cb[pixel: 0, 0].r == 2 && cut.cr[pixel: 2, 1].r == 4)
        // An odd offset would split chroma samples: left to the RGB path
        #expect(try image.cropped(x: 3, y: 2, size: PixelSize(width: 4, height: 2)) == nil)
        #expect(try image.cropped(x: 2, y: 1, size: PixelSize(width: 4, height: 2)) == nil)
    }

    @Test func chromaPlanesOfTheWrongSizeAreRefusedByTheEncoders() throws {
        let y = try PixelBuffer(width: 8, height: 8, format: .gray8)
        let chroma = try PixelBuffer(width: 3, height: 4, format: .gray8)
        let image = YCbCrImage(y: y, cb: chroma, cr: chroma)
        #expect(throws: CodecError.self) { try WebPEncoder().encode(image, options: EncodingOptions()) }
        #expect(throws: CodecError.self) { try JPEGEncoder().encode(image, options: EncodingOptions()) }
        // Odd sizes: chroma rounded up
        let odd = YCbCrImage(
            y: try PixelBuffer(width: 7, height: 5, format: .gray8),
            cb: try PixelBuffer(width: 4, height: 3, format: .gray8),
            cr: try PixelBuffer(width: 4, height: 3, format: .gray8))
        #expect(
            try JPEGDecoder().decode(
                try JPEGEncoder().encode(odd, options: EncodingOptions()), options: DecodingOptions()
            ).image.size == PixelSize(width: 7, height: 5))
        #expect(
            try WebPDecoder().decode(
                try WebPEncoder().encode(odd, options: EncodingOptions()), options: DecodingOptions()
            ).image.size == PixelSize(width: 7, height: 5))
    }
}
