import CTIFF
import Foundation
import ImagoCodecs
import ImagoCore
import ImagoTesting
import Testing

/// TIFFDecoder on files written here with libtiff itself: exact pixels for 8-bit RGB(A), 16-bit grey reduced
/// to 8 bits, the Orientation tag applied (or returned), an embedded colour profile applied, the first page of a
/// multi-page file, and typed errors.
@Suite struct TIFFDecoderTests {
    /// One page to write: `samples` interleaved values per pixel, row-major.
    struct Page {
        var width: Int
        var height: Int
        var samplesPerPixel: Int
        var bitsPerSample: Int = 8
        var photometric: Int32 = PHOTOMETRIC_RGB
        var extraSample: UInt16?
        var orientation: Int = 1
        var compression: Int32 = COMPRESSION_LZW
        var iccProfile: Data?
        /// Text tags (TIFFTAG_ARTIST…) and array tags (TIFFTAG_XMLPACKET…), counted in the tag's own values.
        var strings: [UInt32: String] = [:]
        var blobs: [UInt32: Data] = [:]
        var samples: [UInt16]
    }

    /// Writes `pages` to a temporary TIFF with libtiff and returns its bytes.
    static func tiff(_ pages: [Page]) throws -> Data {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("imago-tiff-\(UUID().uuidString).tif")
        defer { try? FileManager.default.removeItem(at: url) }
        let file = try #require(TIFFOpen(url.path, "w"))
        for page in pages {
            _ = imago_tiff_set_uint32(file, UInt32(TIFFTAG_IMAGEWIDTH), UInt32(page.width))
            _ = imago_tiff_set_uint32(file, UInt32(TIFFTAG_IMAGELENGTH), UInt32(page.height))
            _ = imago_tiff_set_uint16(file, UInt32(TIFFTAG_SAMPLESPERPIXEL), UInt16(page.samplesPerPixel))
            _ = imago_tiff_set_uint16(file, UInt32(TIFFTAG_BITSPERSAMPLE), UInt16(page.bitsPerSample))
            _ = imago_tiff_set_uint16(file, UInt32(TIFFTAG_PHOTOMETRIC), UInt16(page.photometric))
            _ = imago_tiff_set_uint16(file, UInt32(TIFFTAG_COMPRESSION), UInt16(page.compression))
            _ = imago_tiff_set_uint16(file, UInt32(TIFFTAG_PLANARCONFIG), UInt16(PLANARCONFIG_CONTIG))
            _ = imago_tiff_set_uint16(file, UInt32(TIFFTAG_ORIENTATION), UInt16(page.orientation))
            _ = imago_tiff_set_uint32(file, UInt32(TIFFTAG_ROWSPERSTRIP), 4)
            if var extra = page.extraSample { _ = imago_tiff_set_extra_samples(file, 1, &extra) }
            if let icc = page.iccProfile {
                _ = icc.withUnsafeBytes {
                    imago_tiff_set_bytes(file, UInt32(TIFFTAG_ICCPROFILE), UInt32(icc.count), $0.baseAddress)
                }
            }
            for (tag, text) in page.strings { _ = imago_tiff_set_string(file, tag, text) }
            for (tag, blob) in page.blobs {
                let width = max(1, Int(TIFFDataWidth(TIFFFieldDataType(TIFFFieldWithTag(file, tag)))))
                let count = blob.count / width
                _ = blob.withUnsafeBytes { imago_tiff_set_bytes(file, tag, UInt32(count), $0.baseAddress) }
            }
            let rowSamples = page.width * page.samplesPerPixel
            for y in 0..<page.height {
                var row = Array(page.samples[(y * rowSamples)..<((y + 1) * rowSamples)])
                let written =
                    page.bitsPerSample == 16
                    ? row.withUnsafeMutableBytes { TIFFWriteScanline(file, $0.baseAddress, UInt32(y), 0) }
                    : row.map { UInt8($0) }.withUnsafeBytes {
                        TIFFWriteScanline(file, UnsafeMutableRawPointer(mutating: $0.baseAddress), UInt32(y), 0)
                    }
                #expect(written == 1)
            }
            #expect(TIFFWriteDirectory(file) == 1)
        }
        TIFFClose(file)
        return try Data(contentsOf: url)
    }

    /// A 3x2 RGB page whose six pixels all differ: (x, y) → (40x + 1, 100y + 2, 7 + x + 10y).
    static func distinctRGB(orientation: Int = 1, base: UInt16 = 0) -> Page {
        var samples: [UInt16] = []
        for y in 0..<2 {
            for x in 0..<3 { samples += [base + UInt16(40 * x + 1), UInt16(100 * y + 2), UInt16(7 + x + 10 * y)] }
        }
        return Page(width: 3, height: 2, samplesPerPixel: 3, orientation: orientation, samples: samples)
    }

    @Test func rgbDecodesExactly() throws {
        let data = try Self.tiff([Self.distinctRGB()])
        let container = try TIFFDecoder().decode(data, options: DecodingOptions())
        #expect(container.format == .tiff)
        #expect(container.image.size == PixelSize(width: 3, height: 2))
        #expect(container.image[pixel: 2, 1] == RGBA(r: 81, g: 102, b: 19, a: 255))
        #expect(container.image[pixel: 0, 0] == RGBA(r: 1, g: 2, b: 7, a: 255))
        #expect(container.image.isKnownOpaque)
        #expect(container.bitDepth == 8)
    }

    @Test(arguments: ExifOrientation.allCases)
    func orientationTagIsAppliedLikeEXIF(_ orientation: ExifOrientation) throws {
        // Given the same pixels stored with each Orientation tag
        let data = try Self.tiff([Self.distinctRGB(orientation: orientation.rawValue)])
        let upright = try TIFFDecoder().decode(try Self.tiff([Self.distinctRGB()]), options: DecodingOptions())

        // When decoded with and without applying it
        let applied = try TIFFDecoder().decode(data, options: DecodingOptions())
        let returned = try TIFFDecoder().decode(data, options: DecodingOptions(appliesOrientation: false))

        // Then applying is the same as turning the stored pixels as EXIF says; otherwise the tag comes back
        #expect(applied.orientation == .up)
        #expect(applied.image == upright.image.oriented(orientation).assumingOpaque())
        #expect(returned.orientation == orientation)
        #expect(returned.image == upright.image)
    }

    @Test func anEmbeddedProfileIsAppliedAsTheColourPolicySays() throws {
        // The corpus's Display P3 photograph: its stored numbers and profile (by the JPEG decoder), written into a
        // TIFF by libtiff with that profile in its ICCProfile tag.
        var keep = DecodingOptions()
        keep.colorPolicy = .keep
        let jpeg = try corpusData("icc/gen-kodim03-displayp3-v4.jpg")
        let stored = try JPEGDecoder().decode(jpeg, options: keep)
        let profile = try #require(stored.colorProfile)
        let (width, height) = (32, 16)
        var samples: [UInt16] = []
        for y in 0..<height {
            for x in 0..<width {
                let pixel = stored.image[pixel: x + 100, y + 80]
                samples += [UInt16(pixel.r), UInt16(pixel.g), UInt16(pixel.b)]
            }
        }
        let tiff = try Self.tiff([
            Page(width: width, height: height, samplesPerPixel: 3, iccProfile: profile.data, samples: samples)
        ])
        let converted = try JPEGDecoder().decode(jpeg, options: DecodingOptions()).image

        // By default, converted to sRGB as the JPEG decoder converts the same numbers
        let srgb = try TIFFDecoder().decode(tiff, options: DecodingOptions())
        #expect(srgb.colorProfile == nil && srgb.sourceColorProfileDescription == profile.description)
        var changed = 0
        for y in 0..<height {
            for x in 0..<width {
                #expect(srgb.image[pixel: x, y] == converted[pixel: x + 100, y + 80])
                if srgb.image[pixel: x, y] != stored.image[pixel: x + 100, y + 80] { changed += 1 }
            }
        }
        #expect(changed > width * height / 2)
        // Kept: the numbers as stored, and the profile byte for byte
        let kept = try TIFFDecoder().decode(tiff, options: keep)
        #expect(kept.colorProfile?.data == profile.data)
        #expect(kept.image[pixel: 5, 5] == stored.image[pixel: 105, 85])
    }

    @Test func multiPageFileGivesItsFirstPage() throws {
        let data = try Self.tiff([Self.distinctRGB(base: 0), Self.distinctRGB(base: 5), Self.distinctRGB(base: 9)])
        let container = try TIFFDecoder().decode(data, options: DecodingOptions())
        #expect(container.frames.count == 1)
        #expect(container.image[pixel: 0, 0].r == 1)
    }

    @Test func alphaStraightAndAssociated() throws {
        // Given a 2x1 RGBA page: opaque red, and half-transparent (128) green stored straight or premultiplied
        let straight = Page(
            width: 2, height: 1, samplesPerPixel: 4, extraSample: UInt16(EXTRASAMPLE_UNASSALPHA),
            samples: [255, 0, 0, 255, 0, 200, 0, 128])
        let associated = Page(
            width: 2, height: 1, samplesPerPixel: 4, extraSample: UInt16(EXTRASAMPLE_ASSOCALPHA),
            samples: [255, 0, 0, 255, 0, 100, 0, 128])

        // When decoded, Then both give straight alpha
        let a = try TIFFDecoder().decode(try Self.tiff([straight]), options: DecodingOptions()).image
        let b = try TIFFDecoder().decode(try Self.tiff([associated]), options: DecodingOptions()).image
        // (libtiff's RGBA interface premultiplies straight alpha too: 200 → 100 → 199)
        #expect(abs(Int(a[pixel: 1, 0].g) - 200) <= 1 && a[pixel: 1, 0].a == 128)
        #expect(a[pixel: 0, 0] == RGBA(r: 255, g: 0, b: 0, a: 255))
        #expect(abs(Int(b[pixel: 1, 0].g) - 199) <= 1 && b[pixel: 1, 0].a == 128)
        #expect(a.alphaMode == .straight && b.alphaMode == .straight)
    }

    @Test func sixteenBitGreyIsReducedToEightBits() throws {
        let page = Page(
            width: 2, height: 1, samplesPerPixel: 1, bitsPerSample: 16, photometric: PHOTOMETRIC_MINISBLACK,
            samples: [0xFFFF, 0x8080])
        let container = try TIFFDecoder().decode(try Self.tiff([page]), options: DecodingOptions())
        #expect(container.bitDepth == 16)
        #expect(container.image[pixel: 0, 0] == RGBA(r: 255, g: 255, b: 255, a: 255))
        #expect(container.image[pixel: 1, 0].r == 0x80)
    }

    @Test func targetSizeFitsTheDisplayedImage() throws {
        var page = Self.distinctRGB(orientation: ExifOrientation.right.rawValue)
        page.width = 30
        page.height = 20
        page.samples = (0..<(30 * 20 * 3)).map { UInt16($0 % 251) }
        let container = try TIFFDecoder().decode(
            try Self.tiff([page]), options: DecodingOptions(targetSize: PixelSize(width: 10, height: 10)))
        #expect(container.image.size == PixelSize(width: 7, height: 10))
        #expect(container.originalSize == PixelSize(width: 20, height: 30))
    }

    @Test(.timeLimit(.minutes(1)))
    func badInputFailsWithTypedErrors() throws {
        let data = try Self.tiff([Self.distinctRGB()])
        #expect(throws: CodecError.empty) { try TIFFDecoder().decode(Data(), options: DecodingOptions()) }
        #expect(throws: CodecError.tooManyPixels(width: 3, height: 2, limit: 5)) {
            try TIFFDecoder().decode(data, options: DecodingOptions(pixelLimit: 5))
        }
        // Every truncation of the file fails with a CodecError or decodes; libtiff never prints or crashes
        for length in stride(from: 1, to: data.count, by: 7) {
            do {
                _ = try TIFFDecoder().decode(data.prefix(length), options: DecodingOptions())
            } catch {
                #expect(error is CodecError)
            }
        }
        #expect(throws: CodecError.self) {
            try TIFFDecoder().decode(Data("II*\0garbage".utf8), options: DecodingOptions())
        }
    }

    @Test func theDefaultRegistrySniffsTIFF() throws {
        let data = try Self.tiff([Self.distinctRGB()])
        #expect(try ImageDecoderRegistry(ImagoCodecs.decoders).decode(data).format == .tiff)
    }

    /// Metadata libtiff itself wrote: XMP, bare IPTC-IIM (as a Photoshop block) and IFD0's text tags as EXIF.
    @Test func metadataWrittenByLibtiffIsRead() throws {
        var page = Self.distinctRGB()
        page.strings = [
            UInt32(TIFFTAG_ARTIST): MetadataFixture.artist, UInt32(TIFFTAG_COPYRIGHT): MetadataFixture.copyright,
            UInt32(TIFFTAG_MAKE): "Canon",
        ]
        let iim = Data([0x1C, 0x02, 0x74, 0x00, 0x04]) + Data("(c)X".utf8) + Data([0, 0, 0])  // 2:116, 3 pad bytes
        page.blobs = [UInt32(TIFFTAG_XMLPACKET): MetadataFixture.xmp, UInt32(TIFFTAG_RICHTIFFIPTC): iim]
        var options = DecodingOptions()
        options.readsMetadata = true
        let metadata = try #require(try TIFFDecoder().decode(try Self.tiff([page]), options: options).metadata)
        #expect(metadata.xmp == MetadataFixture.xmp)
        #expect(
            metadata.iptc == Data("8BIM".utf8) + Data([4, 4, 0, 0, 0, 0, 0, 12]) + iim,
            "\(Array(metadata.iptc ?? Data()))")
        let exif = try #require(metadata.exif)
        let strings: [UInt16: String] = exif.withUnsafeBytes { raw in
            let entries = ExifReader.ifd0(inRawBytes: raw)?.entries ?? []
            return Dictionary(
                uniqueKeysWithValues: entries.compactMap { entry in
                    ExifReader.byteValue(of: entry, inRawBytes: raw).map {
                        (entry.tag, String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self))
                    }
                })
        }
        #expect(strings == [0x010F: "Canon", 0x013B: MetadataFixture.artist, 0x8298: MetadataFixture.copyright])
        // Not asked for, not read; a file without any has none
        #expect(try TIFFDecoder().decode(try Self.tiff([page]), options: DecodingOptions()).metadata == nil)
        #expect(try TIFFDecoder().decode(try Self.tiff([Self.distinctRGB()]), options: options).metadata == nil)
    }

    /// The encoder's metadata, read back by libtiff's own tag getters.
    @Test func theEncoderWritesXMPIPTCAndTheEXIFTextTags() throws {
        var image = try PixelBuffer(width: 4, height: 3)
        image[pixel: 1, 1] = RGBA(r: 200, g: 10, b: 10)
        let given = MetadataFixture.metadata()
        let data = try TIFFEncoder().encode(image, options: EncodingOptions(metadata: given))
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("imago-tiff-\(UUID().uuidString).tif")
        defer { try? FileManager.default.removeItem(at: url) }
        try data.write(to: url)
        let file = try #require(TIFFOpen(url.path, "r"))
        defer { TIFFClose(file) }
        func text(_ tag: Int32) -> String? {
            var value: UnsafePointer<CChar>?
            return imago_tiff_get_string(file, UInt32(tag), &value) != 0 ? value.map { String(cString: $0) } : nil
        }
        func blob(_ tag: Int32) -> Data? {
            var count: UInt32 = 0
            var pointer: UnsafeRawPointer?
            guard imago_tiff_get_bytes(file, UInt32(tag), &count, &pointer) != 0, let pointer else { return nil }
            return Data(bytes: pointer, count: Int(count))
        }
        #expect(text(TIFFTAG_ARTIST) == MetadataFixture.artist && text(TIFFTAG_COPYRIGHT) == MetadataFixture.copyright)
        #expect(text(TIFFTAG_MAKE) == "Canon")
        #expect(blob(TIFFTAG_XMLPACKET) == given.xmp && blob(TIFFTAG_PHOTOSHOP) == given.iptc)
        // The page stays upright whatever the EXIF orientation said
        var orientation: UInt16 = 0
        #expect(imago_tiff_get_uint16(file, UInt32(TIFFTAG_ORIENTATION), &orientation) != 0 && orientation == 1)
        // And the decoder gives the blocks back (EXIF as its text tags)
        var options = DecodingOptions()
        options.readsMetadata = true
        let again = try #require(try TIFFDecoder().decode(data, options: options).metadata)
        #expect(again.xmp == given.xmp && again.iptc == given.iptc)
        #expect(ImageMetadata(exif: again.exif).copyrightOnly == ImageMetadata(exif: given.exif).copyrightOnly)
        #expect(ImageMetadata(exif: again.exif).copyrightOnly != nil)
    }
}
