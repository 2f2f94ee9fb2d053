import Foundation
import ImagoCore

/// Metadata blocks for tests, every value known: an EXIF block with a camera, an orientation, the artist and the
/// copyright; an XMP packet with rights and creator beside a city, a tool and keywords; an IPTC resource block with
/// a by-line and a copyright notice beside keywords.
public enum MetadataFixture {
    /// The copyright text every block carries.
    public static let copyright = "(c) 2026 Imago Test Photography"
    /// The artist text every block carries.
    public static let artist = "Ansel Tester"

    /// A big-endian EXIF block whose IFD0 holds Make `Canon` (0x010F), Orientation (0x0112), Artist (0x013B) and
    /// Copyright (0x8298), in tag order; with `thumbnail`, IFD0 links to an IFD1 whose `JPEGInterchangeFormat`
    /// (0x0201) and length (0x0202) point to those bytes, after it at the end of the block (default none).
    public static func exif(orientation: UInt16 = 6, thumbnail: [UInt8]? = nil) -> Data {
        func u16(_ v: Int) -> [UInt8] { [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        func u32(_ v: Int) -> [UInt8] { u16(v >> 16) + u16(v & 0xFFFF) }
        let make = Array("Canon".utf8) + [0]
        let artist = Array(Self.artist.utf8) + [0]
        let copyright = Array(Self.copyright.utf8) + [0]
        let entries = 4
        let dataStart = 8 + 2 + 12 * entries + 4
        var output: [UInt8] = [0x4D, 0x4D] + u16(42) + u32(8) + u16(entries)
        var data: [UInt8] = []
        func outOfLine(_ tag: Int, _ value: [UInt8]) {
            output += u16(tag) + u16(2) + u32(value.count) + u32(dataStart + data.count)
            data += value
            if data.count % 2 == 1 { data.append(0) }
        }
        outOfLine(0x010F, make)
        output += u16(0x0112) + u16(3) + u32(1) + u16(Int(orientation)) + [0, 0]
        outOfLine(0x013B, artist)
        outOfLine(0x8298, copyright)
        guard let thumbnail else { return Data(output + u32(0) + data) }
        let ifd1 = dataStart + data.count
        let directory =
            u16(2) + u16(0x0201) + u16(4) + u32(1) + u32(ifd1 + 30) + u16(0x0202) + u16(4) + u32(1)
            + u32(thumbnail.count) + u32(0)
        return Data(output + u32(ifd1) + data + directory + thumbnail)
    }

    /// An XMP packet with `dc:rights`, `dc:creator` and `dc:subject` elements, `photoshop:City` and
    /// `xmp:CreatorTool` attributes, and an `xmpRights:Marked` attribute.
    public static let xmp = Data(
        """
        <?xpacket begin="\u{FEFF}" id="W5M0MpCehiHzreSzNTczkc9d"?>
        <x:xmpmeta xmlns:x="adobe:ns:meta/">
          <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
            <rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/"
                xmlns:photoshop="http://ns.adobe.com/photoshop/1.0/" xmlns:xmp="http://ns.adobe.com/xap/1.0/"
                xmlns:xmpRights="http://ns.adobe.com/xap/1.0/rights/"
                photoshop:City="Lisbon" xmp:CreatorTool="Imago Tests" xmpRights:Marked="True">
              <dc:rights><rdf:Alt><rdf:li xml:lang="x-default">\(copyright)</rdf:li></rdf:Alt></dc:rights>
              <dc:creator><rdf:Seq><rdf:li>\(artist)</rdf:li></rdf:Seq></dc:creator>
              <dc:subject><rdf:Bag><rdf:li>harbour</rdf:li></rdf:Bag></dc:subject>
            </rdf:Description>
          </rdf:RDF>
        </x:xmpmeta>
        <?xpacket end="w"?>
        """.utf8)

    /// IPTC-IIM datasets: record version (2:0), keywords (2:25), by-line (2:80), copyright notice (2:116).
    public static let iptcDatasets: [(record: UInt8, dataset: UInt8, value: [UInt8])] = [
        (2, 0, [0, 4]), (2, 25, Array("harbour".utf8)), (2, 80, Array(artist.utf8)), (2, 116, Array(copyright.utf8)),
    ]

    /// A Photoshop image resource block with a resolution resource (0x03ED) and the IPTC resource (0x0404) of
    /// ``iptcDatasets``.
    public static var iptc: Data {
        func resource(_ id: Int, _ data: [UInt8]) -> [UInt8] {
            var bytes = Array("8BIM".utf8) + [UInt8(id >> 8), UInt8(id & 0xFF), 0, 0]
            bytes += [UInt8(data.count >> 24 & 0xFF), UInt8(data.count >> 16 & 0xFF), UInt8(data.count >> 8 & 0xFF)]
            bytes += [UInt8(data.count & 0xFF)] + data
            if data.count % 2 == 1 { bytes.append(0) }
            return bytes
        }
        var iim: [UInt8] = []
        for (record, dataset, value) in iptcDatasets {
            iim += [0x1C, record, dataset, UInt8(value.count >> 8), UInt8(value.count & 0xFF)] + value
        }
        return Data(resource(0x03ED, [0, 72, 0, 0, 0, 1, 0, 1, 0, 72, 0, 0, 0, 1, 0, 1]) + resource(0x0404, iim))
    }

    /// All three blocks.
    public static func metadata(orientation: UInt16 = 6) -> ImageMetadata {
        ImageMetadata(exif: exif(orientation: orientation), xmp: xmp, iptc: iptc)
    }
}
