import Foundation
import Imago
import ImagoCodecs
import ImagoCore
import Testing

/// SVG through librsvg (`SVGDecoder`): drawn at the size asked for, limits checked on the size drawn, nothing
/// outside the document read, and embedded `data:` images decoded by Imago's bounded decoders first.
@Suite("SVG decoder", .enabled(if: SVGDecoder.isAvailable, "librsvg2-2 is not installed"))
struct SVGDecoderTests {
    /// Red on the left half, blue on the right, `width` × `height` user units.
    static func halves(width: Int = 40, height: Int = 20) -> Data {
        Data(
            """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(width)" height="\(height)">
              <rect width="\(width / 2)" height="\(height)" fill="#ff0000"/>
              <rect x="\(width / 2)" width="\(width / 2)" height="\(height)" fill="#0000ff"/>
            </svg>
            """.utf8)
    }

    static func decode(_ data: Data, target: PixelSize? = nil, pixelLimit: Int? = nil) throws -> PixelBuffer {
        var options = DecodingOptions()
        options.targetSize = target
        if let pixelLimit { options.pixelLimit = pixelLimit }
        return try #require(try SVGDecoder().decode(data, options: options).frames.first).buffer
    }

    /// A PNG declaring `width` × `height` pixels (valid chunk CRCs, an empty zlib stream for its pixels).
    static func pngHeader(width: UInt32, height: UInt32) -> Data {
        func crc(_ bytes: [UInt8]) -> UInt32 {
            var c: UInt32 = 0xFFFF_FFFF
            for byte in bytes {
                c ^= UInt32(byte)
                for _ in 0..<8 { c = c & 1 == 1 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
            }
            return ~c
        }
        func be(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 255), UInt8(v >> 8 & 255), UInt8(v & 255)] }
        let body: [UInt8] = Array("IHDR".utf8) + be(width) + be(height) + [8, 2, 0, 0, 0]
        let idat: [UInt8] = Array("IDAT".utf8) + [0x78, 0x9C, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01]  // empty zlib stream
        let iend: [UInt8] = Array("IEND".utf8)
        var bytes: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        bytes += be(13) + body + be(crc(body)) + be(8) + idat + be(crc(idat)) + be(0) + iend + be(crc(iend))
        return Data(bytes)
    }

    /// An SVG drawing `payload` as a data: URL image over its whole 10 × 10 canvas, the href written as `href`.
    static func embedding(href: String) -> Data {
        Data(
            """
            <svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="10" height="10">
              <image width="10" height="10" xlink:href="\(href)"/>
            </svg>
            """.utf8)
    }

    @Test func theCorpusDrawingIsDrawnAtItsViewBoxSize() throws {
        let data = try corpusData("formats/TestImage.svg")
        let container = try SVGDecoder().decode(data, options: DecodingOptions())
        let image = try #require(container.frames.first).buffer
        #expect(container.format == .svg && image.width == 131 && image.height == 76)
        #expect(image[pixel: 0, 0].a == 0 && image[pixel: 130, 75].a == 0)
        // The W3C logo's blue (#005A9C) covers a good part of it; the rest is black strokes and transparency.
        var blue = 0
        for y in 0..<image.height {
            for x in 0..<image.width {
                let p = image[pixel: x, y]
                if p.a == 255 && p.r < 8 && abs(Int(p.g) - 90) < 8 && abs(Int(p.b) - 156) < 8 { blue += 1 }
            }
        }
        #expect(blue > 1000, "\(blue) blue pixels")
        // Registered by default: the registry sniffs and decodes it.
        #expect(try ImageDecoderRegistry.makeDefault().decode(data, options: DecodingOptions()).format == .svg)
    }

    @Test func theTargetSizeIsWhereTheDrawingIsDrawn() throws {
        let full = try Self.decode(Self.halves())
        #expect(full.width == 40 && full.height == 20)
        #expect(full[pixel: 5, 5] == RGBA(r: 255, g: 0, b: 0, a: 255))
        #expect(full[pixel: 30, 15] == RGBA(r: 0, g: 0, b: 255, a: 255))
        let small = try SVGDecoder().decode(
            Self.halves(), options: DecodingOptions(targetSize: PixelSize(width: 20, height: 20)))
        let image = try #require(small.frames.first).buffer
        #expect(image.width == 20 && image.height == 10 && small.originalSize == PixelSize(width: 40, height: 20))
        #expect(image[pixel: 2, 2] == RGBA(r: 255, g: 0, b: 0, a: 255))
        #expect(image[pixel: 17, 7] == RGBA(r: 0, g: 0, b: 255, a: 255))
        // Never enlarged.
        #expect(try Self.decode(Self.halves(), target: PixelSize(width: 400, height: 400)).width == 40)
    }

    @Test func vectorsAreDrawnLargerOnlyWhenAsked() throws {
        let small = Self.halves(width: 4, height: 2)
        var options = DecodingOptions(targetSize: PixelSize(width: 400, height: 400))
        let kept = try #require(try SVGDecoder().decode(small, options: options).frames.first).buffer
        #expect(kept.width == 4 && kept.height == 2)
        options.enlargesVectors = true
        let drawn = try #require(try SVGDecoder().decode(small, options: options).frames.first).buffer
        #expect(drawn.width == 400 && drawn.height == 200)
        #expect(
            drawn[pixel: 199, 100] == RGBA(r: 255, g: 0, b: 0) && drawn[pixel: 200, 100] == RGBA(r: 0, g: 0, b: 255))
        options.targetMode = .cover
        let covering = try #require(try SVGDecoder().decode(small, options: options).frames.first).buffer
        #expect(covering.width == 800 && covering.height == 400)
        // Scaled back within the pixel limit instead of refused.
        options.targetSize = PixelSize(width: 100_000, height: 100_000)
        options.targetMode = .fit
        options.pixelLimit = 1_000_000
        let limited = try #require(try SVGDecoder().decode(small, options: options).frames.first).buffer
        #expect(
            limited.width * limited.height <= 1_000_000 && limited.width > 1_000 && limited.width == 2 * limited.height)
    }

    @Test func aHugeDeclaredSizeCostsOnlyItsRenderedSize() throws {
        let huge = Self.halves(width: 100_000, height: 100_000)
        #expect(throws: CodecError.tooManyPixels(width: 100_000, height: 100_000, limit: 100_000_000)) {
            try Self.decode(huge)
        }
        let image = try Self.decode(huge, target: PixelSize(width: 64, height: 64))
        #expect(image.width == 64 && image.height == 64)
        #expect(image[pixel: 10, 10] == RGBA(r: 255, g: 0, b: 0, a: 255))
        #expect(image[pixel: 50, 50] == RGBA(r: 0, g: 0, b: 255, a: 255))
    }

    @Test func badDocumentsFailWithTypedErrors() throws {
        #expect(throws: CodecError.empty) { try Self.decode(Data()) }
        for bad in [
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\" height=\"10\"><rect",  // cut short
            "<svg xmlns=\"http://www.w3.org/2000/svg\"><rect width=\"5\" height=\"5\"/></svg>",  // no size at all
            "<notsvg/>", "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\" height=\"10\">\u{0}</svg>",
        ] {
            #expect(throws: CodecError.self, "\(bad)") { try Self.decode(Data(bad.utf8)) }
        }
    }

    /// A renderer child that ends without reading its input (killed, or failing at start) leaves this process
    /// writing into a pipe with no reader: a typed error, never `FileHandle`'s trap on `EPIPE` or a `SIGPIPE` that
    /// ends the process.
    @Test func aChildThatEndsWithoutReadingIsATypedError() throws {
        let decoder = SVGDecoder(
            rendering: .childProcess(
                executable: URL(fileURLWithPath: "/bin/true"), arguments: [], timeout: .seconds(10)))
        // More than a pipe holds (64 KiB), so the write must meet the pipe once the child has gone
        let document = Data(
            ("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\" height=\"10\"><!--"
                + String(repeating: "x", count: 1 << 20) + "--></svg>").utf8)
        for _ in 0..<3 {
            #expect(throws: CodecError.self) { try decoder.decode(document, options: DecodingOptions()) }
        }
    }

    @Test func embeddedImagesAreDecodedByImagoFirstWithinTheLimits() throws {
        var green = try PixelBuffer(width: 4, height: 4, format: .rgba8)
        for y in 0..<4 { for x in 0..<4 { green[pixel: x, y] = RGBA(r: 0, g: 255, b: 0, a: 255) } }
        let png = try PNGEncoder().encode(green, options: EncodingOptions())
        let drawn = try Self.decode(Self.embedding(href: "data:image/png;base64," + png.base64EncodedString()))
        #expect(drawn[pixel: 5, 5] == RGBA(r: 0, g: 255, b: 0, a: 255))

        let bomb = Self.pngHeader(width: 30_000, height: 30_000).base64EncodedString()
        for href in [
            "data:image/png;base64," + bomb,
            "&#100;ata:image/png;base64," + bomb,  // a character reference hides nothing
            " DATA:image/png;base64," + bomb,
            "data:image/svg+xml;base64,"
                + Self.embedding(href: "data:image/png;base64," + bomb).base64EncodedString(),  // nested
        ] {
            #expect(throws: CodecError.self, "\(href.prefix(40))") {
                try Self.decode(Self.embedding(href: href), target: PixelSize(width: 10, height: 10))
            }
        }
        do {
            _ = try Self.decode(Self.embedding(href: "data:image/png;base64," + bomb))
            Issue.record("the bomb was drawn")
        } catch let error as CodecError {
            #expect("\(error)".contains("30000x30000"), "\(error)")
        }
        // CSS that could load another document is refused: url() of anything but #id, and @import.
        let nested = Self.embedding(href: "data:image/png;base64," + bomb).base64EncodedString()
        for style in [
            "fill: url(data:image/svg+xml;base64,\(nested)#g)", "fill: URL( 'data:x' )", "fill: url(\\23 g)",
            "fill: url(&#35;g)",
        ] {
            let document =
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"4\" height=\"4\"><rect width=\"4\" height=\"4\" style=\"\(style)\"/></svg>"
            #expect(throws: CodecError.self, "\(style.prefix(30))") { try Self.decode(Data(document.utf8)) }
        }
        let imported =
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"4\" height=\"4\"><style>@import url(#x);</style></svg>"
        #expect(throws: CodecError.self) { try Self.decode(Data(imported.utf8)) }
        let local =
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"4\" height=\"4\"><defs><linearGradient id=\"g\"><stop stop-color=\"#0f0\"/></linearGradient></defs><rect width=\"4\" height=\"4\" fill=\"url(#g)\" style=\"stroke: url( '#g' )\"/></svg>"
        #expect(try Self.decode(Data(local.utf8))[pixel: 2, 2] == RGBA(r: 0, g: 255, b: 0))
        // Entities may stand only for plain text: not for a style that loads, nor for anything external.
        for declaration in [
            "<!ENTITY s \"fill:url(data:image/svg+xml;base64,\(nested))\">",
            "<!ENTITY s SYSTEM \"file:///etc/passwd\">",
            "<!ENTITY % p \"x\">", "<!ENTITY s '&#100;ata:'>",
        ] {
            let document =
                "<!DOCTYPE svg [\(declaration)]><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"4\" height=\"4\"><rect width=\"4\" height=\"4\" style=\"&s;\"/></svg>"
            #expect(throws: CodecError.self, "\(declaration)") { try Self.decode(Data(document.utf8)) }
        }
        let illustrator =
            "<!DOCTYPE svg [<!ENTITY ns_svg \"http://www.w3.org/2000/svg\">]><svg xmlns=\"&ns_svg;\" width=\"4\" height=\"4\"><rect width=\"4\" height=\"4\" fill=\"#00f\"/></svg>"
        #expect(try Self.decode(Data(illustrator.utf8))[pixel: 2, 2] == RGBA(r: 0, g: 0, b: 255))
        // A DTD entity in an href is refused, not expanded; so is an embedded format Imago does not decode.
        #expect(throws: CodecError.self) { try Self.decode(Self.embedding(href: "&e;")) }
        #expect(throws: CodecError.self) {
            try Self.decode(Self.embedding(href: "data:image/x-xpixmap;base64,LyogWFBNICovCg=="))
        }
    }

    @Test func nothingOutsideTheDocumentIsRead() throws {
        let file = corpusURL("formats").appendingPathComponent("TestImage.png")
        #expect(FileManager.default.fileExists(atPath: file.path))
        for href in [file.absoluteString, file.path, "http://127.0.0.1:1/a.png"] {
            let image = try Self.decode(Self.embedding(href: href))
            #expect(image[pixel: 5, 5].a == 0, "\(href) was drawn")
        }
    }
}
