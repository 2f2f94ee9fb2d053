import Foundation
import Imago
import ImagoTesting
import Testing

@testable import ImagoCLI

/// `imago decode --frames`, the `durations` and `bitDepth` JSON fields, `fetch --format avif|jxl`, the
/// `Accept` header built from the registry, and `imago show` of an APNG.
@Suite struct DecodeFramesTests {
    @Test func framesAreWrittenAsRawRGBAWithDurationsAndBitDepthInJSON() async throws {
        // Given an APNG of four 96x64 frames
        let scratch = try makeScratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let file = cliCorpus("apng/gen-dispose-previous-blend-over.png")
        let dir = scratch.appendingPathComponent("frames")

        // When it is decoded with --frames
        let run = await runCLI(["decode", file.path, "--frames", dir.path, "--json"])

        // Then each composited frame is a raw RGBA8 file equal to the decoder's frame, and JSON has the timing
        #expect(run.status == 0, "\(run.stderr)")
        let object = try #require(run.jsonObjects.first)
        #expect(object["frames"] as? Int == 4)
        #expect(object["durations"] as? [Int] == [100, 250, 300, 70])
        #expect(object["bitDepth"] as? Int == 8)
        #expect(object["loopCount"] as? Int == 3)
        let decoded = try ImageDecoderRegistry.makeDefault().decode(Data(contentsOf: file))
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
        #expect(names == (0..<4).map { String(format: "gen-dispose-previous-blend-over.png.frame%03d.rgba", $0) })
        for (index, name) in names.enumerated() {
            let bytes = try Data(contentsOf: dir.appendingPathComponent(name))
            #expect(bytes.count == 96 * 64 * 4)
            #expect([UInt8](bytes) == decoded.frames[index].buffer.bytes, "\(name)")
        }
    }

    @Test func bitDepthOfASixteenBitSource() async throws {
        let run = await runCLI(["decode", cliCorpus("apng/pillow-mode_16bit.png").path, "--json"])
        #expect(run.jsonObjects.first?["bitDepth"] as? Int == 16)
    }

    @Test func fetchFormatAcceptsAVIFJXLAndGIFAndFailsCleanlyWithoutAnEncoder() async throws {
        for (word, format) in [("avif", ImageFormat.avif), ("jxl", .jpegXL), ("gif", .gif)] {
            let f = try FetchFixture()
            defer { f.finish() }
            let out = f.scratch.appendingPathComponent("out")
            let run = await runCLI([
                "fetch", f.b.absoluteString, "--out", out.path, "--format", word, "--cache-dir", f.cacheDir,
            ])
            if ImageEncoderRegistry.makeDefault().encoder(for: format) == nil {
                #expect(run.status == 1)
                #expect(run.stderr.contains("no encoder for '\(format)'"), "\(run.stderr)")
                #expect(f.server.requestCount(for: "/icons/b.png") == 0)
            } else {  // once the encoder is registered, the file is written in that format
                #expect(run.status == 0, "\(run.stderr)")
                let written = try FileManager.default.contentsOfDirectory(at: out, includingPropertiesForKeys: nil)
                #expect(try written.map { ImageFormat(sniffing: try Data(contentsOf: $0)) } == [format])
            }
        }
        let bad = await runCLI(["fetch", "http://127.0.0.1:9/a.png", "--out", "/tmp/x", "--format", "tga"])
        #expect(bad.status == 2 && bad.stderr.contains("jpeg, png, gif, webp, avif or jxl"))
    }

    @Test func fetchSendsTheAcceptHeaderOfTheRegisteredDecoders() async throws {
        let f = try FetchFixture()
        defer { f.finish() }
        let seen = Locked<[String]>([])
        let png = f.png
        f.server.setRoute(
            "/negotiated",
            .handler { request in
                seen.withLock { $0.append(request.headers["Accept"] ?? "") }
                return LoopbackServer.Response(headers: ["Content-Type": "image/png"], body: png)
            })
        let run = await runCLI(["fetch", f.server.url(for: "/negotiated").absoluteString, "--cache-dir", f.cacheDir])
        #expect(run.status == 0, "\(run.stderr)")
        let accept = try #require(seen.withLock { $0.first })
        #expect(accept == ImageDecoderRegistry.makeDefault().acceptHeader)
        let types = accept.split(separator: ",").map(String.init)
        #expect(types.contains("image/webp") && types.contains("image/apng") && types.contains("image/x-icon"))
        #expect(types.last == "image/*;q=0.8")
        // AVIF, when its decoder is registered, comes first; WebP before every other format
        let first = types.first { $0 != "image/avif" }
        #expect(first == "image/webp")
    }

    @Test(.timeLimit(.minutes(1))) func showPlaysAnAPNGOnATerminal() async throws {
        let cache = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: cache) }
        let (console, output) = Console.capturing(
            isTerminal: true, environment: ["COLORTERM": "truecolor", "XDG_CACHE_HOME": cache.path], width: 24)
        let status = await CLI.run(["show", cliCorpus("apng/gen-dispose-none-blend-over.png").path], console: console)
        #expect(status == 0, "\(output.stderr)")
        // 96x64 at 24 columns: 24x16 pixels, 8 rows; each later frame redraws by moving the cursor up 8 lines
        // (4 frames, 3 plays: 11 redraws)
        #expect(output.stdout.components(separatedBy: "\u{1B}[8F").count - 1 == 11)
    }
}
