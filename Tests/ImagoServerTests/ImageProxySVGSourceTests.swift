import Foundation
import Imago
import ImagoServer
import ImagoTesting
import Testing

@testable import ImagoCLI

/// SVG sources through the proxy: rasterised by `SVGDecoder` straight at the requested size.
@Suite("ImageProxy: SVG sources", .enabled(if: SVGDecoder.isAvailable, "librsvg2-2 is not installed"))
struct ImageProxySVGSourceTests {
    static let logo = Data(
        """
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 400 200">
          <rect width="200" height="200" fill="#ff0000"/>
          <circle cx="300" cy="100" r="100" fill="#0000ff"/>
        </svg>
        """.utf8)

    /// Red and blue halves of a 4 × 2 drawing.
    static let tiny = """
        <svg xmlns="http://www.w3.org/2000/svg" width="4" height="2">
          <rect width="2" height="2" fill="#ff0000"/><rect x="2" width="2" height="2" fill="#0000ff"/>
        </svg>
        """

    @Test(.timeLimit(.minutes(1)))
    func svgSourcesAreDrawnAtTheRequestedSize() async throws {
        let fixture = try ProxyFixture()
        fixture.origin.setRoute("/logo.svg", .bytes(Self.logo, contentType: "image/svg+xml"))
        let png = await fixture.get(fixture.path("rs:fit:100:100/f:png", "/logo.svg"))
        #expect(png.status == 200, "\(errorMessage(png))")
        #expect(png.headers.first { $0.name == "Content-Type" }?.value == "image/png")
        let image = try ServerTestImages.decode(png.body)
        #expect(image.width == 100 && image.height == 50)
        #expect(isRed(image[pixel: 20, 25]) && isBlue(image[pixel: 75, 25]))
        #expect(image[pixel: 99, 0].a == 0)  // outside the circle: transparent
        // Larger than its viewBox, as imgproxy draws vectors (no `enlarge` needed): drawn, not resampled, so the
        // edge between the halves stays a one-pixel step. From a 4 × 2 drawing, resampling would blur it over
        // dozens of pixels.
        fixture.origin.setRoute("/tiny.svg", .bytes(Data(Self.tiny.utf8), contentType: "image/svg+xml"))
        let large = await fixture.get(fixture.path("rs:fit:800:800/f:png", "/tiny.svg"))
        let enlarged = try ServerTestImages.decode(large.body)
        #expect(large.status == 200 && enlarged.width == 800 && enlarged.height == 400)
        #expect(
            enlarged[pixel: 399, 200] == RGBA(r: 255, g: 0, b: 0)
                && enlarged[pixel: 400, 200] == RGBA(r: 0, g: 0, b: 255))
        // With the server rasterising SVGs, no format and an Accept header taking WebP: WebP, as for any source
        // with alpha.
        let rasterizing = try ProxyFixture { $0.rasterizesSVG = true }
        rasterizing.origin.setRoute("/logo.svg", .bytes(Self.logo, contentType: "image/svg+xml"))
        let negotiated = await rasterizing.get(
            rasterizing.path("rs:fit:100:100", "/logo.svg"), headers: ["Accept": "image/webp"])
        #expect(negotiated.status == 200 && negotiated.header("Content-Type") == "image/webp")
    }

    /// The logo with a script, an event handler and a `javascript:` link.
    static let scripted = Data(
        """
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 400 200" onload="alert(1)">
          <script>alert(2)</script>
          <a href="javascript:alert(3)"><rect width="200" height="200" fill="#ff0000"/></a>
          <circle cx="300" cy="100" r="100" fill="#0000ff"/>
        </svg>
        """.utf8)

    @Test(.timeLimit(.minutes(1)))
    func svgSourcesAreAnsweredAsSanitizedSVGUnlessARasterFormatIsNamed() async throws {
        let fixture = try ProxyFixture { $0.sendsDebugHeaders = true }
        fixture.origin.setRoute("/logo.svg", .bytes(Self.scripted, contentType: "image/svg+xml"))
        let expected = try SVGSanitizer().sanitize(Self.scripted).data

        // No format, whatever Accept takes: the document, sanitized (imgproxy's default), with a policy that
        // would stop any script a browser found in it.
        let plain = await fixture.get(fixture.path("rs:fit:100:100", "/logo.svg"), headers: ["Accept": "image/webp"])
        #expect(plain.status == 200, "\(errorMessage(plain))")
        #expect(plain.header("Content-Type") == "image/svg+xml")
        #expect(plain.body == expected)
        let text = String(decoding: plain.body, as: UTF8.self)
        #expect(!text.contains("alert") && text.contains("<circle"), "\(text)")
        #expect(plain.header("Content-Security-Policy")?.contains("sandbox") == true)
        #expect(plain.header("X-Origin-Width") == "400" && plain.header("X-Origin-Height") == "200")
        // svg named by the option or the extension: the same document
        let named = await fixture.get(fixture.path("f:svg", "/logo.svg"))
        #expect(named.status == 200 && named.body == expected)
        let extended = await fixture.get(fixture.path("w:10", "/logo.svg", ext: "svg"))
        #expect(extended.status == 200 && extended.body == expected, "\(errorMessage(extended))")
        // A raster format named: drawn, as before
        let png = await fixture.get(fixture.path("rs:fit:100:100/f:png", "/logo.svg"))
        #expect(png.status == 200 && png.header("Content-Type") == "image/png")
        #expect(try ServerTestImages.decode(png.body).width == 100)
        // Each output is kept: asking again fetches nothing (this fixture keeps no originals on disk, so each of
        // the four outputs above fetched once).
        #expect(fixture.origin.requestCount(for: "/logo.svg") == 4)
        let again = await fixture.get(fixture.path("rs:fit:100:100", "/logo.svg"), headers: ["Accept": "image/webp"])
        #expect(again.body == expected && fixture.origin.requestCount(for: "/logo.svg") == 4)
    }

    @Test(.timeLimit(.minutes(1)))
    func aSanitizedSVGComesFromTheDiskCacheAfterARestartAsSVG() async throws {
        let fixture = try RestartFixture()
        fixture.origin.setRoute("/logo.svg", .bytes(Self.scripted, contentType: "image/svg+xml"))
        let expected = try SVGSanitizer().sanitize(Self.scripted).data
        for _ in 0..<2 {
            let response = try await fixture.respondAfterRestart(fixture.path("w:10", "/logo.svg"))
            #expect(response.status == 200 && response.body == expected)
            #expect(response.header("Content-Type") == "image/svg+xml")
        }
        #expect(fixture.origin.requestCount(for: "/logo.svg") == 1)
    }

    @Test(.timeLimit(.minutes(1)))
    func svgOutputErrorsSayWhoseFaultTheyAre() async throws {
        let fixture = try ProxyFixture()
        fixture.origin.setRoute("/a.jpg", .bytes(try ServerTestImages.jpeg(), contentType: "image/jpeg"))
        let huge = Data(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"100000\" height=\"100000\"><rect width=\"9\" height=\"9\"/></svg>"
                .utf8)
        fixture.origin.setRoute("/huge.svg", .bytes(huge, contentType: "image/svg+xml"))
        fixture.origin.setRoute(
            "/cut.svg",
            .bytes(Data("<svg xmlns=\"http://www.w3.org/2000/svg\"><rect".utf8), contentType: "image/svg+xml"))
        let entities = Data(
            "<!DOCTYPE svg [<!ENTITY x SYSTEM \"file:///etc/passwd\">]><svg xmlns=\"http://www.w3.org/2000/svg\">&x;</svg>"
                .utf8)
        fixture.origin.setRoute("/entity.svg", .bytes(entities, contentType: "image/svg+xml"))

        let raster = await fixture.get(fixture.path("f:svg", "/a.jpg"))
        #expect(raster.status == 422 && errorMessage(raster).contains("svg cannot be made from a jpeg source"))
        let tooLarge = await fixture.get(fixture.path("", "/huge.svg"))
        #expect(tooLarge.status == 422, "\(errorMessage(tooLarge))")
        let cut = await fixture.get(fixture.path("", "/cut.svg"))
        #expect(cut.status == 415, "\(errorMessage(cut))")
        let external = await fixture.get(fixture.path("", "/entity.svg"))
        #expect(external.status == 415, "\(errorMessage(external))")
        #expect(!String(decoding: external.body, as: UTF8.self).contains("root:"))
    }

    @Test(.timeLimit(.minutes(1)))
    func aRasterisingServerStillAnswersSVGWhenTheURLAsks() async throws {
        let fixture = try ProxyFixture { $0.rasterizesSVG = true }
        fixture.origin.setRoute("/logo.svg", .bytes(Self.scripted, contentType: "image/svg+xml"))
        let expected = try SVGSanitizer().sanitize(Self.scripted).data
        let drawn = await fixture.get(fixture.path("rs:fit:100:100", "/logo.svg"))
        #expect(drawn.status == 200 && drawn.header("Content-Type") == "image/png", "\(errorMessage(drawn))")
        let named = await fixture.get(fixture.path("f:svg", "/logo.svg"))
        #expect(named.status == 200 && named.body == expected)
        let skipped = await fixture.get(fixture.path("skp:svg", "/logo.svg"))
        #expect(skipped.status == 200 && skipped.body == expected)
    }
}

/// `imago serve`'s SVG rendering in a child process (`imago svg-render`), killed after its timeout.
@Suite("SVG rendering in a child process", .enabled(if: SVGDecoder.isAvailable, "librsvg2-2 is not installed"))
struct SVGChildRenderingTests {
    /// A 600-byte drawing whose filter takes librsvg about 10 s of CPU at 2000 × 2000 (RELIABILITY.md §28).
    static let slow = Data(
        """
        <svg xmlns="http://www.w3.org/2000/svg" width="2000" height="2000"><defs><filter id="m" x="-50%" y="-50%"
        width="200%" height="200%"><feMorphology radius="400"/></filter></defs>
        <rect width="2000" height="2000" fill="red" filter="url(#m)"/></svg>
        """.utf8)

    /// A decoder drawing in the plain `imago` build (under `make test-tsan`, the sanitizer build beside the tests
    /// starts too slowly for the timeouts here).
    static func decoder(timeout: Duration) throws -> SVGDecoder {
        let executable = try #require(
            ImagoTesting.builtExecutable(named: "imago", environmentVariable: "IMAGO_CLI", preferringPlainBuild: true),
            "build the imago executable first (swift build)")
        return SVGDecoder(rendering: .childProcess(executable: executable, arguments: ["svg-render"], timeout: timeout))
    }

    @Test(.timeLimit(.minutes(1)))
    func theChildDrawsWhatTheParentWouldAndIsKilledAfterItsTimeout() throws {
        let child = try Self.decoder(timeout: .seconds(20))
        var options = DecodingOptions(targetSize: PixelSize(width: 100, height: 100))
        options.enlargesVectors = true
        let logo = ImageProxySVGSourceTests.logo
        let here = try SVGDecoder().decode(logo, options: options)
        let there = try child.decode(logo, options: options)
        #expect(there.frames.first?.buffer == here.frames.first?.buffer && there.originalSize == here.originalSize)
        // Typed errors cross over typed.
        #expect(throws: CodecError.tooManyPixels(width: 400, height: 200, limit: 1_000)) {
            try child.decode(logo, options: DecodingOptions(pixelLimit: 1_000))
        }
        #expect(throws: CodecError.self) { try child.decode(Data("<svg".utf8), options: DecodingOptions()) }

        let start = ContinuousClock.now
        do {
            _ = try Self.decoder(timeout: .seconds(1)).decode(Self.slow, options: DecodingOptions())
            Issue.record("the slow drawing finished")
        } catch {
            #expect(error as? CodecError == .renderingTimedOut(format: .svg, limit: .seconds(1)), "\(error)")
            #expect("\(error)".contains("longer than 1 s"), "\(error)")
        }
        #expect(ContinuousClock.now - start < .seconds(5))
    }

    @Test(.timeLimit(.minutes(1)))
    func aDrawingThatTakesTooLongIsAnErrorResponseNotAStuckCore() async throws {
        let decoder = try Self.decoder(timeout: .seconds(1))
        let fixture = try ProxyFixture { $0.decoders.register(decoder) }
        fixture.origin.setRoute("/slow.svg", .bytes(Self.slow, contentType: "image/svg+xml"))
        fixture.origin.setRoute("/logo.svg", .bytes(ImageProxySVGSourceTests.logo, contentType: "image/svg+xml"))
        let start = ContinuousClock.now
        let slow = await fixture.get(fixture.path("f:png", "/slow.svg"))
        // Valid but too costly: 422, as an image over the pixel limit
        #expect(slow.status == 422, "\(slow.status) \(errorMessage(slow))")
        #expect(errorMessage(slow).contains("drawing the svg source took longer than 1 s"), "\(errorMessage(slow))")
        #expect(ContinuousClock.now - start < .seconds(5))
        #expect(await fixture.get(fixture.path("rs:fit:50:50/f:png", "/logo.svg")).status == 200)
    }

    @Test(.timeLimit(.minutes(1)))
    func imagoServeDrawsInItsChildAndStopsItAfterSVGTimeout() async throws {
        let executable = try #require(
            ImagoTesting.builtExecutable(named: "imago", environmentVariable: "IMAGO_CLI", preferringPlainBuild: true),
            "build the imago executable first (swift build)")
        let origin = try LoopbackServer()
        defer { origin.stop() }
        origin.setRoute("/slow.svg", .bytes(Self.slow, contentType: "image/svg+xml"))
        origin.setRoute("/logo.svg", .bytes(ImageProxySVGSourceTests.logo, contentType: "image/svg+xml"))
        let directory = ServeCommandTests.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let serve = try ServeProcess(
            executable, ["--listen", "127.0.0.1:0", "--unsigned", "--allow-private", "--svg-timeout", "2"],
            in: directory)
        let process = serve.process
        defer { serve.terminate() }
        let port = try #require(await serve.listeningPort())
        let client = TestHTTPClient()
        func get(_ options: String, _ path: String) async throws -> (status: Int, body: Data) {
            let url = "http://127.0.0.1:\(port)/_/\(options)/plain/" + origin.url(for: path).absoluteString
            let response = try await client.send(URL(string: url)!)
            return (response.status, response.body)
        }

        let start = ContinuousClock.now
        let slow = try await get("f:png", "/slow.svg")
        let elapsed = ContinuousClock.now - start
        let killed = ImageProxyHEIFChildTests.children(of: process.processIdentifier, running: "svg-render")
        let logo = try await get("rs:fit:50:50/f:png", "/logo.svg")
        let drawing = ImageProxyHEIFChildTests.children(of: process.processIdentifier, running: "svg-render")
        let again = try await get("rs:fit:60:60/f:png", "/logo.svg")
        let kept = ImageProxyHEIFChildTests.children(of: process.processIdentifier, running: "svg-render")

        #expect(slow.status == 422, "\(String(decoding: slow.body, as: UTF8.self))")
        #expect(String(decoding: slow.body, as: UTF8.self).contains("longer than 2 s"))
        #expect(elapsed >= .seconds(2) && elapsed < .seconds(6), "\(elapsed)")
        #expect(try logo.status == 200 && ServerTestImages.decode(logo.body).width == 50)
        #expect(try again.status == 200 && ServerTestImages.decode(again.body).width == 60)
        // The child that overran was killed (and reaped); the one that drew the logo was kept and drew it again
        #expect(killed.allSatisfy(ImageProxyHEIFChildTests.hasEnded), "\(killed)")
        #expect(drawing.count == 1 && kept == drawing, "\(drawing) then \(kept)")
        kill(process.processIdentifier, SIGTERM)
        #expect(await ImagoTesting.eventually(timeout: .seconds(15)) { !process.isRunning })
        #expect(
            await ImagoTesting.eventually(timeout: .seconds(10)) { kept.allSatisfy(ImageProxyHEIFChildTests.hasEnded) },
            "the child outlived the server")
    }

    @Test func serveDrawsSVGsInKeptChildrenOfItsOwnExecutable() {
        let decoder = ServeCommand.svgDecoder(timeout: .seconds(7))
        #expect(decoder.formats == [.svg])
        #expect(decoder.executable.path == "/proc/self/exe" && decoder.arguments == ["svg-render"])
        #expect(decoder.timeout == .seconds(7) && decoder.answersPerChild == 1_000)
        #expect(decoder.idleChildren == ProcessInfo.processInfo.activeProcessorCount)
    }
}
