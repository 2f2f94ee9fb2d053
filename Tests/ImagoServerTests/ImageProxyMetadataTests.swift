import Foundation
import Imago
import ImagoServer
import ImagoTesting
import Testing

@testable import ImagoCLI

/// `strip_metadata`, `keep_copyright` (imgproxy's: stripped but for the copyright by default), `--keep-metadata` and
/// `--strip-copyright`, each output read by an independent parser (Python's standard library walking JPEG segments,
/// PNG chunks, RIFF chunks, JPEG XL boxes and TIFF tags, and the EXIF directory).
@Suite("ImageProxy: metadata kept, stripped, or kept to the copyright")
struct ImageProxyMetadataTests {
    /// What Python finds in `data`: IFD0's tags (ASCII values as text, SHORTs as numbers), the XMP text and the IPTC
    /// resource's text, each absent when the file has none.
    struct Found: Decodable {
        var exif: [String: Value]?
        var xmp: String?
        var iptc: String?

        enum Value: Decodable, Equatable {
            case text(String)
            case number(Int)
            init(from decoder: any Decoder) throws {
                let container = try decoder.singleValueContainer()
                if let number = try? container.decode(Int.self) {
                    self = .number(number)
                } else {
                    self = .text(try container.decode(String.self))
                }
            }
        }
    }

    static func read(_ data: Data) throws -> Found {
        let script = #"""
            import json, struct, sys
            data = sys.stdin.buffer.read()
            found = {}
            def ifd0(tiff):
                end = "<" if tiff[:2] == b"II" else ">"
                (offset,) = struct.unpack(end + "I", tiff[4:8])
                (count,) = struct.unpack(end + "H", tiff[offset:offset + 2])
                tags = {}
                for i in range(count):
                    e = offset + 2 + 12 * i
                    tag, kind, n = struct.unpack(end + "HHI", tiff[e:e + 8])
                    if kind == 2:
                        at = e + 8 if n <= 4 else struct.unpack(end + "I", tiff[e + 8:e + 12])[0]
                        tags[str(tag)] = tiff[at:at + n].rstrip(b"\0").decode()
                    elif kind == 3:
                        tags[str(tag)] = struct.unpack(end + "H", tiff[e + 8:e + 10])[0]
                e = offset + 2 + 12 * count
                (link,) = struct.unpack(end + "I", tiff[e:e + 4])
                if link: tags["ifd1"] = link
                return tags
            if data[:2] == b"\xff\xd8":
                i = 2
                while i + 4 <= len(data) and data[i] == 0xFF and data[i + 1] != 0xDA:
                    marker, length = data[i + 1], struct.unpack(">H", data[i + 2:i + 4])[0]
                    seg = data[i + 4:i + 2 + length]
                    if marker == 0xE1 and seg.startswith(b"Exif\0\0"): found["exif"] = ifd0(seg[6:])
                    if marker == 0xE1 and seg.startswith(b"http://ns.adobe.com/xap/1.0/\0"): found["xmp"] = seg[29:].decode()
                    if marker == 0xED and seg.startswith(b"Photoshop 3.0\0"): found["iptc"] = seg[14:].decode("latin-1")
                    i += 2 + length
            elif data[:8] == b"\x89PNG\r\n\x1a\n":
                i = 8
                while i + 8 <= len(data):
                    (length,) = struct.unpack(">I", data[i:i + 4]); kind = data[i + 4:i + 8]; body = data[i + 8:i + 8 + length]
                    if kind == b"eXIf": found["exif"] = ifd0(body)
                    if kind == b"iTXt" and body.startswith(b"XML:com.adobe.xmp\0"): found["xmp"] = body[22:].decode()
                    i += 12 + length
            elif data[:4] == b"RIFF":
                i = 12
                while i + 8 <= len(data):
                    kind = data[i:i + 4]; (size,) = struct.unpack("<I", data[i + 4:i + 8]); body = data[i + 8:i + 8 + size]
                    if kind == b"EXIF": found["exif"] = ifd0(body)
                    if kind == b"XMP ": found["xmp"] = body.decode()
                    i += 8 + size + (size & 1)
            elif data[:12] == b"\0\0\0\x0cJXL \r\n\x87\n":
                i = 0
                while i + 8 <= len(data):
                    size, kind = struct.unpack(">I4s", data[i:i + 8]); header = 8
                    if size == 1: (size,) = struct.unpack(">Q", data[i + 8:i + 16]); header = 16
                    if size == 0: size = len(data) - i
                    body = data[i + header:i + size]
                    if kind == b"Exif": found["exif"] = ifd0(body[4 + struct.unpack(">I", body[:4])[0]:])
                    if kind == b"xml ": found["xmp"] = body.decode()
                    i += size
            elif data[:4] in (b"II*\0", b"MM\0*"):
                end = "<" if data[:2] == b"II" else ">"
                found["exif"] = {k: v for k, v in ifd0(data).items() if isinstance(v, str)}
                (offset,) = struct.unpack(end + "I", data[4:8])
                (count,) = struct.unpack(end + "H", data[offset:offset + 2])
                for n in range(count):
                    e = offset + 2 + 12 * n
                    tag, kind, length = struct.unpack(end + "HHI", data[e:e + 8])
                    at = e + 8 if length <= 4 else struct.unpack(end + "I", data[e + 8:e + 12])[0]
                    if tag == 700: found["xmp"] = data[at:at + length].decode()
                    if tag == 34377: found["iptc"] = data[at:at + length].decode("latin-1")
            print(json.dumps(found))
            """#
        let (status, output) = try python(script, arguments: [], input: data)
        try #require(status == 0, "\(output)")
        return try JSONDecoder().decode(Found.self, from: Data(output.utf8))
    }

    /// A proxy whose origin serves a 64 × 32 JPEG with ``MetadataFixture``'s blocks (EXIF orientation 6: shown
    /// 32 × 64) at `/meta.jpg`.
    static func fixture(
        _ configure: @escaping (inout ImageProxy.Configuration) -> Void = { _ in }
    ) throws -> ProxyFixture {
        let fixture = try ProxyFixture { configure(&$0) }
        let source = try JPEGEncoder().encode(
            try ServerTestImages.halves(width: 64, height: 32),
            options: EncodingOptions(metadata: MetadataFixture.metadata()))
        fixture.origin.setRoute("/meta.jpg", .bytes(source, contentType: "image/jpeg"))
        return fixture
    }

    static let artist = Found.Value.text(MetadataFixture.artist)
    static let copyright = Found.Value.text(MetadataFixture.copyright)

    @Test(.timeLimit(.minutes(1)))
    func byDefaultOnlyTheCopyrightIsKeptInEveryFormatThatCarriesIt() async throws {
        let fixture = try Self.fixture()
        for format in ["jpg", "png", "webp", "jxl", "tiff"] {
            let response = await fixture.get(fixture.path("w:20/f:\(format)", "/meta.jpg"))
            #expect(response.status == 200, "\(errorMessage(response))")
            let found = try Self.read(response.body)
            #expect(found.exif == ["315": Self.artist, "33432": Self.copyright], "\(format)")
            let xmp = try #require(found.xmp, "\(format)")
            #expect(xmp.contains(MetadataFixture.copyright) && xmp.contains("dc:creator"), "\(format)")
            #expect(!xmp.contains("Lisbon") && !xmp.contains("harbour"), "\(format)")
            if format == "jpg" || format == "tiff" {
                let iptc = try #require(found.iptc, "\(format)")
                #expect(iptc.contains(MetadataFixture.copyright) && !iptc.contains("harbour"))
            }
        }
        // GIF carries none of it, and is made all the same
        #expect(await fixture.get(fixture.path("w:20/f:gif", "/meta.jpg")).status == 200)
    }

    @Test(.timeLimit(.minutes(1)))
    func stripMetadataZeroKeepsEverythingWithTheOrientationUpright() async throws {
        let fixture = try Self.fixture()
        let kept = await fixture.get(fixture.path("sm:0/f:jpg", "/meta.jpg"))
        let byDefault = await fixture.get(fixture.path("f:jpg", "/meta.jpg"))
        #expect(kept.header("ETag") != byDefault.header("ETag"))
        let found = try Self.read(kept.body)
        #expect(found.exif?["271"] == .text("Canon") && found.exif?["33432"] == Self.copyright)
        // The pixels were turned (shown 32 × 64), so the orientation now says "as stored"
        #expect(found.exif?["274"] == .number(1))
        #expect(try ServerTestImages.decode(kept.body).size == PixelSize(width: 32, height: 64))
        #expect(found.xmp?.contains("Lisbon") == true && found.iptc?.contains("harbour") == true)

        // Not turned (ar:0): the orientation is kept for the viewer to apply
        let stored = await fixture.get(fixture.path("sm:0/ar:0/f:jpg", "/meta.jpg"))
        #expect(try Self.read(stored.body).exif?["274"] == .number(6))
        #expect(
            try ServerTestImages.decode(stored.body, appliesOrientation: false).size == PixelSize(width: 64, height: 32)
        )
    }

    /// With `sm:0` the EXIF image size says the output's size, as libvips sets it when it saves.
    @Test(.timeLimit(.minutes(1)))
    func stripMetadataZeroGivesTheEXIFTheResultsSize() async throws {
        let fixture = try Self.fixture()
        func u16(_ v: Int) -> [UInt8] { [UInt8(v >> 8), UInt8(v & 255)] }
        func u32(_ v: Int) -> [UInt8] { u16(v >> 16) + u16(v & 0xFFFF) }
        // IFD0: ImageWidth 64 and ImageLength 32 (SHORTs), big-endian
        let exif = Data(
            Array("MM".utf8) + u16(42) + u32(8) + u16(2) + u16(0x0100) + u16(3) + u32(1) + u16(64) + [0, 0]
                + u16(0x0101) + u16(3) + u32(1) + u16(32) + [0, 0] + u32(0))
        let source = try JPEGEncoder().encode(
            try ServerTestImages.halves(width: 64, height: 32),
            options: EncodingOptions(metadata: ImageMetadata(exif: exif)))
        fixture.origin.setRoute("/sized.jpg", .bytes(source, contentType: "image/jpeg"))
        let kept = try Self.read(await fixture.get(fixture.path("sm:0/w:20/f:png", "/sized.jpg")).body)
        #expect(kept.exif == ["256": .number(20), "257": .number(10)])
    }

    /// With `sm:0` the source's EXIF thumbnail is not carried: after a crop it would show what was cut away. IFD0
    /// stays as it was, linking to no IFD1, and the thumbnail's bytes are gone from the output.
    @Test(.timeLimit(.minutes(1)))
    func stripMetadataZeroDropsTheSourcesThumbnail() async throws {
        let fixture = try Self.fixture()
        let secret = Array("the part that was cropped away".utf8)
        let thumbnail: [UInt8] = [0xFF, 0xD8, 0xFF, 0xFE, 0, UInt8(secret.count + 2)] + secret + [0xFF, 0xD9]
        let source = try JPEGEncoder().encode(
            try ServerTestImages.halves(width: 64, height: 32),
            options: EncodingOptions(
                metadata: ImageMetadata(exif: MetadataFixture.exif(orientation: 1, thumbnail: thumbnail))))
        fixture.origin.setRoute("/thumbnailed.jpg", .bytes(source, contentType: "image/jpeg"))
        let original = try Self.read(source)
        #expect(original.exif?["ifd1"] != nil && source.range(of: Data(secret)) != nil, "the source has one")
        let cropped = await fixture.get(fixture.path("sm:0/c:20:20/f:jpg", "/thumbnailed.jpg"))
        #expect(cropped.status == 200)
        let kept = try #require(try Self.read(cropped.body).exif)
        #expect(kept["271"] == .text("Canon") && kept["33432"] == Self.copyright && kept["274"] == .number(1))
        #expect(kept["ifd1"] == nil, "IFD0 links to no thumbnail")
        #expect(cropped.body.range(of: Data(secret)) == nil, "the thumbnail's bytes are not in the output")
    }

    @Test(.timeLimit(.minutes(1)))
    func keepCopyrightZeroStripsItAllAndTheServerDefaultsYieldToTheURL() async throws {
        let fixture = try Self.fixture()
        let bare = try Self.read(await fixture.get(fixture.path("kcr:0/f:jpg", "/meta.jpg")).body)
        #expect(bare.exif == nil && bare.xmp == nil && bare.iptc == nil)

        let keeping = try Self.fixture { $0.stripsMetadata = false }
        #expect(
            try Self.read(await keeping.get(keeping.path("f:jpg", "/meta.jpg")).body).exif?["271"] == .text("Canon"))
        #expect(try Self.read(await keeping.get(keeping.path("sm:1/f:jpg", "/meta.jpg")).body).exif?["271"] == nil)

        let stripping = try Self.fixture { $0.keepsCopyright = false }
        #expect(try Self.read(await stripping.get(stripping.path("f:jpg", "/meta.jpg")).body).exif == nil)
        #expect(
            try Self.read(await stripping.get(stripping.path("kcr:1/f:jpg", "/meta.jpg")).body).exif?["33432"]
                == Self.copyright)

        // The command's flags set those defaults
        let options = try ServeCommand.parse(
            parseArguments(
                ["--unsigned", "--keep-metadata", "--strip-copyright"], options: ServeCommand.command.options),
            environment: [:])
        #expect(options.keepsMetadata && options.stripsCopyright)
    }
}
