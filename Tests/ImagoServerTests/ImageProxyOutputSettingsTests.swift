import Foundation
import Imago
import ImagoTesting
import Testing

@testable import ImagoCLI
@testable import ImagoServer

@Suite(
    "ImageProxy: the server's qualities, preferred and enforced formats, as imgproxy's IMGPROXY_QUALITY, IMGPROXY_FORMAT_QUALITY, IMGPROXY_PREFERRED_FORMATS and IMGPROXY_ENFORCE_AVIF/WEBP"
)
struct ImageProxyOutputSettingsTests {
    /// A proxy over `outputs`, the output cache the test's proxies share, then configured by `configure`.
    func proxy(
        sharing outputs: OutputCache, _ configure: (inout ImageProxy.Configuration) -> Void = { _ in }
    ) throws -> ProxyFixture {
        try ProxyFixture {
            $0.outputCache = outputs
            configure(&$0)
        }
    }

    /// The body of `options` for the fixture's JPEG from a proxy configured by `configure`.
    func body(
        _ options: String, ext: String? = nil, accept: String? = nil,
        _ configure: @escaping (inout ImageProxy.Configuration) -> Void = { _ in }
    ) async throws -> ServerResponse {
        let fixture = try ProxyFixture { configure(&$0) }
        let response = await fixture.get(
            fixture.path(options, ext: ext), headers: accept.map { ["accept": $0] } ?? [:])
        #expect(response.status == 200, "\(options) \(errorMessage(response))")
        return response
    }

    @Test func theServersQualitiesApplyWhereTheURLGivesNone() async throws {
        // --quality: as if every URL said q:50
        let lowered = try await body("w:120", ext: "jpeg") { $0.defaultQuality = 50 }
        #expect(lowered.body == (try await body("w:120/q:50", ext: "jpeg")).body)
        #expect(lowered.body != (try await body("w:120", ext: "jpeg")).body)
        // --format-quality: for its format only
        let perFormat: (inout ImageProxy.Configuration) -> Void = { $0.formatQuality[.webp] = 40 }
        #expect(
            try await body("w:120", ext: "webp", perFormat).body == (try await body("w:120/q:40", ext: "webp")).body)
        #expect(
            try await body("w:120", ext: "jpeg", perFormat).body == (try await body("w:120/q:80", ext: "jpeg")).body)
        // imgproxy's default avif=65
        #expect(try await body("w:64", ext: "avif").body == (try await body("w:64/q:65", ext: "avif")).body)
        // The URL's quality, and its format_quality, come first
        let q90 = try await body("w:120/q:90", ext: "jpeg") { $0.defaultQuality = 50 }
        #expect(q90.body == (try await body("w:120/q:90", ext: "jpeg")).body)
        let fq = try await body("w:120/fq:webp:70", ext: "webp", perFormat)
        #expect(fq.body == (try await body("w:120/q:70", ext: "webp")).body)
    }

    @Test func outputKeysNameTheSettingsTheyDependOn() async throws {
        let base = OutputSettings(ImageProxy.Configuration())
        let none = ProcessingOptions()
        var q70 = ProcessingOptions()
        q70.quality = 70
        // The defaults add nothing to version-2 keys but AVIF's 65, which those were not made with
        #expect(base.keyText(for: .explicit(.jpeg), options: none) == nil)
        #expect(base.keyText(for: .negotiated(.webp), options: none) == nil)
        #expect(base.keyText(for: .sourceDerived, options: none) == nil)
        #expect(base.keyText(for: .negotiated(.avif), options: none) == "quality=65")
        #expect(base.keyText(for: .negotiated(.avif), options: q70) == nil)

        var configuration = ImageProxy.Configuration()
        configuration.defaultQuality = 60
        configuration.preferredFormats = [.webp, .png]
        let other = OutputSettings(configuration)
        #expect(other.keyText(for: .explicit(.jpeg), options: none) == "quality=60")
        #expect(
            other.keyText(for: .sourceDerived, options: none) == "preferred=webp,png;webp:quality=60;png:quality=60")
        #expect(other.keyText(for: .sourceDerived, options: q70) == "preferred=webp,png")

        // Encoders' own settings (progressive JPEG, AVIF's speed) count too, for the formats an output may take
        let encoding = ImageProxy.Configuration()
        encoding.encoders.register(JPEGEncoder(isProgressive: true))
        encoding.encoders.register(AVIFEncoder(speed: 6))
        let encoders = OutputSettings(encoding)
        #expect(encoders.keyText(for: .explicit(.jpeg), options: q70) == "encoders=jpeg:progressive")
        #expect(encoders.keyText(for: .explicit(.webp), options: q70) == nil)
        #expect(encoders.keyText(for: .negotiated(.avif), options: none) == "quality=65;encoders=avif:speed=6")
        #expect(encoders.keyText(for: .sourceDerived, options: q70) == "encoders=jpeg:progressive")
        #expect(
            encoders.keyText(for: .negotiated(.webp), options: q70, animatedFormat: .jpeg)
                == "encoders=jpeg:progressive")
        // The default configuration's encoders, registered again, add nothing
        let same = ImageProxy.Configuration()
        same.encoders.register(AVIFEncoder(speed: ImageProxy.Configuration.defaultAVIFSpeed))
        same.encoders.register(JPEGEncoder())
        #expect(OutputSettings(same).keyText(for: .sourceDerived, options: q70) == nil)
        // JPEG XL's default effort became 4 (imgproxy's): named against the effort 7 the first keys were made with,
        // so outputs cached before are not answered; WebP's method only when not 4
        #expect(base.keyText(for: .explicit(.jpegXL), options: q70) == "encoders=jxl:effort=4")
        let efforts = ImageProxy.Configuration()
        efforts.encoders.register(WebPEncoder(method: 2))
        efforts.encoders.register(JPEGXLEncoder(effort: 7))
        #expect(OutputSettings(efforts).keyText(for: .explicit(.webp), options: q70) == "encoders=webp:method=2")
        #expect(OutputSettings(efforts).keyText(for: .explicit(.jpegXL), options: q70) == nil)

        // So a cache filled under other settings does not answer: proxies sharing one output cache and one origin
        let outputs = OutputCache()
        let first = try proxy(sharing: outputs)
        let path = first.path("w:120", ext: "jpeg")
        let a = await first.get(path)
        let lowered = try proxy(sharing: outputs) { $0.defaultQuality = 50 }
        let b = await lowered.get(path)
        let progressive = try proxy(sharing: outputs) { $0.encoders.register(JPEGEncoder(isProgressive: true)) }
        let c = await progressive.get(path)
        let again = try proxy(sharing: outputs)
        let d = await again.get(path)
        #expect([a, b, c, d].allSatisfy { $0.status == 200 })
        #expect(a.body != b.body && a.body != c.body && b.body != c.body)
        #expect(c.body.range(of: Data([0xFF, 0xC2])) != nil, "progressive JPEG has an SOF2 marker")
        #expect(a.body.range(of: Data([0xFF, 0xC2])) == nil)
        // Three renders, each fetching the source; the fourth proxy, with the first's settings, is answered from
        // the shared output cache.
        #expect(d.body == a.body)
        #expect(first.origin.requestCount(for: "/a.jpg") == 3)
        // An encoder registered after the proxy is made does not reach it: its outputs stay what its keys name
        let registry = ImageEncoderRegistry.makeDefault()
        let late = try ProxyFixture { $0.encoders = registry }  // its own output cache: it renders
        registry.register(JPEGEncoder(isProgressive: true))
        let e = await late.get(path)
        #expect(e.body == a.body && e.body.range(of: Data([0xFF, 0xC2])) == nil)
        #expect(first.origin.requestCount(for: "/a.jpg") == 4)
    }

    /// imgproxy's `IMGPROXY_PNG_QUANTIZE`: palette PNG outputs, under their own output keys.
    @Test func quantizedPNGOutputsAreSmallerAndKeyedApart() async throws {
        let outputs = OutputCache()
        let plain = try proxy(sharing: outputs)
        let path = plain.path("w:200", ext: "png")
        let lossless = await plain.get(path)
        let quantizing = try proxy(sharing: outputs) { $0.encoders.register(PNGEncoder(paletteColors: 64)) }
        let quantized = await quantizing.get(path)
        #expect(lossless.status == 200 && quantized.status == 200)
        #expect(quantized.body[25] == 3 && lossless.body[25] != 3, "colour type: palette only when asked")
        #expect(quantized.body.count < lossless.body.count)
        #expect(quantized.header("ETag") != lossless.header("ETag"))
        #expect(plain.origin.requestCount(for: "/a.jpg") == 2, "rendered again, not answered from the cache")
        let image = try ServerTestImages.decode(quantized.body)
        #expect(image.size == PixelSize(width: 200, height: 100) && isRed(image[pixel: 20, 50]))
    }

    /// imgproxy's `IMGPROXY_PNG_INTERLACED`: Adam7 PNG outputs, under their own output keys.
    @Test func interlacedPNGOutputsAreKeyedApart() async throws {
        let outputs = OutputCache()
        let plain = try proxy(sharing: outputs)
        let path = plain.path("w:200", ext: "png")
        let sequential = await plain.get(path)
        let interlacing = try proxy(sharing: outputs) { $0.encoders.register(PNGEncoder(interlaced: true)) }
        let interlaced = await interlacing.get(path)
        #expect(sequential.status == 200 && interlaced.status == 200)
        #expect(interlaced.body[28] == 1 && sequential.body[28] == 0, "IHDR's interlace method")
        #expect(interlaced.header("ETag") != sequential.header("ETag"))
        #expect(plain.origin.requestCount(for: "/a.jpg") == 2, "rendered again, not answered from the cache")
        #expect(try ServerTestImages.decode(interlaced.body) == ServerTestImages.decode(sequential.body))
    }

    @Test func preferredFormatsFollowImgproxysRules() async throws {
        let encoders = ImageEncoderRegistry.makeDefault()
        func format(_ source: ImageFormat, opaque: Bool, _ preferred: [ImageFormat]) -> ImageFormat {
            FormatNegotiation.format(
                for: .sourceDerived, source: source, isOpaque: opaque, encoders: encoders, preferred: preferred)
        }
        // The source's format when listed; else the first that keeps transparency when there is some; else the first
        #expect(format(.webp, opaque: true, [.webp, .png]) == .webp)
        #expect(format(.jpeg, opaque: true, [.webp, .png]) == .webp)
        #expect(format(.png, opaque: false, [.jpeg, .webp]) == .webp)
        #expect(format(.jpeg, opaque: false, [.jpeg, .webp]) == .jpeg)  // rule 1 first, as imgproxy
        #expect(format(.png, opaque: false, [.jpeg]) == .jpeg)
        // The defaults as before: JPEG for opaque images, PNG for the rest, the source's JPEG, PNG or GIF kept
        #expect(format(.avif, opaque: true, [.jpeg, .png, .gif]) == .jpeg)
        #expect(format(.webp, opaque: false, [.jpeg, .png, .gif]) == .png)
        #expect(format(.gif, opaque: false, [.jpeg, .png, .gif]) == .gif)
        // Animations: the first listed format that keeps frames
        #expect(
            FormatNegotiation.animatedFormat(
                for: .sourceDerived, accept: nil, encoders: encoders, preferred: [.jpeg, .webp, .gif]) == .webp)
        #expect(
            FormatNegotiation.animatedFormat(for: .sourceDerived, accept: nil, encoders: encoders, preferred: [.png])
                == nil)

        // End to end: a JPEG source, no format asked, WebP preferred
        let response = try await body("w:120") { $0.preferredFormats = [.webp, .png] }
        #expect(response.header("Content-Type") == "image/webp")
        #expect(ImageFormat(sniffing: response.body) == .webp)
    }

    @Test func enforcedFormatsOverrideTheURLsForClientsThatTakeThem() async throws {
        let enforcesWebP: (inout ImageProxy.Configuration) -> Void = { $0.enforcedFormats = [.webp] }
        let browser = try await body("w:120", ext: "png", accept: "image/avif,image/webp,*/*", enforcesWebP)
        #expect(browser.header("Content-Type") == "image/webp")
        #expect(browser.header("Vary") == "Accept")
        let curl = try await body("w:120", ext: "png", accept: "*/*", enforcesWebP)
        #expect(curl.header("Content-Type") == "image/png")
        #expect(curl.header("Vary") == "Accept")
        // Detection off (a CDN that ignores Vary): a URL without a format gets a preferred format, the same for every
        // client, and no Vary; what is enforced is still detected
        let detectsNothing = try await body("w:120", accept: "image/avif,image/webp,*/*") { $0.detectedFormats = [] }
        #expect(detectsNothing.header("Content-Type") == "image/jpeg" && detectsNothing.header("Vary") == nil)
        let webpOnly = try await body("w:64", accept: "image/avif,image/webp") { $0.detectedFormats = [.webp] }
        #expect(webpOnly.header("Content-Type") == "image/webp" && webpOnly.header("Vary") == "Accept")
        let enforcedOnly = try await body("w:120", accept: "image/webp") {
            $0.detectedFormats = []
            $0.enforcedFormats = [.webp]
        }
        #expect(enforcedOnly.header("Content-Type") == "image/webp" && enforcedOnly.header("Vary") == "Accept")
        // AVIF first when both are enforced and taken; not enforced, the URL's format and no Vary
        let both = try await body("w:64", ext: "png", accept: "image/avif,image/webp") {
            $0.enforcedFormats = [.webp, .avif]
        }
        #expect(both.header("Content-Type") == "image/avif")
        let plain = try await body("w:64", ext: "png", accept: "image/avif,image/webp")
        #expect(plain.header("Content-Type") == "image/png")
        #expect(plain.header("Vary") == nil)
    }

    @Test func jpegXLIsNegotiatedFirstWhenDetectedOrEnforced() async throws {
        let safari = "image/jxl,image/avif,image/webp,image/*;q=0.8"
        // Not detected by default (opt-in, as imgproxy's IMGPROXY_AUTO_JXL): AVIF
        #expect(try await body("w:64", accept: safari).header("Content-Type") == "image/avif")
        let detected = try await body("w:64", accept: safari) { $0.detectedFormats = [.jpegXL, .avif, .webp] }
        #expect(detected.header("Content-Type") == "image/jxl" && detected.header("Vary") == "Accept")
        #expect(ImageFormat(sniffing: detected.body) == .jpegXL)
        #expect(try ServerTestImages.decode(detected.body).size.width == 64)
        // A client without it gets the next; enforced, it replaces the URL's format for clients that take it
        let chrome = try await body("w:64", accept: "image/avif,image/webp") { $0.detectedFormats = [.jpegXL, .avif] }
        #expect(chrome.header("Content-Type") == "image/avif")
        let enforced = try await body("w:64", ext: "png", accept: safari) { $0.enforcedFormats = [.jpegXL, .avif] }
        #expect(enforced.header("Content-Type") == "image/jxl")
    }

    @Test func theEncodersEffortsChangeTheBytesAndTheirKeys() async throws {
        // WebP's method: 0 and 6 write other bytes than the default 4 (on a busy picture, seeded)
        var random = ImagoTesting.SeededGenerator(seed: 7)
        var image = try PixelBuffer(width: 96, height: 96)
        for y in 0..<96 {
            for x in 0..<96 {
                let noise = UInt8.random(in: 0...63, using: &random)
                image[pixel: x, y] = RGBA(r: UInt8(x * 2) &+ noise, g: UInt8(y * 2), b: noise &* 3, a: 255)
            }
        }
        let options = EncodingOptions(quality: 0.8)
        let sizes = try [0, 4, 6].map { try WebPEncoder(method: $0).encode(image, options: options).count }
        #expect(Set(sizes).count == 3, "\(sizes)")
        #expect(WebPEncoder().settingsIdentifier == nil && WebPEncoder(method: 9).method == 6)
        // Presets tune the lossy encoder: other bytes, named in keys with the method
        let photo = try WebPEncoder(preset: .photo).encode(image, options: options)
        #expect(photo != (try WebPEncoder().encode(image, options: options)))
        #expect(ImageFormat(sniffing: photo) == .webp)
        #expect(WebPEncoder(method: 2, preset: .text).settingsIdentifier == "method=2;preset=text")
        #expect(WebPEncoder(preset: .icon).settingsIdentifier == "preset=icon")
        // Lossless ignores the preset
        let lossless = EncodingOptions(isLossless: true)
        #expect(
            try WebPEncoder(preset: .drawing).encode(image, options: lossless)
                == WebPEncoder().encode(image, options: lossless))
        #expect(WebPEncoder(method: -1).settingsIdentifier == "method=0")
        // Through the proxy: the server's effort, under its own key
        let fast = try await body("w:96", ext: "webp") { $0.encoders.register(WebPEncoder(method: 0)) }
        let normal = try await body("w:96", ext: "webp")
        #expect(fast.body != normal.body && fast.header("ETag") != normal.header("ETag"))
        #expect(
            (ImageProxy.Configuration().encoders.encoder(for: .jpegXL) as? JPEGXLEncoder)?.effort
                == ImageProxy.Configuration.defaultJPEGXLEffort)
    }

    @Test func theResultLimitScalesResultsDownAsImgproxys() async throws {
        let limited: (Int) -> (inout ImageProxy.Configuration) -> Void = { limit in
            { $0.maxResultDimension = limit }
        }
        func size(_ options: String, limit: Int) async throws -> PixelSize {
            try ServerTestImages.decode(try await body(options, ext: "png", limited(limit)).body).size
        }
        // The 400 × 200 source: served whole, fitted, filled, enlarged, zoomed; each result fits the limit
        #expect(try await size("", limit: 100) == PixelSize(width: 100, height: 50))
        #expect(try await size("", limit: 0) == PixelSize(width: 400, height: 200))
        #expect(try await size("rs:fit:300:300", limit: 100) == PixelSize(width: 100, height: 50))
        #expect(try await size("rs:fit:1000:0:1", limit: 500) == PixelSize(width: 500, height: 250))
        #expect(try await size("z:3/el:1", limit: 600) == PixelSize(width: 600, height: 300))
        #expect(try await size("z:3", limit: 600) == PixelSize(width: 400, height: 200), "zoom never enlarges alone")
        #expect(try await size("rs:force:300:300", limit: 150) == PixelSize(width: 150, height: 150))
        #expect(try await size("w:50", limit: 100) == PixelSize(width: 50, height: 25))
        // fill: the box shrinks with the scale, and the crop keeps its place (red left, blue right); a box larger
        // than the unenlarged image crops what there is (300 × 200), and that shrinks to the limit
        let filled = try ServerTestImages.decode(try await body("rs:fill:200:200", ext: "png", limited(100)).body)
        try #require(filled.size == PixelSize(width: 100, height: 100))
        #expect(isRed(filled[pixel: 10, 50]) && isBlue(filled[pixel: 90, 50]))
        // Gravity offsets shrink with the limit, as imgproxy's DPR scale: 150 pixels in from the west edge puts the
        // red/blue edge (x = 200) mid-crop with the limit or without
        for (limit, width) in [(0, 100), (100, 50)] {
            let offset = try ServerTestImages.decode(
                try await body("rs:fill:100:200/g:we:150:0", ext: "png", limited(limit)).body)
            try #require(offset.size == PixelSize(width: width, height: 2 * width), "limit \(limit)")
            #expect(isRed(offset[pixel: width / 2 - 5, width]) && isBlue(offset[pixel: width / 2 + 5, width]))
        }
        // Padding and extensions count, and shrink with the image: 200 × 100 + 50 a side = 300 × 200, halved
        let padded = try ServerTestImages.decode(
            try await body("rs:fit:200/pd:50/bg:0:255:0", ext: "png", limited(150)).body)
        try #require(padded.size == PixelSize(width: 150, height: 100))
        #expect(padded[pixel: 10, 50] == RGBA(r: 0, g: 255, b: 0, a: 255), "the padding, 25 pixels wide")
        #expect(isRed(padded[pixel: 40, 50]), "the image inside it")
        #expect(try await size("rs:fill:300:300", limit: 100) == PixelSize(width: 100, height: 67))
        #expect(try await size("rs:fit:300:300/ex:1", limit: 100) == PixelSize(width: 100, height: 100))
        // A limit alone decodes a square of its side (JPEG DCT scaling), and names itself for the caches
        var options = ProcessingOptions()
        options.maxResultDimension = 256
        let resize = try #require(ProxyResize(options))
        #expect(resize.decodeTarget == DecodeTarget(size: PixelSize(width: 256, height: 256), mode: .fit))
        #expect(resize.identifier.hasSuffix("&max=256"))
        #expect(options.canonicalDescription.hasSuffix("/mrd:256"))
        #expect(!ProcessingOptions().canonicalDescription.contains("mrd"), "keys without a limit are unchanged")
        // So an output cache filled without the limit does not answer for a proxy with one
        let outputs = OutputCache()
        let first = try proxy(sharing: outputs)
        let path = first.path("", ext: "png")
        #expect(try ServerTestImages.decode(await first.get(path).body).size.width == 400)
        let second = try proxy(sharing: outputs) { $0.maxResultDimension = 100 }
        #expect(try ServerTestImages.decode(await second.get(path).body).size.width == 100)
    }

    @Test func clientHintsGiveTheDPRAndWidthURLsLeaveUnset() async throws {
        let hints: (inout ImageProxy.Configuration) -> Void = { $0.usesClientHints = true }
        let fixture = try ProxyFixture { hints(&$0) }
        func width(_ options: String, _ headers: [String: String]) async throws -> Int {
            let response = await fixture.get(fixture.path(options, ext: "png"), headers: headers)
            #expect(response.status == 200, "\(errorMessage(response))")
            #expect(response.header("Vary") == "Sec-CH-DPR, DPR, Sec-CH-Width, Width")
            return try ServerTestImages.decode(response.body).size.width
        }
        // The 400-px source: a width hint in device pixels, the DPR scaling it back
        #expect(try await width("rs:fit", ["Sec-CH-Width": "200"]) == 200)
        #expect(try await width("rs:fit", ["Sec-CH-DPR": "2", "Sec-CH-Width": "200"]) == 200)
        #expect(try await width("rs:fit:50", ["DPR": "2"]) == 100)
        #expect(try await width("rs:fit", ["Width": "120", "DPR": "1.5"]) == 120)
        // The URL's own width wins; a DPR out of range or unparsable is ignored
        #expect(try await width("rs:fit:80", ["Sec-CH-Width": "200"]) == 80)
        #expect(try await width("rs:fit:50", ["DPR": "9"]) == 50)
        #expect(try await width("rs:fit:50", ["DPR": "two"]) == 50)
        // imgproxy applies hints before the URL's options: a URL that sets dpr:1 or w:0 outright keeps them
        #expect(try await width("rs:fit:50/dpr:1", ["DPR": "2"]) == 50)
        #expect(try await width("rs:fit:50/dpr:1", ["DPR": "2", "Width": "300"]) == 50)
        #expect(try await width("w:0", ["Width": "100"]) == 400)
        #expect(try await width("rs:fit:0:0:1", ["Width": "1000"]) == 400)
        #expect(try await width("rs:fit::0", ["Width": "100"]) == 100)
        // … and so does the default preset, which comes between the two
        let preset = try ProxyFixture {
            hints(&$0)
            $0.presets = try PresetTable(definitions: ["default=dpr:1"])
        }
        let presetResponse = await preset.get(preset.path("rs:fit:50", ext: "png"), headers: ["DPR": "2"])
        #expect(try ServerTestImages.decode(presetResponse.body).size.width == 50)
        // Hints are held to the bound a URL's sizes are: past 8,192 pixels a side, not taken
        #expect(try await width("rs:fit:::1", ["Width": "1000000"]) == 400)
        #expect(try await width("rs:fit:::1", ["Width": "1000"]) == 1000)
        #expect(try await width("rs:fit:5000", ["DPR": "2"]) == 400)
        #expect(try await width("rs:fit:300/ex:1", ["Width": "100000"]) == 300)
        // Off (the default): the headers change nothing, and nothing varies on them
        let plain = try ProxyFixture()
        let response = await plain.get(plain.path("rs:fit:50", ext: "png"), headers: ["DPR": "2"])
        #expect(try ServerTestImages.decode(response.body).size.width == 50)
        #expect(response.header("Vary") == nil)
    }

    @Test func theCommandLineTakesImgproxysForms() throws {
        func parse(_ extra: [String]) throws -> ServeCommand.Options {
            try ServeCommand.parse(
                parseArguments(["--unsigned"] + extra, options: ServeCommand.command.options), environment: [:])
        }
        let defaults = try parse([])
        #expect(defaults.defaultQuality == 80 && defaults.formatQuality == [.avif: 65])
        #expect(defaults.preferredFormats == [.jpeg, .png, .gif] && defaults.enforcedFormats.isEmpty)
        let set = try parse([
            "--quality", "70", "--format-quality", "jpeg=60, webp=75", "--preferred-formats", "webp,jpg,webp",
            "--enforce-avif", "--enforce-webp",
        ])
        #expect(set.defaultQuality == 70)
        #expect(set.formatQuality == [.avif: 65, .jpeg: 60, .webp: 75])
        #expect(set.preferredFormats == [.webp, .jpeg])
        #expect(set.enforcedFormats == [.avif, .webp])
        let trusting = try ServeCommand.parse(
            parseArguments(["--trusted-signatures", "a1, b2,"], options: ServeCommand.command.options), environment: [:]
        )
        #expect(trusting.trustedSignatures == ["a1", "b2"] && !trusting.allowsUnsigned)
        #expect(defaults.detectedFormats == [.avif, .webp])
        #expect(try parse(["--detect-formats", "none"]).detectedFormats.isEmpty)
        #expect(try parse(["--detect-formats", "webp"]).detectedFormats == [.webp])
        #expect(try parse(["--detect-formats", "jxl,avif"]).detectedFormats == [.jpegXL, .avif])
        #expect(try parse(["--enforce-jxl"]).enforcedFormats == [.jpegXL])
        #expect(defaults.webpEffort == 4 && defaults.jxlEffort == 4)
        #expect(try parse(["--webp-effort", "0", "--jxl-effort", "9"]).webpEffort == 0)
        #expect(try parse(["--jxl-effort", "9"]).jxlEffort == 9)
        #expect(throws: UsageError("option '--webp-effort' expects a whole number from 0 to 6 (got '7')")) {
            try parse(["--webp-effort", "7"])
        }
        #expect(throws: UsageError("option '--workers' expects a whole number from 1 to 256 (got '0')")) {
            try ServeCommand.parse(
                parseArguments(["--unsigned"], options: ServeCommand.command.options),
                environment: ["IMAGO_WORKERS": "0"])
        }
        #expect(defaults.webpPreset == .default)
        #expect(try parse(["--webp-preset", "photo"]).webpPreset == .photo)
        #expect(!defaults.jpegProgressive)
        #expect(try parse(["--jpeg-progressive"]).jpegProgressive)
        #expect(try defaults.pngPaletteColors == nil && parse(["--png-quantize"]).pngPaletteColors == 256)
        #expect(try parse(["--png-quantize", "--png-quantization-colors", "64"]).pngPaletteColors == 64)
        #expect(throws: UsageError.self) { try parse(["--png-quantization-colors", "64"]) }
        #expect(try !defaults.pngInterlaced && parse(["--png-interlaced"]).pngInterlaced)
        #expect(throws: UsageError.self) { try parse(["--png-quantize", "--png-quantization-colors", "1"]) }
        #expect(!defaults.usesClientHints)
        #expect(try parse(["--enable-client-hints"]).usesClientHints)
        #expect(try parse(["--format-quality", "avif=50"]).formatQuality == [.avif: 50])
        #expect(defaults.maxResultDimension == 0 && defaults.staleRetrySeconds == 10)
        #expect(try parse(["--stale-retry", "30"]).staleRetrySeconds == 30)
        #expect(try parse(["--max-result-dimension", "512"]).maxResultDimension == 512)
        // AVIF at imgproxy's speed 9 unless told
        #expect(defaults.avifSpeed == 9)
        #expect(try parse(["--avif-speed", "4"]).avifSpeed == 4)
        let avif = ImageProxy.Configuration().encoders.encoder(for: .avif) as? AVIFEncoder
        #expect(avif?.speed == 9)
        for bad in [
            ["--quality", "0"], ["--format-quality", "jpeg=101"], ["--format-quality", "jpeg"],
            ["--format-quality", "psd=50"], ["--preferred-formats", "psd"], ["--preferred-formats", ","],
            ["--avif-speed", "11"], ["--trusted-signatures", ","], ["--detect-formats", "jpeg"],
            ["--webp-effort", "7"], ["--jxl-effort", "0"], ["--webp-preset", "portrait"],
            ["--max-result-dimension", "8193"], ["--max-result-dimension", "-1"], ["--stale-retry", "0"],
        ] {
            #expect(throws: UsageError.self, "\(bad)") { try parse(bad) }
        }
    }
}
