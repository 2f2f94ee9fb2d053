import Foundation
import Imago
import ImagoTesting
import Testing

@testable import ImagoCLI
@testable import ImagoServer

/// The source of every test here is the fixture's 400 × 200 JPEG: left half red, right half blue.
@Suite("ImageProxy: imgproxy's size, crop, canvas, filter and response options")
struct ImageProxyImgproxyOptionTests {
    func image(_ fixture: ProxyFixture, _ options: String, _ source: String = "/a.jpg") async throws -> PixelBuffer {
        let response = await fixture.get(fixture.path(options, source))
        try #require(response.status == 200, "\(options): \(errorMessage(response))")
        return try ServerTestImages.decode(response.body)
    }

    func size(_ fixture: ProxyFixture, _ options: String) async throws -> PixelSize {
        try await image(fixture, options).size
    }

    @Test func sizeResizingTypesMinimumsAndZoom() async throws {
        let fixture = try ProxyFixture()
        let cases: [(String, Int, Int)] = [
            ("s:100:100", 100, 50), ("size:100", 100, 50), ("rt:fill/s:100:100", 100, 100),
            ("rs:fill-down:800:800", 200, 200),  // not enlarged: the largest square of the source
            ("rs:fill-down:100:50", 100, 50), ("rs:fill:800:800", 400, 200),
            ("rt:auto/s:300:100", 300, 100),  // landscape box, landscape source: fill
            ("rt:auto/s:100:300", 100, 50),  // portrait box: fit
            // A minimum past the box scales past it, then the result is cut to the box (imgproxy's warning)
            ("w:100/mw:200", 100, 100), ("h:20/mh:50", 100, 20), ("mw:200", 400, 200),
            ("rt:auto/s:100:100", 100, 100),  // a square box counts as landscape: fill
            ("rs:fill:100:100/z:2", 200, 200),  // the cut is the box times the zoom
            ("z:0.5", 200, 100), ("zoom:0.5:0.25", 200, 50), ("s:100:100/z:2", 200, 100),
            ("z:2", 400, 200),  // zoom does not enlarge unless asked
            ("z:2/el:1", 800, 400), ("rs:force:800:100", 400, 50),  // force without enlarge: the larger scale is 1
            ("rs:force:800:100:1", 800, 100),
        ]
        for (options, width, height) in cases {
            #expect(try await size(fixture, options) == PixelSize(width: width, height: height), "\(options)")
        }
    }

    /// imgproxy bounds the DPR by what keeps the image from being enlarged, and pads, extends and offsets with the
    /// DPR applied: a `dpr:2` request for a source too small for twice the box gets the box's shape at the size the
    /// source has, with padding for that size.
    @Test func theDPRIsBoundedSoThatTheImageIsNotEnlarged() async throws {
        let fixture = try ProxyFixture()
        let cases: [(String, Int, Int)] = [
            ("rs:fill:300:100/dpr:2", 400, 133),  // 3:1 at 400 pixels wide (DPR 4/3), not 400 × 200 in a 600 × 200 box
            ("rs:fill:100:50/dpr:2", 200, 100),  // room enough: the whole DPR
            ("rs:fit:300:300/dpr:2/pd:10", 426, 226),  // 10 × 4/3 = 13.3 pixels of padding, not 20
            ("rs:fit:300:300:0:1/dpr:2", 400, 400),  // extended to 300 × 4/3, not to 600
            ("dpr:0.5", 200, 100),  // without a box, a DPR below 1 still scales
            ("dpr:2", 400, 200), ("dpr:2/el:1", 800, 400),  // and one above 1 only with enlarge
            ("rs:fill:300:100:1/dpr:2", 600, 200),  // enlarge: the whole DPR
        ]
        for (options, width, height) in cases {
            #expect(try await size(fixture, options) == PixelSize(width: width, height: height), "\(options)")
        }
        // A 10-pixel offset from the west edge is 13 pixels at the DPR applied (4/3): the crop starts at source
        // x 13, so the red/blue edge (source x 200) is at output x 187, not at 180 as with the URL's DPR.
        let offset = try await image(fixture, "rs:fill:150:150/g:we:10/dpr:2/f:png")
        try #require(offset.size == PixelSize(width: 200, height: 200))
        #expect(isRed(offset[pixel: 183, 100]) && isBlue(offset[pixel: 191, 100]))
        // Blur is in result pixels whatever the DPR, as imgproxy's: a 400-pixel result blurred by 3 is the same
        // image whether asked as w:400 or as w:200 at DPR 2.
        let direct = try await image(fixture, "w:400/bl:3/f:png")
        let doubled = try await image(fixture, "w:200/dpr:2/bl:3/f:png")
        #expect(direct.size == doubled.size && direct.bytes == doubled.bytes)
    }

    /// imgproxy's other output formats: BMP, ICO (fitted into 256 × 256, ICO's limit, as imgproxy's fixIcoSize),
    /// TIFF and HEIC, by `format` or by the source's extension.
    @Test func bmpICOAndTIFFOutputs() async throws {
        let fixture = try ProxyFixture()
        for (options, ext, type, size) in [
            ("f:bmp", nil, "image/bmp", PixelSize(width: 400, height: 200)),
            ("rs:fit:64:64/f:ico", nil, "image/x-icon", PixelSize(width: 64, height: 32)),
            ("f:ico", nil, "image/x-icon", PixelSize(width: 256, height: 128)),
            ("w:100", "tiff", "image/tiff", PixelSize(width: 100, height: 50)),
            ("format:tif/w:100", nil, "image/tiff", PixelSize(width: 100, height: 50)),
            ("f:heic/w:100", nil, "image/heic", PixelSize(width: 100, height: 50)),
        ] {
            let response = await fixture.get(fixture.path(options, ext: ext))
            try #require(response.status == 200, "\(options): \(errorMessage(response))")
            #expect(response.headers.first { $0.name == "Content-Type" }?.value == type, "\(options)")
            let image = try ServerTestImages.decode(response.body)
            #expect(image.size == size, "\(options)")
            #expect(isRed(image[pixel: size.width / 4, size.height / 2]), "\(options)")
            #expect(isBlue(image[pixel: size.width * 3 / 4, size.height / 2]), "\(options)")
        }
    }

    /// imgproxy's `IMGPROXY_USE_LINEAR_COLORSPACE` (`--use-linear-colorspace`): a 1-pixel black-and-white
    /// checkerboard shrunk is the grey of half the light (sRGB 188), not the mean of the values (128); the outputs
    /// are keyed apart.
    @Test func linearColorspaceResizesAverageLight() async throws {
        var board = try PixelBuffer(width: 64, height: 64)
        for y in 0..<64 { for x in 0..<64 where (x + y) % 2 == 0 { board[pixel: x, y] = RGBA(r: 255, g: 255, b: 255) } }
        for y in 0..<64 { for x in 0..<64 where (x + y) % 2 == 1 { board[pixel: x, y] = RGBA(r: 0, g: 0, b: 0) } }
        let png = try ImageEncoderRegistry.makeDefault().encode(board, as: .png)
        var greys: [Int] = []
        for linear in [false, true] {
            let options = try ServeCommand.parse(
                parseArguments(
                    ["--unsigned"] + (linear ? ["--use-linear-colorspace"] : []), options: ServeCommand.command.options),
                environment: [:])
            #expect(options.usesLinearColorspace == linear)
            let fixture = try ProxyFixture { $0.usesLinearColorspace = options.usesLinearColorspace }
            fixture.origin.setRoute("/board.png", .bytes(png, contentType: "image/png"))
            let image = try await self.image(fixture, "rs:fit:8:8/f:png", "/board.png")
            try #require(image.size == PixelSize(width: 8, height: 8))
            greys.append(Int(image[pixel: 4, 4].r))
        }
        #expect(greys == [128, 188])
        var options = ProcessingOptions()
        options.resizesInLinearLight = true
        #expect(options.canonicalDescription.hasSuffix("/lin:1") && ProxyResize(ProcessingOptions()) == nil)
    }

    /// imgproxy's `IMGPROXY_DISABLE_SHRINK_ON_LOAD` (`--disable-shrink-on-load`) with linear light: a JPEG
    /// checkerboard shrunk 8× at load is DCT-averaged in gamma-encoded values (about 128) before linear light can
    /// average it; decoded at full size, the whole resize is in linear light (about 188). Keyed apart.
    @Test func withoutShrinkOnLoadTheWholeResizeIsInLinearLight() async throws {
        var board = try PixelBuffer(width: 64, height: 64)
        for y in 0..<64 {
            for x in 0..<64 {
                let white = (x + y) % 2 == 0
                board[pixel: x, y] = white ? RGBA(r: 255, g: 255, b: 255) : RGBA(r: 0, g: 0, b: 0)
            }
        }
        let jpeg = try JPEGEncoder().encode(board, options: EncodingOptions(quality: 1))
        var greys: [Int] = []
        for disabled in [false, true] {
            let options = try ServeCommand.parse(
                parseArguments(
                    ["--unsigned", "--use-linear-colorspace"] + (disabled ? ["--disable-shrink-on-load"] : []),
                    options: ServeCommand.command.options),
                environment: [:])
            #expect(options.disablesShrinkOnLoad == disabled)
            let fixture = try ProxyFixture {
                $0.usesLinearColorspace = true
                $0.shrinksOnLoad = !options.disablesShrinkOnLoad
            }
            fixture.origin.setRoute("/board.jpg", .bytes(jpeg, contentType: "image/jpeg"))
            let image = try await self.image(fixture, "rs:fit:8:8/f:png", "/board.jpg")
            try #require(image.size == PixelSize(width: 8, height: 8))
            greys.append(Int(image[pixel: 4, 4].g))
        }
        #expect(abs(greys[0] - 128) <= 12 && abs(greys[1] - 188) <= 12, "\(greys)")
        var options = ProcessingOptions()
        options.disablesShrinkOnLoad = true
        #expect(options.canonicalDescription.hasSuffix("/sol:0"))
        try OptionParser.apply("w:10", to: &options)
        let resize = try #require(ProxyResize(options))
        #expect(resize.decodeTarget?.shrinking == .never && resize.identifier.hasSuffix("&sol=0"))
    }

    @Test func resultsAreCappedAtTheLargestSide() throws {
        var options = ProcessingOptions()
        try OptionParser.apply("rs:fit:8192:0:1", to: &options)
        try OptionParser.apply("z:8", to: &options)
        let resize = try #require(ProxyResize(options))
        #expect(resize.plan(for: PixelSize(width: 4, height: 2)).scaled == PixelSize(width: 8192, height: 4096))
        options = ProcessingOptions()  // no box: the source times the zoom, capped
        try OptionParser.apply("z:8", to: &options)
        try OptionParser.apply("el:1", to: &options)
        let zoomed = try #require(ProxyResize(options))
        #expect(zoomed.plan(for: PixelSize(width: 5000, height: 10)).scaled == PixelSize(width: 8192, height: 16))
    }

    @Test func focusPointsAndRelativeOffsetsPlaceTheCrop() async throws {
        let fixture = try ProxyFixture()
        // A 50 × 50 fill crops the 100 × 50 scaled image.
        #expect(isRed(try await image(fixture, "rs:fill:50:50/g:fp:0:0.5")[pixel: 40, 25]))
        #expect(isBlue(try await image(fixture, "rs:fill:50:50/g:fp:1:0.5")[pixel: 10, 25]))
        #expect(isRed(try await image(fixture, "rs:fill:50:50/g:we")[pixel: 40, 25]))
        #expect(isBlue(try await image(fixture, "rs:fill:50:50/g:we:0.6")[pixel: 10, 25]))  // 0.6 × 100 px, clamped
        // 10 px from the west edge: x 10…59 of the scaled image, so output x 45 is source x 55 (blue) …
        #expect(isBlue(try await image(fixture, "rs:fill:50:50/g:we:10")[pixel: 45, 25]))
        // … and with DPR 2 the offset doubles too: x 20…119 of 200, output x 25 is source x 45 (red).
        #expect(isRed(try await image(fixture, "rs:fill:50:50/g:we:10/dpr:2")[pixel: 25, 50]))
    }

    @Test func smartGravityKeepsTheDetail() async throws {
        let fixture = try ProxyFixture()
        // Flat gray with a checkerboard over the right quarter
        let detailed = try ServerTestImages.checkeredQuarter()
        fixture.origin.setRoute(
            "/detail.png",
            .bytes(try ImageEncoderRegistry.makeDefault().encode(detailed, as: .png), contentType: "image/png"))
        let smart = await fixture.get(fixture.path("rs:fill:100:100/g:sm/f:png", "/detail.png"))
        let east = await fixture.get(fixture.path("rs:fill:100:100/g:ea/f:png", "/detail.png"))
        let west = await fixture.get(fixture.path("rs:fill:100:100/g:we/f:png", "/detail.png"))
        #expect(smart.status == 200 && smart.body == east.body && smart.body != west.body)
        let cropped = await fixture.get(fixture.path("c:200:200:sm/f:png", "/detail.png"))
        let croppedEast = await fixture.get(fixture.path("c:200:200:ea/f:png", "/detail.png"))
        #expect(cropped.status == 200 && cropped.body == croppedEast.body)
        let refused = await fixture.get(fixture.path("ex:1:sm"))
        #expect(refused.status == 400 && errorMessage(refused).contains("'ex'"))
    }

    @Test func trimCutsTheBorderFirst() async throws {
        let fixture = try ProxyFixture()
        var framed = try PixelBuffer(width: 100, height: 80)
        var clear = try PixelBuffer(width: 100, height: 80)  // transparent black
        for y in 0..<80 {
            for x in 0..<100 {
                let inside = (10..<90).contains(x) && (20..<60).contains(y)
                framed[pixel: x, y] = inside ? RGBA(r: 220, g: 0, b: 0) : RGBA(r: 255, g: 255, b: 255)
                if inside { clear[pixel: x, y] = RGBA(r: 220, g: 0, b: 0) }
            }
        }
        let encoders = ImageEncoderRegistry.makeDefault()
        fixture.origin.setRoute("/framed.png", .bytes(try encoders.encode(framed, as: .png), contentType: "image/png"))
        fixture.origin.setRoute("/clear.png", .bytes(try encoders.encode(clear, as: .png), contentType: "image/png"))
        let trimmed = try await image(fixture, "t:10/f:png", "/framed.png")
        #expect(trimmed.size == PixelSize(width: 80, height: 40) && trimmed[pixel: 0, 0] == RGBA(r: 220, g: 0, b: 0))
        #expect(
            try await image(fixture, "t:10:ffffff/s:40:40/f:png", "/framed.png").size
                == PixelSize(width: 40, height: 20))
        #expect(try await image(fixture, "t:0:ff00ff/f:png", "/clear.png").size == PixelSize(width: 80, height: 40))
        #expect(try await image(fixture, "t:10::1:1/f:png", "/framed.png").size == PixelSize(width: 80, height: 40))
        let none = try await image(fixture, "t:10:00ff00/f:png", "/framed.png")  // green border: nothing to cut
        #expect(none.size == PixelSize(width: 100, height: 80))
    }

    @Test func watermarksAreDrawnPlacedTiledAndScaled() async throws {
        var mark = try PixelBuffer(width: 10, height: 10)
        for y in 0..<10 { for x in 0..<10 { mark[pixel: x, y] = RGBA(r: 0, g: 255, b: 0) } }
        let markData = try ImageEncoderRegistry.makeDefault().encode(mark, as: .png)
        let fixture = try ProxyFixture { $0.watermark = try WatermarkImage(data: markData) }
        let green = { (p: RGBA) in p.g > 200 && p.r < 60 && p.b < 60 }
        let corner = try await image(fixture, "wm:1:nowe/f:png")
        #expect(green(corner[pixel: 5, 5]) && isRed(corner[pixel: 15, 15]))
        let offset = try await image(fixture, "wm:1:soea:5:5/f:png")  // 385…394 × 185…194
        #expect(green(offset[pixel: 390, 190]) && isBlue(offset[pixel: 396, 196]))
        let half = try await image(fixture, "wm:0.5/f:png")[pixel: 202, 100]  // green half over blue
        #expect((110...145).contains(Int(half.g)) && (110...145).contains(Int(half.b)))
        // Beyond the edge by its offset, as imgproxy's (before, it was held inside): x 395…404 of 400
        let past = try await image(fixture, "wm:1:soea:-5:-5/f:png")
        #expect(green(past[pixel: 397, 197]) && isBlue(past[pixel: 393, 193]))
        // Tiles of 10 + 10 pixels, an odd number across (21) and down (11), centred as imgproxy's: one tile sits
        // on the centre (x 195…204, y 95…104), and the marks are at x 20k − 5 … 20k + 4 (so 5 … 14 is a gap)
        let tiles = try await image(fixture, "wm:1:re:10:10/f:png")
        #expect(green(tiles[pixel: 200, 100]) && green(tiles[pixel: 196, 96]) && isBlue(tiles[pixel: 208, 100]))
        #expect(green(tiles[pixel: 2, 2]) && isRed(tiles[pixel: 10, 10]) && green(tiles[pixel: 20, 20]))
        let scaled = try await image(fixture, "wm:1:nowe:0:0:0.1/f:png")  // fitted in 40 × 20: 20 × 20
        #expect(green(scaled[pixel: 15, 15]) && isRed(scaled[pixel: 25, 25]))
        let none = await fixture.get(fixture.path("wm:0/f:png"))
        #expect(none.body == (await fixture.get(fixture.path("f:png"))).body)

        let bare = try ProxyFixture()
        let refused = await bare.get(bare.path("wm:1"))
        #expect(refused.status == 400 && errorMessage(refused).contains("no watermark image"))
        let key = OutputKey(source: "s", options: ProcessingOptions(), format: .negotiated(.jpeg))
        var other = key
        other.watermark = "b"
        #expect(key.diskKey != other.diskKey)
    }

    @Test func aBaseURLTakesRelativeSources() async throws {
        // A proxy whose base URL is another fixture's origin (http://127.0.0.1:PORT/)
        let own = try ProxyFixture()
        let relative = try ProxyFixture { $0.baseURL = own.source("/") }
        let plain = await relative.get("/_/s:100:100/plain/a.jpg")
        #expect(plain.status == 200 && own.origin.requestCount(for: "/a.jpg") == 1)
        let encoded = Base64URL.encode(Array("a.jpg".utf8))
        #expect(await relative.get("/_/s:50:50/\(encoded).png").status == 200)
        #expect(await relative.get("/_/plain/missing.jpg").status == 404)
    }

    @Test func cropComesBeforeTheResize() async throws {
        let fixture = try ProxyFixture()
        let left = try await image(fixture, "c:200:200:we/s:50:50/f:png")
        #expect(left.size == PixelSize(width: 50, height: 50) && isRed(left[pixel: 45, 25]))
        let right = try await image(fixture, "crop:0.5:0:ea/f:png")
        #expect(right.size == PixelSize(width: 200, height: 200) && isBlue(right[pixel: 5, 100]))
        #expect(try await size(fixture, "c:100:100/g:so") == PixelSize(width: 100, height: 100))
        #expect(try await size(fixture, "c:1000:50") == PixelSize(width: 400, height: 50))
        #expect(isBlue(try await image(fixture, "c:100:100:fp:1:0/f:png")[pixel: 10, 10]))
    }

    @Test func extendPaddingAndBackgroundFillTheCanvas() async throws {
        let fixture = try ProxyFixture()
        let white = try await image(fixture, "rs:fit:500:500/ex:1/bg:ffffff/f:png")
        #expect(white.size == PixelSize(width: 500, height: 500))
        #expect(white[pixel: 250, 10] == RGBA(r: 255, g: 255, b: 255) && isRed(white[pixel: 60, 250]))
        let north = try await image(fixture, "rs:fit:500:500:0:1:no/f:png")  // extend through resize, at the top
        #expect(north.size == PixelSize(width: 500, height: 500))
        #expect(isRed(north[pixel: 60, 10]) && north[pixel: 250, 490].a == 0)
        let square = try await image(fixture, "exar:1/s:100:100/f:png")
        #expect(square.size == PixelSize(width: 100, height: 100))
        #expect(square[pixel: 50, 5].a == 0 && isRed(square[pixel: 20, 50]) && isBlue(square[pixel: 80, 50]))
        let padded = try await image(fixture, "pd:10:20/bg:0:255:0/f:png")
        #expect(padded.size == PixelSize(width: 440, height: 220) && padded[pixel: 5, 5] == RGBA(r: 0, g: 255, b: 0))
        #expect(try await size(fixture, "pd:5/dpr:2/s:100:100") == PixelSize(width: 220, height: 120))
        #expect(try await image(fixture, "pd:10/f:png")[pixel: 5, 5].a == 0)
    }

    @Test func aJPEGOfATransparentSourceIsFlattenedOnWhiteOrTheBackground() async throws {
        let fixture = try ProxyFixture()
        fixture.origin.setRoute("/alpha.png", .bytes(try ServerTestImages.pngWithAlpha(), contentType: "image/png"))
        let onWhite = try await image(fixture, "f:jpg", "/alpha.png")
        #expect(onWhite[pixel: 10, 32].r > 245 && onWhite[pixel: 10, 32].g > 245 && onWhite[pixel: 10, 32].b > 245)
        #expect(onWhite[pixel: 50, 32].g > 180 && onWhite[pixel: 50, 32].r < 40)
        #expect(isRed(try await image(fixture, "bg:255:0:0/f:jpg", "/alpha.png")[pixel: 10, 32]))
        #expect(try await image(fixture, "f:png", "/alpha.png")[pixel: 10, 32].a == 0)
        #expect(try await image(fixture, "bg:f00/f:png", "/alpha.png")[pixel: 10, 32] == RGBA(r: 255, g: 0, b: 0))
    }

    @Test func sharpenAndPixelate() async throws {
        let fixture = try ProxyFixture()
        let plain = try await image(fixture, "rs:fit:100:50/bl:1/f:png")
        let sharpened = try await image(fixture, "rs:fit:100:50/bl:1/sh:1/f:png")
        // Across the red/blue edge the sharpened image steps harder.
        let step = { (i: PixelBuffer) in Int(i[pixel: 48, 25].r) - Int(i[pixel: 51, 25].r) }
        #expect(step(sharpened) > step(plain) + 10)
        let blocks = try await image(fixture, "pix:30/f:png")
        #expect(blocks[pixel: 0, 0] == blocks[pixel: 29, 29] && blocks[pixel: 30, 0] == blocks[pixel: 59, 29])
        // The block over x 180…209 is two thirds red, one third blue.
        let straddling = blocks[pixel: 195, 15]
        #expect((150...190).contains(Int(straddling.r)) && (65...105).contains(Int(straddling.b)))
    }

    @Test func formatQualityAndMaxBytes() async throws {
        let fixture = try ProxyFixture()
        let low = await fixture.get(fixture.path("fq:jpeg:5:webp:90/f:jpg"))
        let high = await fixture.get(fixture.path("fq:jpeg:95/f:jpg"))
        let asked = await fixture.get(fixture.path("q:95/f:jpg"))
        let both = await fixture.get(fixture.path("q:95/fq:jpeg:5/f:jpg"))
        #expect(low.status == 200 && high.status == 200 && low.body.count < high.body.count)
        #expect(both.body == asked.body)  // quality wins over format_quality
        // This flat image's JPEG is mostly headers: 2.7 KB at quality 95, 2.1 KB at 30, 2.05 KB at 10.
        let at30 = await fixture.get(fixture.path("q:30/f:jpg")).body
        let at10 = await fixture.get(fixture.path("q:10/f:jpg")).body
        let capped = await fixture.get(fixture.path("q:95/mb:\(at30.count)/f:jpg"))
        #expect(capped.status == 200 && capped.body.count <= at30.count && capped.body.count >= at10.count)
        #expect(try ServerTestImages.decode(capped.body).size == PixelSize(width: 400, height: 200))
        let unreachable = await fixture.get(fixture.path("q:95/mb:100/f:jpg"))  // stops at quality 10
        #expect(unreachable.status == 200 && unreachable.body == at10)
        let png = await fixture.get(fixture.path("mb:100/f:png"))  // lossless: not degraded
        #expect(png.status == 200 && png.body.count > 100)
    }

    @Test func cacheBusterChangesTheETagButNotTheImageNorTheFetches() async throws {
        let fixture = try ProxyFixture()
        let one = await fixture.get(fixture.path("cb:1/f:png"))
        let two = await fixture.get(fixture.path("cb:2/f:png"))
        #expect(one.status == 200 && two.status == 200 && one.body == two.body)
        #expect(one.header("ETag") != two.header("ETag"))
        #expect(fixture.origin.requestCount(for: "/a.jpg") == 1)
    }

    @Test func expiredURLsAre404() async throws {
        let fixture = try ProxyFixture()
        let now = Int(Date().timeIntervalSince1970)
        let expired = await fixture.get(fixture.path("exp:\(now - 10)"))
        #expect(expired.status == 404 && errorMessage(expired).contains("expired"))
        #expect(await fixture.get(fixture.path("exp:\(now + 3600)")).status == 200)
        #expect(fixture.origin.requestCount(for: "/a.jpg") == 1)
    }

    @Test func contentDispositionNamesTheFile() async throws {
        let fixture = try ProxyFixture()
        #expect(await fixture.get(fixture.path("f:jpg")).header("Content-Disposition") == "inline; filename=\"a.jpg\"")
        let named = await fixture.get(fixture.path("fn:photo/att:1/f:webp"))
        #expect(named.header("Content-Disposition") == "attachment; filename=\"photo.webp\"")
        let encoded = Data("h\u{E9}llo".utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")
        let unicode = await fixture.get(fixture.path("fn:\(encoded):1/f:png"))
        #expect(
            unicode.header("Content-Disposition") == "inline; filename=\"h_llo.png\"; filename*=UTF-8''h%C3%A9llo.png")
        let slash = await fixture.get(fixture.path("fn:a%2Fb"))
        #expect(slash.status == 400 && errorMessage(slash).contains("'fn'"))
        // The server's default (imgproxy's IMGPROXY_RETURN_ATTACHMENT), which a URL's att:0 turns off
        let attaching = try ProxyFixture { $0.returnsAttachment = true }
        #expect(
            await attaching.get(attaching.path("f:png")).header("Content-Disposition")?.hasPrefix("attachment;") == true
        )
        #expect(
            await attaching.get(attaching.path("att:0/f:png")).header("Content-Disposition")?.hasPrefix("inline;")
                == true)
    }

    /// imgproxy's `IMGPROXY_ETAG_BUSTER`: every ETag changes with it, conditional requests follow the new ones, and
    /// the output itself is the same (from the same cache).
    @Test func anETagBusterChangesEveryETag() async throws {
        let outputs = OutputCache()
        func proxy(_ buster: String) throws -> ProxyFixture {
            try ProxyFixture {
                $0.outputCache = outputs
                $0.etagBuster = buster
            }
        }
        let plain = try proxy("")
        let path = plain.path("w:20/f:png")  // every proxy asks the first's origin
        let first = await plain.get(path)
        let etag = try #require(first.header("ETag"))
        #expect(etag.hasPrefix("\"") && etag.hasSuffix("\""))
        var etags: Set<String> = [etag]
        for buster in ["v2", "v3"] {
            let busted = try proxy(buster)
            let response = await busted.get(path)
            #expect(response.body == first.body)
            let new = try #require(response.header("ETag"))
            #expect(new.hasPrefix("\"") && new.hasSuffix("\"") && !new.dropFirst().dropLast().contains("\""))
            etags.insert(new)
            #expect(await busted.get(path, headers: ["if-none-match": new]).status == 304)
            #expect(await busted.get(path, headers: ["if-none-match": etag]).status == 200)
        }
        #expect(plain.origin.requestCount(for: "/a.jpg") == 1, "answered from the shared output cache")
        #expect(etags.count == 3)
        // The same text gives the same ETags (another process, a restart)
        let again = try proxy("v2")
        #expect(etags.contains(try #require(await again.get(path).header("ETag"))))
    }

    /// imgproxy's `IMGPROXY_SET_CANONICAL_HEADER`: the source named canonical, for http(s) sources only.
    @Test func aCanonicalLinkNamesTheSourceWhenAsked() async throws {
        let plain = try ProxyFixture()
        #expect(await plain.get(plain.path("w:20")).header("Link") == nil)
        let fixture = try ProxyFixture { $0.setsCanonicalHeader = true }
        let path = fixture.path("w:20")
        let response = await fixture.get(path)
        #expect(response.status == 200, "\(errorMessage(response))")
        #expect(response.header("Link") == "<\(fixture.source())>; rel=\"canonical\"")
        // The same from the output cache
        #expect(await fixture.get(path).header("Link") == response.header("Link"))
        // A local: source has none
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("imago-canonical-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        try fixture.jpeg.write(to: root.appendingPathComponent("a.jpg"))
        let local = try ProxyFixture {
            $0.setsCanonicalHeader = true
            $0.localRoot = root
        }
        let localResponse = await local.get("/_/w:20/plain/local:///a.jpg")
        #expect(localResponse.status == 200, "\(errorMessage(localResponse))")
        #expect(localResponse.header("Link") == nil)
    }

    @Test func presetsApplyInPlaceAndTheDefaultOneFirst() async throws {
        let fixture = try ProxyFixture {
            $0.presets = try PresetTable(definitions: ["thumb=rs:fill:50:50/f:png", "small=pr:thumb/s:20:20"])
        }
        #expect(try await size(fixture, "pr:thumb") == PixelSize(width: 50, height: 50))
        #expect(try await size(fixture, "preset:small") == PixelSize(width: 20, height: 20))
        #expect(try await size(fixture, "pr:thumb/w:30") == PixelSize(width: 30, height: 50))  // later options win
        let unknown = await fixture.get(fixture.path("pr:nope"))
        #expect(unknown.status == 400 && errorMessage(unknown).contains("no preset named 'nope'"))

        let withDefault = try ProxyFixture { $0.presets = try PresetTable(definitions: ["default=q:50/f:jpg"]) }
        let plain = try ProxyFixture()
        let defaulted = await withDefault.get(withDefault.path(""))
        #expect(defaulted.header("Content-Type") == "image/jpeg")
        #expect(defaulted.body == (await plain.get(plain.path("q:50/f:jpg"))).body)
        #expect(await withDefault.get(withDefault.path("f:png")).header("Content-Type") == "image/png")

        #expect(throws: ProxyError.self) { try PresetTable(definitions: ["a=pr:b", "b=pr:a"]) }
        #expect(throws: ProxyError.self) { try PresetTable(definitions: ["bad=nope:1"]) }
        #expect(throws: ProxyError.self) { try PresetTable(definitions: ["noequals"]) }
        #expect(throws: ProxyError.self) { try PresetTable(definitions: ["a=w:1", "a=w:2"]) }
    }

    @Test(arguments: [
        ("rt:bogus", "'rt'"), ("z:0", "'z'"), ("bg:12", "'bg'"), ("pd:2000", "'pd'"), ("c:-1:5", "'c'"),
        ("g:fp:2:0", "'g'"), ("g:fp", "'g'"), ("fq:jpeg", "'fq'"), ("pr:", "'pr'"), ("sm:2", "'sm'"), ("ar:2", "'ar'"),
        ("kcr:maybe", "'kcr'"), ("scp:maybe", "'scp'"), ("ph:1", "'ph'"), ("preserve_hdr:x", "'preserve_hdr'"),
        ("exp:soon", "'exp'"), ("mb:-1", "'mb'"), ("sh:-1", "'sh'"),
        ("pix:x", "'pix'"), ("ex:1:up", "'ex'"), ("t:300", "'t'"), ("t:1:nothex", "'t'"), ("wm:2", "'wm'"),
        ("wm:1:fp", "'wm'"),
        ("wm:1:up", "'wm'"),
        ("s:10:10:1:1:no:1:2:3", "'s'"), ("pd:4/dpr:8/pd:200", "'pd'"),
        ("adjust:10", "unknown option 'adjust'"),
    ])
    func invalidOptionsAre400NamingTheOption(options: String, named: String) async throws {
        let fixture = try ProxyFixture()
        let response = await fixture.get(fixture.path(options))
        #expect(response.status == 400 && errorMessage(response).contains(named), "\(errorMessage(response))")
        #expect(fixture.origin.requestCount(for: "/a.jpg") == 0)
    }

    @Test func autoRotateZeroLeavesTheEXIFOrientationUnapplied() async throws {
        let fixture = try ProxyFixture()
        // Orientation 6: the stored 400 × 200 image is shown turned 90° clockwise, 200 × 400
        fixture.origin.setRoute(
            "/turned.jpg", .bytes(ExifFixture.jpeg(fixture.jpeg, withOrientation: 6), contentType: "image/jpeg"))
        let shown = try await image(fixture, "f:png", "/turned.jpg")
        #expect(shown.size == PixelSize(width: 200, height: 400) && isRed(shown[pixel: 100, 20]))
        let stored = try await image(fixture, "ar:0/f:png", "/turned.jpg")
        #expect(stored.size == PixelSize(width: 400, height: 200) && isRed(stored[pixel: 20, 100]))
        #expect(try await size(fixture, "ar:1/f:png") == PixelSize(width: 400, height: 200))
        #expect(try await size(fixture, "ar:0/s:100:100/f:png") == PixelSize(width: 100, height: 50))
    }

    @Test func acceptedNoOpsAndTheCanonicalTextOfNewOptions() async throws {
        let fixture = try ProxyFixture()
        for options in [
            "sm:1", "strip_metadata:t", "scp:true", "kcr:0", "keep_copyright:false", "ph:0", "preserve_hdr:f",
        ] {
            #expect(await fixture.get(fixture.path(options)).status == 200, "\(options)")
        }
        var defaults = ProcessingOptions()
        let before = defaults.canonicalDescription
        #expect(before == "rs:fit:0:0:0/g:ce:0:0/q:0/f:auto/bl:0/rot:0/dpr:1")  // unchanged: old disk keys stay valid
        for segment in [
            "mw:5", "z:2", "c:10:10", "ex:1", "exar:1", "pd:1", "bg:000", "fq:png:5", "mb:10", "sh:1", "pix:2", "cb:x",
            "ar:0", "t:5", "scp:0", "sm:0", "kcr:0",
        ] {
            var options = ProcessingOptions()
            try OptionParser.apply(segment[...], to: &options)
            #expect(options.canonicalDescription != before, "\(segment)")
        }
        try OptionParser.apply("fn:x", to: &defaults)
        try OptionParser.apply("exp:1", to: &defaults)
        #expect(defaults.canonicalDescription == before)  // headers and checks only: the same output
        // Options whose images stop 37's resize changed are marked, so outputs made before are not answered;
        // the others keep their keys.
        func text(_ segments: String) throws -> String {
            var options = ProcessingOptions()
            for segment in segments.split(separator: "/") { try OptionParser.apply(segment, to: &options) }
            return options.canonicalDescription
        }
        for changed in ["dpr:2", "rt:auto/s:10:10", "w:10/mw:20", "s:10:10/z:2"] {
            #expect(try text(changed).contains("/l2/") || text(changed).hasSuffix("/l2"), "\(changed)")
        }
        for unchanged in ["s:10:10", "rs:fill:10:10", "rt:auto/w:10", "mw:20", "z:2", "bl:2"] {
            #expect(try !text(unchanged).contains("/l2"), "\(unchanged)")
        }
    }

    /// `enforce_thumbnail`: pillow_heif's 64 × 64 HEIC, whose embedded thumbnail is 32 × 32, rendered from the
    /// thumbnail (never enlarged) when the URL or the server says so.
    @Test func enforceThumbnailRendersTheEmbeddedThumbnail() async throws {
        let heic = try serverCorpus("heic/pillowheif-zPug_3.heic")
        func size(
            _ options: String, _ configure: @escaping (inout ImageProxy.Configuration) -> Void = { _ in }
        )
            async throws -> PixelSize
        {
            let fixture = try ProxyFixture(configure)
            fixture.origin.setRoute("/t.heic", .bytes(heic, contentType: "image/heic"))
            let response = await fixture.get(fixture.path(options, "/t.heic", ext: "png"))
            #expect(response.status == 200, "\(options): \(errorMessage(response))")
            return try ServerTestImages.decode(response.body).size
        }
        #expect(try await size("w:64") == PixelSize(width: 64, height: 64))
        #expect(try await size("w:64/eth:1") == PixelSize(width: 32, height: 32))
        #expect(try await size("enforce_thumbnail:true/w:16") == PixelSize(width: 16, height: 16))
        let enforced: (inout ImageProxy.Configuration) -> Void = { $0.enforcesThumbnail = true }
        #expect(try await size("w:64", enforced) == PixelSize(width: 32, height: 32))
        #expect(try await size("w:64/eth:0", enforced) == PixelSize(width: 64, height: 64))
        var options = ProcessingOptions()
        try OptionParser.apply("eth:1", to: &options)
        #expect(options.enforcesThumbnail == true && options.canonicalDescription.hasSuffix("/eth:1"))
        #expect(throws: ProxyError.self) { try OptionParser.apply("eth:2", to: &options) }
    }

    /// imgproxy's security options: refused unless the server allows them, and then only tightening its limits.
    @Test func securityOptionsTightenTheServersLimitsWhenAllowed() async throws {
        let off = try ProxyFixture()
        for (options, name) in [
            ("mrd:100", "max_result_dimension"), ("msr:1", "max_src_resolution"), ("msfs:10", "max_src_file_size"),
            ("maf:1", "max_animation_frames"),
        ] {
            let refused = await off.get(off.path(options, ext: "png"))
            #expect(refused.status == 400 && errorMessage(refused).contains(name), "\(options)")
        }
        let gif = try serverCorpus("gif/samples/moon_impact.gif")
        let on = try ProxyFixture {
            $0.allowsSecurityOptions = true
            $0.maxResultDimension = 300
            $0.maxAnimationFrames = 50
        }
        on.origin.setRoute("/anim.gif", .bytes(gif, contentType: "image/gif"))
        on.origin.setRoute("/b.png", .bytes(try ServerTestImages.pngWithAlpha(), contentType: "image/png"))
        func get(_ options: String, _ source: String = "/a.jpg", ext: String = "png") async -> ServerResponse {
            await on.get(on.path(options, source, ext: ext))
        }
        // The 400 × 200 source: the URL's result limit, or the server's when it is the smaller
        #expect(try ServerTestImages.decode(await get("mrd:100").body).size == PixelSize(width: 100, height: 50))
        #expect(try ServerTestImages.decode(await get("mrd:1000").body).size == PixelSize(width: 300, height: 150))
        // The 64 × 64 PNG, 4,096 pixels: over 0.004 megapixels is a 422, within 0.005 is served (as with
        // --max-pixels, a JPEG that DCT scaling decodes within the limit for a smaller result is served)
        #expect(await get("msr:0.004", "/b.png").status == 422)
        #expect(await get("msr:0.005", "/b.png").status == 200)
        // Its bytes: one over the URL's limit is a 413
        #expect(await get("msfs:\(on.jpeg.count - 1)").status == 413)
        #expect(await get("msfs:\(on.jpeg.count)").status == 200)
        // An animation: the URL's one frame, within the server's 50
        let animated = await get("", "/anim.gif", ext: "gif")
        let still = await get("maf:1", "/anim.gif", ext: "gif")
        #expect(try ImageDecoderRegistry.makeDefault().decode(animated.body).frameCount > 1)
        #expect(try ImageDecoderRegistry.makeDefault().decode(still.body).frameCount == 1)
        // Limits are part of the options' key text; invalid values are 400s naming the option
        var options = ProcessingOptions()
        for segment in ["msr:2.5", "msfs:1000", "maf:3"] { try OptionParser.apply(segment[...], to: &options) }
        #expect(options.canonicalDescription.hasSuffix("/msr:2500000/msfs:1000/maf:3"))
        for bad in ["msr:0", "msfs:0", "maf:0", "mrd:9000", "msr:x"] {
            #expect(throws: ProxyError.self, "\(bad)") { try OptionParser.apply(bad[...], to: &options) }
        }
    }
}
