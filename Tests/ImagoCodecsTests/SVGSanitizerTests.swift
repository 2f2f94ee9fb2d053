import Foundation
import ImagoCodecs
import ImagoCore
import Testing

/// `SVGSanitizer`: what can run code or load another document is gone, the drawing is not touched.
@Suite("SVG sanitizer")
struct SVGSanitizerTests {
    /// A drawing (red and blue halves) carrying every kind of active content the sanitizer removes.
    static let hostile = """
        <?xml version="1.0" encoding="UTF-8"?>
        <?xml-stylesheet href="javascript:alert(1)"?>
        <svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="40" height="20"
             onload="alert('load')">
          <script>alert('script')</script>
          <SCRIPT>alert('upper')</SCRIPT>
          <rect id="left" width="20" height="20" fill="#ff0000" onclick="alert('click')"/>
          <rect x="20" width="20" height="20" fill="#0000ff"/>
          <a href="javascript:alert('a')"><text>a</text></a>
          <a xlink:href="java&#x09;script:alert('tab')"><text>b</text></a>
          <a href=" https://example.com/ok"><text>c</text></a>
          <a href="/relative/ok"><text>d</text></a>
          <use href="#left"/>
          <use xlink:href="https://evil.example/sprite.svg#x"/>
          <image href="data:image/png;base64,AAAA" width="1" height="1"/>
          <image href="javascript:alert('image')" width="1" height="1"/>
          <a href="#"><animate attributeName="href" to="javascript:alert('anim')"/></a>
          <set attributeName="xlink:href" to="javascript:alert('set')"/>
          <animate attributeName="opacity" from="1" to="1" dur="1s"/>
          <foreignObject width="1" height="1"><iframe xmlns="http://www.w3.org/1999/xhtml" src="https://x"/></foreignObject>
          <handler type="application/ecmascript">alert('handler')</handler>
        </svg>
        """

    @Test func activeContentIsRemovedAndTheDrawingKept() throws {
        let result = try SVGSanitizer().sanitize(Data(Self.hostile.utf8))
        let text = String(decoding: result.data, as: UTF8.self)
        for gone in [
            "alert", "script", "SCRIPT", "onload", "onclick", "xml-stylesheet", "evil.example", "iframe", "handler",
        ] {
            #expect(!text.contains(gone), "\(gone) in \(text)")
        }
        for kept in [
            "href=\" https://example.com/ok\"", "href=\"/relative/ok\"", "href=\"#left\"",
            "href=\"data:image/png;base64,AAAA\"", "attributeName=\"opacity\"", "<foreignObject", "fill=\"#ff0000\"",
        ] {
            #expect(text.contains(kept), "\(kept) missing from \(text)")
        }
        #expect(text.hasPrefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"))
        #expect(result.size == PixelSize(width: 40, height: 20))
        // Sanitizing what was sanitized changes nothing.
        #expect(try SVGSanitizer().sanitize(result.data).data == result.data)
    }

    /// Namespace URIs that libxml2 2.9 writes without escaping (found by the `svg-sanitize` fuzz target, whose
    /// input had a tab in one): each is written in the form it was read from (so the next reader gets the same
    /// URI), and a second pass changes nothing.
    @Test(arguments: [
        "a&#9;b", "a&#10;b&#13;c", "a&lt;b", "a&amp;lt;b", "a&amp;b&quot;c'd", "http://www.w3.org/1999/xlink",
    ])
    func namespaceURIsAreWrittenAsTheyWereRead(uri: String) throws {
        let document = """
            <svg xmlns="http://www.w3.org/2000/svg" xmlns:x="\(uri)" width="4" height="4">\
            <a x:href="#top" x:title="t"/></svg>
            """
        let first = try SVGSanitizer().sanitize(Data(document.utf8))
        let text = String(decoding: first.data, as: UTF8.self)
        #expect(text.contains("xmlns:x=\"\(uri)\""), "\(text)")
        #expect(try SVGSanitizer().sanitize(first.data) == first, "\(text)")
    }

    @Test(.enabled(if: SVGDecoder.isAvailable, "librsvg2-2 is not installed"))
    func theSanitizedDrawingHasTheSamePixels() throws {
        // (Without the embedded image, which is not a whole PNG and which the decoder refuses.)
        let document = Data(
            Self.hostile.replacingOccurrences(of: "<image href=\"data:image/png;base64,AAAA\"", with: "<g").utf8)
        let original = try SVGDecoder().decode(document, options: DecodingOptions())
        let sanitized = try SVGDecoder().decode(SVGSanitizer().sanitize(document).data, options: DecodingOptions())
        #expect(original.frames.first?.buffer == sanitized.frames.first?.buffer)
    }

    @Test func plainTextEntitiesAreReplacedAndTheDoctypeDropped() throws {
        // As Adobe Illustrator writes its namespaces.
        let illustrator = """
            <?xml version="1.0"?>
            <!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd" [
              <!ENTITY ns_svg "http://www.w3.org/2000/svg">
              <!ENTITY ns_xlink "http://www.w3.org/1999/xlink">
            ]>
            <svg xmlns="&ns_svg;" xmlns:xlink="&ns_xlink;" viewBox="0 0 30 10"><rect width="30" height="10"/></svg>
            """
        let result = try SVGSanitizer().sanitize(Data(illustrator.utf8))
        let text = String(decoding: result.data, as: UTF8.self)
        #expect(!text.contains("DOCTYPE") && !text.contains("ENTITY") && !text.contains("&ns_"), "\(text)")
        #expect(text.contains("xmlns=\"http://www.w3.org/2000/svg\""))
        #expect(result.size == PixelSize(width: 30, height: 10))
    }

    @Test func entityTricksAreRefused() throws {
        let laughs = """
            <!DOCTYPE svg [<!ENTITY a "ha"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>
            <svg xmlns="http://www.w3.org/2000/svg">&b;</svg>
            """
        let external = """
            <!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/passwd">]><svg xmlns="http://www.w3.org/2000/svg">&x;</svg>
            """
        let big = String(repeating: "x", count: 1_000)
        let wide =
            "<!DOCTYPE svg [<!ENTITY w \"\(big)\">]><svg xmlns=\"http://www.w3.org/2000/svg\"><text>"
            + String(repeating: "&w;", count: 2_000) + "</text></svg>"
        for document in [laughs, external, wide] {
            #expect(throws: CodecError.self) { try SVGSanitizer().sanitize(Data(document.utf8)) }
        }
        // Under the bound, the same entity expands.
        let narrow =
            "<!DOCTYPE svg [<!ENTITY w \"\(big)\">]><svg xmlns=\"http://www.w3.org/2000/svg\"><text>"
            + String(repeating: "&w;", count: 100) + "</text></svg>"
        #expect(try SVGSanitizer().sanitize(Data(narrow.utf8)).data.count > 100_000)
    }

    @Test func whatIsNotAnSVGDocumentIsATypedError() {
        #expect(throws: CodecError.empty) { try SVGSanitizer().sanitize(Data()) }
        for bad in [
            "<svg", "not xml at all", "<html><body/></html>", "<svg xmlns='http://www.w3.org/2000/svg'>\u{0}</svg>",
        ] {
            #expect(throws: CodecError.self, "\(bad)") { try SVGSanitizer().sanitize(Data(bad.utf8)) }
        }
    }

    @Test func declaredSizesInAbsoluteUnitsAndFromTheViewBox() throws {
        func size(_ attributes: String) throws -> PixelSize? {
            try SVGSanitizer().sanitize(Data("<svg xmlns=\"http://www.w3.org/2000/svg\" \(attributes)/>".utf8)).size
        }
        #expect(try size("width=\"2in\" height=\"1in\"") == PixelSize(width: 192, height: 96))
        #expect(try size("width=\"30pt\" height=\"15\"") == PixelSize(width: 40, height: 15))
        #expect(try size("viewBox=\"0 0 400 200\"") == PixelSize(width: 400, height: 200))
        #expect(try size("width=\"100\" viewBox=\"0,0,400,200\"") == PixelSize(width: 100, height: 50))
        #expect(try size("width=\"100%\" height=\"100%\" viewBox=\"0 0 64 32\"") == PixelSize(width: 64, height: 32))
        #expect(try size("width=\"50%\"") == nil)
    }

    @Test func referencesAreJudgedAsBrowsersReadThem() {
        #expect(!SVGSanitizer.isSafeReference("JavaScript:alert(1)", on: "a"))
        #expect(!SVGSanitizer.isSafeReference(" \u{1}java\nscript:alert(1)", on: "a"))
        #expect(!SVGSanitizer.isSafeReference("data:text/html,<script>", on: "a"))
        #expect(SVGSanitizer.isSafeReference("data:image/png;base64,AA", on: "image"))
        #expect(SVGSanitizer.isSafeReference("images/a.png", on: "image"))
        #expect(!SVGSanitizer.isSafeReference("vbscript:x", on: "image"))
        #expect(!SVGSanitizer.isSafeReference("sprite.svg#a", on: "use"))
        #expect(SVGSanitizer.isSafeReference("#a", on: "use"))
    }
}
