import CAVIF
import Foundation
import ImagoCore
import ImagoTesting
import ImagoZlib
import Testing

@testable import ImagoCodecs

/// EXIF, XMP and IPTC: read by the JPEG, PNG, WebP, AVIF and HEIC decoders, written back byte for byte by their
/// encoders, and filtered to the copyright (imgproxy's `keep_copyright`) or turned upright.
@Suite struct MetadataTests {
    static var readingMetadata: DecodingOptions {
        var options = DecodingOptions()
        options.readsMetadata = true
        return options
    }

    static func image() throws -> PixelBuffer {
        var image = try PixelBuffer(width: 24, height: 16)
        for y in 0..<16 { for x in 0..<24 { image[pixel: x, y] = RGBA(r: UInt8(x * 10), g: UInt8(y * 15), b: 90) } }
        return image.assumingOpaque()
    }

    @Test func aRealJPEGsEXIFAndXMPAreRead() throws {
        let jpeg = try corpusData("icc/libavif-paris_exif_xmp_icc.jpg")
        let metadata = try #require(try JPEGDecoder().decode(jpeg, options: Self.readingMetadata).metadata)
        #expect(metadata.exif.map { ExifEditing.hasTIFFHeader($0) } == true)
        #expect(metadata.exif?.count == 1134 - 2 - 6)  // the APP1 segment's payload after `Exif\0\0`
        #expect(metadata.xmp.map { String(decoding: $0, as: UTF8.self).contains("x:xmpmeta") } == true)
        #expect(metadata.iptc == nil)
        // Not asked for: not read
        #expect(try JPEGDecoder().decode(jpeg, options: DecodingOptions()).metadata == nil)
    }

    @Test(arguments: [ImageFormat.jpeg, .png, .webp, .avif, .heic, .jpegXL])
    func blocksAreWrittenAndReadBackByteForByte(format: ImageFormat) throws {
        if format == .heic, !HEICEncoder.isAvailable { return }  // libheif without an HEVC encoder writes no HEIC
        // Orientation 1: the decoders apply an EXIF orientation, and the pixels are compared below
        let given = MetadataFixture.metadata(orientation: 1)
        let registry = ImageEncoderRegistry(ImagoCodecs.encoders)
        let encoded = try registry.encode(try Self.image(), as: format, options: EncodingOptions(metadata: given))
        let decoded = try ImageDecoderRegistry(ImagoCodecs.decoders).decode(encoded, options: Self.readingMetadata)
        #expect(decoded.metadata?.exif == given.exif)
        #expect(decoded.metadata?.xmp == given.xmp)
        // Only JPEG has a place for IPTC
        #expect(decoded.metadata?.iptc == (format == .jpeg ? given.iptc : nil))
        // The pixels are untouched by the blocks beside them (the lossless formats give them back)
        if format == .png { #expect(decoded.image.bytes == (try Self.image()).bytes) }
        if format == .jpegXL {
            // A container with the two boxes beside the codestream, EXIF after a zero offset
            let boxes = Self.jpegXLBoxes(encoded)
            #expect(boxes.map(\.type).starts(with: ["JXL ", "ftyp"]))
            #expect(boxes.contains { $0.type == "jxlc" || $0.type == "jxlp" })
            #expect(boxes.first { $0.type == "Exif" }?.contents == Data([0, 0, 0, 0]) + (given.exif ?? Data()))
            #expect(boxes.first { $0.type == "xml " }?.contents == given.xmp)
            // Without metadata, still a bare codestream
            let bare = try JPEGXLEncoder().encode(try Self.image(), options: EncodingOptions())
            #expect(bare.starts(with: [0xFF, 0x0A]))
        }
        if format == .avif {
            // libavif itself sees them as the file's metadata items
            let decoder = try #require(avifDecoderCreate())
            defer { avifDecoderDestroy(decoder) }
            let read = encoded.withUnsafeBytes { bytes in
                avifDecoderSetIOMemory(decoder, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count)
                    == AVIF_RESULT_OK && avifDecoderParse(decoder) == AVIF_RESULT_OK
            }
            #expect(read)
            let image = try #require(decoder.pointee.image)
            #expect(Data(bytes: image.pointee.exif.data, count: image.pointee.exif.size) == given.exif)
        }
    }

    /// The top-level boxes of a JPEG XL container, by an independent walk of ISO BMFF's box headers.
    static func jpegXLBoxes(_ data: Data) -> [(type: String, contents: Data)] {
        let bytes = [UInt8](data)
        var boxes: [(String, Data)] = []
        var at = 0
        while at + 8 <= bytes.count {
            var size = Int(bytes[at]) << 24 | Int(bytes[at + 1]) << 16 | Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
            var header = 8
            if size == 1, at + 16 <= bytes.count {
                size = bytes[(at + 8)..<(at + 16)].reduce(0) { $0 << 8 | Int($1) }
                header = 16
            } else if size == 0 {
                size = bytes.count - at
            }
            guard size >= header, at + size <= bytes.count else { break }
            boxes.append(
                (
                    String(decoding: bytes[(at + 4)..<(at + 8)], as: UTF8.self),
                    Data(bytes[(at + header)..<(at + size)])
                ))
            at += size
        }
        return boxes
    }

    /// Real JPEG XL files from the conformance set: their `Exif` and `xml ` boxes, as an independent walk finds
    /// them; a bare codestream has none.
    @Test(arguments: ["conformance-bench_oriented_brg.jxl", "conformance-patches_lossless.jxl"])
    func aRealJPEGXLsBoxesAreRead(_ name: String) throws {
        let data = try corpusData("jxl/" + name)
        let metadata = try #require(try JPEGXLDecoder().decode(data, options: Self.readingMetadata).metadata)
        let boxes = Self.jpegXLBoxes(data)
        let exifBox = try #require(boxes.first { $0.type == "Exif" }?.contents)
        #expect(metadata.exif.map { ExifEditing.hasTIFFHeader($0) } == true)
        #expect(metadata.exif == ExifBox.block(in: exifBox))
        #expect(metadata.exif.map { exifBox.count - 4 >= $0.count } == true)
        #expect(metadata.xmp == boxes.first { $0.type == "xml " }?.contents)
        #expect(try JPEGXLDecoder().decode(data, options: DecodingOptions()).metadata == nil)
        let bare = try corpusData("jxl/gen-kodim03-lossless.jxl")
        #expect(try JPEGXLDecoder().decode(bare, options: Self.readingMetadata).metadata == nil)
        // The offset is honoured, and one past the end refused
        let tiff = Data("MM\0*".utf8) + Data([0, 0, 0, 8])
        #expect(ExifBox.block(in: Data([0, 0, 0, 2, 9, 9]) + tiff) == tiff)
        #expect(ExifBox.block(in: Data([0, 0, 1, 0]) + tiff) == nil)
        #expect(ExifBox.block(in: (Data([7, 7, 0, 0, 0, 2, 9, 9]) + tiff).dropFirst(2)) == tiff)  // a slice
        // Bytes that are not TIFF are handed on as the other decoders hand them on (found by the fuzzer)
        #expect(ExifBox.block(in: Data([0, 0, 0, 0, 0x12, 0])) == Data([0x12, 0]))
        #expect(ExifBox.block(in: Data([0, 0, 0, 2, 0x12, 0])) == nil)
    }

    @Test func anAVIFWhoseEXIFItemIsBrokenStillDecodes() throws {
        let encoded = try AVIFEncoder().encode(
            try Self.image(),
            options: EncodingOptions(metadata: ImageMetadata(exif: MetadataFixture.exif(orientation: 1))))
        // The TIFF header of the EXIF item made unrecognisable
        var bytes = [UInt8](encoded)
        let header: [UInt8] = [0x4D, 0x4D, 0x00, 0x2A]
        let at = try #require((0...(bytes.count - 4)).first { Array(bytes[$0..<($0 + 4)]) == header })
        bytes[at] = 0x58
        bytes[at + 1] = 0x58
        let decoded = try AVIFDecoder().decode(Data(bytes), options: Self.readingMetadata)
        #expect(decoded.image.size == PixelSize(width: 24, height: 16))
        #expect(decoded.metadata?.exif.map { ExifEditing.hasTIFFHeader($0) } != true)
    }

    /// An EXIF block in `bigEndian` or little-endian order whose IFD0 holds `ImageWidth` (SHORT 4000) and the
    /// EXIF pointer, and whose EXIF sub-IFD holds `PixelXDimension` (LONG 4000) and `PixelYDimension` (SHORT
    /// 3000); the value fields of those three are at 18, 48 and 60.
    static func sizedEXIF(bigEndian: Bool) -> Data {
        func u16(_ v: Int) -> [UInt8] {
            bigEndian ? [UInt8(v >> 8), UInt8(v & 255)] : [UInt8(v & 255), UInt8(v >> 8)]
        }
        func u32(_ v: Int) -> [UInt8] { bigEndian ? u16(v >> 16) + u16(v & 0xFFFF) : u16(v & 0xFFFF) + u16(v >> 16) }
        var bytes: [UInt8] = (bigEndian ? Array("MM".utf8) : Array("II".utf8)) + u16(42) + u32(8)
        bytes += u16(2) + u16(0x0100) + u16(3) + u32(1) + u16(4000) + [0, 0]  // value field at 18
        bytes += u16(0x8769) + u16(4) + u32(1) + u32(38) + u32(0)
        bytes += u16(2) + u16(0xA002) + u16(4) + u32(1) + u32(4000)  // value field at 48
        bytes += u16(0xA003) + u16(3) + u32(1) + u16(3000) + [0, 0] + u32(0)  // value field at 60
        return Data(bytes)
    }

    @Test(arguments: [false, true])
    func sizedSetsTheEXIFImageSizeInPlace(bigEndian: Bool) throws {
        let exif = Self.sizedEXIF(bigEndian: bigEndian)
        let sized = ImageMetadata(exif: exif, xmp: MetadataFixture.xmp).sized(PixelSize(width: 200, height: 150))
        let bytes = [UInt8](try #require(sized.exif))
        func value(_ at: Int, _ width: Int) -> Int {
            let field = Array(bytes[at..<(at + width)])
            return (bigEndian ? field : field.reversed()).reduce(0) { $0 << 8 | Int($1) }
        }
        #expect(value(18, 2) == 200 && value(48, 4) == 200 && value(60, 2) == 150)
        #expect(bytes.count == exif.count && sized.xmp == MetadataFixture.xmp, "patched in place, XMP untouched")
        // A side a SHORT cannot hold leaves that SHORT as it was; a block without the tags is unchanged
        let huge = [UInt8](try #require(ImageMetadata(exif: exif).sized(PixelSize(width: 70_000, height: 150)).exif))
        #expect(Array(huge[18..<20]) == Array(exif[18..<20]) && huge != [UInt8](exif))
        let plain = MetadataFixture.exif(orientation: 1)
        #expect(ImageMetadata(exif: plain).sized(PixelSize(width: 1, height: 1)).exif == plain)
        #expect(ImageMetadata(exif: Data([1, 2, 3])).sized(PixelSize(width: 1, height: 1)).exif == Data([1, 2, 3]))
    }

    @Test func copyrightOnlyKeepsWhoMadeTheImageAndItsRights() throws {
        let kept = try #require(MetadataFixture.metadata().copyrightOnly)
        // EXIF: Artist and Copyright only, in a new little-endian block
        let exif = [UInt8](try #require(kept.exif))
        let entries = try #require(exif.withUnsafeBytes { ExifReader.ifd0(inRawBytes: $0) }?.entries)
        #expect(entries.map(\.tag) == [0x013B, 0x8298])
        let text = String(decoding: exif, as: UTF8.self)
        #expect(text.contains(MetadataFixture.copyright) && text.contains(MetadataFixture.artist))
        #expect(!text.contains("Canon"))
        // XMP: rights, creator and xmpRights; not the city, the tool or the keywords
        let xmp = String(decoding: try #require(kept.xmp), as: UTF8.self)
        for kept in ["dc:rights", "dc:creator", MetadataFixture.copyright, MetadataFixture.artist, "xmpRights:Marked"] {
            #expect(xmp.contains(kept), "\(kept)")
        }
        for dropped in ["Lisbon", "CreatorTool", "dc:subject", "harbour"] {
            #expect(!xmp.contains(dropped), "\(dropped)")
        }
        // IPTC: the version, by-line and copyright notice in one IPTC resource; not the keywords or the resolution
        let iptc = [UInt8](try #require(kept.iptc))
        #expect(iptc.starts(with: Array("8BIM".utf8) + [0x04, 0x04]))
        let iptcText = String(decoding: iptc, as: UTF8.self)
        #expect(iptcText.contains(MetadataFixture.copyright) && iptcText.contains(MetadataFixture.artist))
        #expect(!iptcText.contains("harbour") && iptc.count < MetadataFixture.iptc.count)

        // Metadata without any of that gives nothing; a block that does not parse gives nothing, without a crash
        #expect(ImageMetadata(exif: Data(ExifFixture.block(orientation: 3))).copyrightOnly == nil)
        #expect(ImageMetadata(exif: Data([1, 2, 3]), xmp: Data("<not xml".utf8), iptc: Data([9])).copyrightOnly == nil)
    }

    /// Cameras' and editors' real EXIF blocks with a thumbnail (the corpus's): after `withoutThumbnail` no IFD1,
    /// IFD0's entries the same, the length the same, and no JPEG left where the thumbnail was.
    @Test(arguments: [
        "icc/linku-red-at-12-oclock-with-color-profile.jpg", "icc/sharp-Channel_digital_image_CMYK_color.jpg",
        "formats/TestICCProfile.jpg",
    ])
    func realThumbnailsAreRemoved(file: String) throws {
        let jpeg = try corpusData(file)
        let exif = try #require(try JPEGDecoder().decode(jpeg, options: Self.readingMetadata).metadata?.exif)
        let before = try #require(exif.withUnsafeBytes { ExifReader.ifd1(inRawBytes: $0) })
        let stripped = try #require(ImageMetadata(exif: exif).withoutThumbnail.exif)
        #expect(stripped.count == exif.count)
        #expect(stripped.withUnsafeBytes { ExifReader.ifd1(inRawBytes: $0) } == nil)
        let entries = { (data: Data) in data.withUnsafeBytes { ExifReader.ifd0(inRawBytes: $0)?.entries } }
        #expect(entries(stripped) == entries(exif) && entries(exif)?.isEmpty == false)
        // (Indices from 0: the decoder's block may be a slice of the file.)
        let (old, new) = ([UInt8](exif), [UInt8](stripped))
        #expect(new[before.ifd1].allSatisfy { $0 == 0 }, "IFD1 zeroed")
        let tiff = old.starts(with: Array("Exif".utf8)) ? 6 : 0
        let thumbnailStart = exif.withUnsafeBytes { raw in
            before.entries.first { $0.tag == 0x0201 }.flatMap { ExifReader.integerValue(of: $0, inRawBytes: raw) }
        }
        let start = try #require(thumbnailStart)
        #expect(old[tiff + start] == 0xFF && old[tiff + start + 1] == 0xD8, "a JPEG thumbnail was there")
        #expect(new[tiff + start] == 0 && new[tiff + start + 1] == 0, "and is gone")
    }

    /// The thumbnail and its directory zeroed and IFD0's link cleared, in place; IFD0 kept whatever IFD1 claims.
    @Test func withoutThumbnailZeroesTheThumbnailAndKeepsIFD0() throws {
        let thumbnail: [UInt8] = [0xFF, 0xD8] + Array("small picture".utf8) + [0xFF, 0xD9]
        let exif = MetadataFixture.exif(orientation: 6, thumbnail: thumbnail)
        #expect(exif.withUnsafeBytes { ExifReader.ifd1(inRawBytes: $0) } != nil)
        let stripped = try #require(ImageMetadata(exif: exif).withoutThumbnail.exif)
        #expect(stripped.count == exif.count && stripped.withUnsafeBytes { ExifReader.ifd1(inRawBytes: $0) } == nil)
        #expect(stripped.range(of: Data("small picture".utf8)) == nil)
        #expect(ExifReader.orientation(in: stripped) == .right && stripped.range(of: Data("Canon".utf8)) != nil)
        // Only the link, the directory and the picture changed: the bytes before IFD1 but the link are the same
        let ifd1Start = exif.count - thumbnail.count - 30
        var expected = [UInt8](exif.prefix(ifd1Start))
        let linkAt = 8 + 2 + 12 * 4
        expected.replaceSubrange(linkAt..<(linkAt + 4), with: [0, 0, 0, 0])
        #expect(
            Array(stripped.prefix(ifd1Start)) == expected && stripped.suffix(from: ifd1Start).allSatisfy { $0 == 0 })
        // Without a thumbnail, or not EXIF: unchanged
        #expect(ImageMetadata(exif: MetadataFixture.exif()).withoutThumbnail.exif == MetadataFixture.exif())
        #expect(ImageMetadata(exif: Data([1, 2, 3])).withoutThumbnail.exif == Data([1, 2, 3]))
        // A hostile IFD1 whose picture is IFD0 itself: IFD0 is not zeroed, only unlinked from it
        var hostile = [UInt8](exif)
        let pointerAt = ifd1Start + 2 + 8  // IFD1's first entry's value: JPEGInterchangeFormat
        hostile.replaceSubrange(pointerAt..<(pointerAt + 4), with: [0, 0, 0, 8])
        let kept = try #require(ImageMetadata(exif: Data(hostile)).withoutThumbnail.exif)
        #expect(ExifReader.orientation(in: kept) == .right && kept.range(of: Data("Canon".utf8)) != nil)
    }

    @Test func uprightenedSetsTheOrientationToOneAndChangesNothingElse() throws {
        for bigEndian in [true, false] {
            let exif = Data(ExifFixture.block(orientation: 6, bigEndian: bigEndian))
            let upright = try #require(ImageMetadata(exif: exif).uprightened.exif)
            let framed = Data("Exif".utf8) + Data([0, 0]) + upright
            #expect(framed.withUnsafeBytes { ExifReader.orientation(inRawBytes: $0) } == .up)
            #expect(upright.count == exif.count && zip(upright, exif).filter { $0 != $1 }.count == 1)
        }
        let full = try #require(MetadataFixture.metadata().uprightened.exif)
        #expect(String(decoding: full, as: UTF8.self).contains("Canon"))
    }

    @Test func aPNGsCompressedXMPAndAWebPsExifHeaderAreRead() throws {
        // PNG: an iTXt XMP chunk with compressed text
        let png = try PNGEncoder().encode(try Self.image(), options: EncodingOptions())
        let compressed = try #require(Zlib.deflate(MetadataFixture.xmp))
        var bytes = [UInt8](png)
        let payload = Array("XML:com.adobe.xmp".utf8) + [0, 1, 0, 0, 0] + [UInt8](compressed)
        let typeAndData = Array("iTXt".utf8) + payload
        let chunk =
            [UInt8(payload.count >> 24), UInt8(payload.count >> 16 & 0xFF), UInt8(payload.count >> 8 & 0xFF)]
            + [UInt8(payload.count & 0xFF)] + typeAndData
            + {
                let crc = Zlib.crc32(typeAndData)
                return [UInt8(crc >> 24), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc & 0xFF)]
            }()
        bytes.insert(contentsOf: chunk, at: 33)
        #expect(
            try PNGDecoder().decode(Data(bytes), options: Self.readingMetadata).metadata?.xmp == MetadataFixture.xmp)

        // WebP: an EXIF chunk that starts with JPEG's `Exif\0\0`, as some writers leave it
        let webp = try WebPEncoder().encode(
            try Self.image(),
            options: EncodingOptions(
                metadata: ImageMetadata(exif: Data("Exif".utf8) + Data([0, 0]) + MetadataFixture.exif())))
        let read = try WebPDecoder().decode(webp, options: Self.readingMetadata).metadata
        #expect(read?.exif == MetadataFixture.exif())
    }
}
