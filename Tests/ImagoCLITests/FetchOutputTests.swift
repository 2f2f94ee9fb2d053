import Foundation
import Imago
import ImagoTesting
import Testing

@testable import ImagoCLI

@Suite struct FetchOutputTests {
    @Test func writesTheOriginalBytesUnderUniqueNames() async throws {
        // Given two URLs whose names collide and one without a usable name
        let f = try FetchFixture()
        defer { f.finish() }
        f.server.setRoute("/other/a.jpg", .bytes(f.png, contentType: "image/png"))
        f.server.setRoute("/", .bytes(f.jpeg, contentType: "image/jpeg"))
        let out = f.scratch.appendingPathComponent("out")
        // When they are fetched with --out
        let run = await runCLI([
            "fetch", f.a.absoluteString, f.server.url(for: "/other/a.jpg").absoluteString,
            f.server.url(for: "/").absoluteString, "--out", out.path, "--cache-dir", f.cacheDir,
        ])
        // Then each file holds exactly the served bytes, named from the URL and de-duplicated in list order
        #expect(run.status == 0)
        #expect(try Data(contentsOf: out.appendingPathComponent("a.jpg")) == f.jpeg)
        // The second "a" holds PNG bytes: its extension follows the content.
        #expect(try Data(contentsOf: out.appendingPathComponent("a-2.png")) == f.png)
        #expect(try Data(contentsOf: out.appendingPathComponent("image.jpg")) == f.jpeg)
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).count == 3)
    }

    @Test func writesResizedImagesReencodedInTheRequestedFormat() async throws {
        let f = try FetchFixture()
        defer { f.finish() }
        let out = f.scratch.appendingPathComponent("out")
        let run = await runCLI([
            "fetch", f.a.absoluteString, f.b.absoluteString, "--out", out.path, "--resize", "32x32", "--format",
            "webp", "--cache-dir", f.cacheDir,
        ])
        #expect(run.status == 0)
        let registry = ImageDecoderRegistry.makeDefault()
        let a = try Data(contentsOf: out.appendingPathComponent("a.webp"))
        #expect(ImageFormat(sniffing: a) == .webp)
        let decodedA = try registry.decode(a, options: DecodingOptions())
        #expect(decodedA.image.width == 32 && decodedA.image.height == 24)
        let decodedB = try registry.decode(
            Data(contentsOf: out.appendingPathComponent("b.webp")), options: DecodingOptions())
        #expect(decodedB.image.width == 32 && decodedB.image.height == 24)
    }

    @Test func qualityAndPaletteColoursSetTheWrittenFiles() async throws {
        let f = try FetchFixture()
        defer { f.finish() }
        func written(_ extra: [String], _ name: String) async throws -> Data {
            let out = f.scratch.appendingPathComponent("out-\(extra.joined())")
            let run = await runCLI(["fetch", f.a.absoluteString, "--out", out.path, "--cache-dir", f.cacheDir] + extra)
            try #require(run.status == 0, "\(run.stderr)")
            return try Data(contentsOf: out.appendingPathComponent(name))
        }
        // A lower quality, a smaller JPEG of the same size
        let low = try await written(["--format", "jpeg", "--quality", "10"], "a.jpg")
        let high = try await written(["--format", "jpeg", "--quality", "95"], "a.jpg")
        let decodedLow = try ImageDecoderRegistry.makeDefault().decode(low, options: DecodingOptions())
        #expect(low.count < high.count && decodedLow.image.width == 64, "\(low.count) vs \(high.count) bytes")
        // --quality alone re-encodes in the source's format
        #expect(try await written(["--quality", "10"], "a.jpg") == low)
        // A palette PNG: colour type 3 in IHDR (byte 25), at most 16 colours in PLTE
        let palette = try await written(["--format", "png", "--png-colors", "16"], "a.png")
        let truecolor = try await written(["--format", "png"], "a.png")
        #expect(palette[25] == 3 && truecolor[25] != 3)
        let decoded = try ImageDecoderRegistry.makeDefault().decode(palette, options: DecodingOptions())
        var colours = Set<UInt32>()
        decoded.image.convertedToRGBA().withUnsafeBytes { bytes in
            for i in stride(from: 0, to: bytes.count, by: 4) {
                colours.insert(UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2]))
            }
        }
        #expect(colours.count <= 16 && colours.count > 1)
    }

    @Test func resizeAloneKeepsTheSourceFormat() async throws {
        let f = try FetchFixture()
        defer { f.finish() }
        let out = f.scratch.appendingPathComponent("out")
        let run = await runCLI([
            "fetch", f.b.absoluteString, "--out", out.path, "--resize", "20x20", "--cache-dir", f.cacheDir,
        ])
        #expect(run.status == 0)
        let data = try Data(contentsOf: out.appendingPathComponent("b.png"))
        let decoded = try ImageDecoderRegistry.makeDefault().decode(data, options: DecodingOptions())
        #expect(decoded.format == .png && decoded.image.width == 20 && decoded.image.height == 15)
    }

    @Test func anOutputPlaceThatCannotBeWrittenIsNamedWithTheSystemsReason() async throws {
        let f = try FetchFixture()
        defer { f.finish() }
        // --out under a regular file: the directory cannot be made
        let file = f.scratch.appendingPathComponent("plain-file")
        try Data("x".utf8).write(to: file)
        let underFile = await runCLI([
            "fetch", f.a.absoluteString, "--out", file.appendingPathComponent("out").path, "--cache-dir", f.cacheDir,
        ])
        #expect(underFile.status != 0)
        #expect(underFile.stderr.contains("cannot create the output directory"))
        #expect(underFile.stderr.contains("Not a directory"), "\(underFile.stderr)")
        #expect(!underFile.stderr.contains("NSCocoaErrorDomain"))
        // The image's file name taken by a directory: that URL fails with the reason, nothing else is written
        let out = f.scratch.appendingPathComponent("out")
        try FileManager.default.createDirectory(
            at: out.appendingPathComponent("a.jpg"), withIntermediateDirectories: true)
        let taken = await runCLI(["fetch", f.a.absoluteString, "--out", out.path, "--cache-dir", f.cacheDir])
        #expect(taken.status != 0)
        let result = try #require(taken.jsonObjects.first)
        let error = try #require(result["error"] as? String)
        #expect(error.contains("could not write") && !error.contains("NSCocoaErrorDomain"), "\(error)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path) == ["a.jpg"])
    }

    @Test func namesAreSanitisedAndNeverLeaveTheDirectory() {
        #expect(FetchOutputWriter.baseName("http://h/a/photo.JPG?x=1").stem == "photo")
        #expect(FetchOutputWriter.baseName("http://h/a/photo.JPG?x=1").ext == "jpg")
        for hostile in ["http://h/..%2F..%2Fetc%2Fpasswd", "http://h/..", "../../x", "http://h/a%2F..%2F..%2Fb"] {
            let stem = FetchOutputWriter.baseName(hostile).stem
            #expect(!stem.isEmpty && !stem.contains("/") && !stem.hasPrefix("."), "\(hostile) → \(stem)")
        }
        #expect(FetchOutputWriter.baseName("http://h/.hidden").stem == "hidden")
        let unicode = FetchOutputWriter.baseName("http://h/caf%C3%A9%20au%20lait.png")
        #expect(unicode.ext == "png" && unicode.stem.allSatisfy { $0.isASCII && $0 != " " })
        #expect(FetchOutputWriter.baseName("http://h/").stem == "image")
        #expect(FetchOutputWriter.baseName("no url at all/..").stem == "image")
        #expect(FetchOutputWriter.uniqued(["a", "A", "a-2", "a"]) == ["a", "A-2", "a-2-2", "a-3"])
    }
}

@Suite struct FetchTerminalTests {
    @Test func showsTheLiveDisplayThenASummaryPerLayerWithFailures() async throws {
        // Given a terminal, a good image twice (the second joins or hits memory) and a missing one
        let f = try FetchFixture()
        defer { f.finish() }
        f.server.setRoute("/missing.jpg", .status(404))
        let missing = f.server.url(for: "/missing.jpg")
        let run = await runCLI(
            ["fetch", f.a.absoluteString, f.a.absoluteString, missing.absoluteString, "--cache-dir", f.cacheDir],
            isTerminal: true)
        // Then the progress display was drawn, and the summary counts layers and lists the failure
        #expect(run.status == 1)
        #expect(run.stdout.contains("\u{1B}[J"))
        #expect(run.stdout.contains("Fetched 2 of 3 images"))
        #expect(run.stdout.contains("network 1"))
        #expect(run.stdout.contains("memory 1") || run.stdout.contains("coalesced 1"))
        #expect(run.stdout.contains("1 failed:"))
        #expect(run.stdout.contains("HTTP 404 for \(missing.absoluteString)"))
    }

    @Test func noColorOnATerminalPrintsPlainLinesWithoutEscapeCodes() async throws {
        let f = try FetchFixture()
        defer { f.finish() }
        let run = await runCLI(
            ["fetch", f.a.absoluteString, "--cache-dir", f.cacheDir], isTerminal: true, environment: ["NO_COLOR": "1"])
        #expect(run.status == 0)
        #expect(!run.stdout.contains("\u{1B}"))
        #expect(run.stdout.contains("ok     \(f.a.absoluteString)  network"))
        #expect(run.stdout.contains("Fetched 1 of 1 images"))
    }
}
