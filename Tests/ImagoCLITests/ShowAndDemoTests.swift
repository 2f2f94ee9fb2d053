import Foundation
import Imago
import ImagoTesting
import Testing

@testable import ImagoCLI

/// The shared corpus beside the package (`../shared/corpus`), or a recorded failure when it is missing.
func cliCorpus(_ path: String) -> URL {
    let (url, missing) = SharedCorpus.item(path)
    if let missing { Issue.record(Comment(rawValue: missing)) }
    return url
}

func temporaryDirectory() -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("imago-cli-test-\(UUID().uuidString)")
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

@Suite(.timeLimit(.minutes(3))) struct ShowCommandTests {
    @Test func showsAFileAsPlainTextWhenNotATerminal() async throws {
        // Given a Kodak photo and a console that is not a terminal
        let cache = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: cache) }
        let (console, output) = Console.capturing(environment: ["XDG_CACHE_HOME": cache.path])
        // When it is shown 40 columns wide
        let status = await CLI.run(["show", cliCorpus("kodak/01.png").path, "--width", "40"], console: console)
        // Then 40-character lines come out without escape codes, 768x512 → 40x27 pixels → 14 rows
        #expect(status == 0, "\(output.stderr)")
        let lines = output.stdout.split(separator: "\n")
        #expect(lines.count == 14)
        #expect(lines.allSatisfy { $0.count == 40 })
        #expect(!output.stdout.contains("\u{1B}"))
    }

    @Test func showsAURLInTrueColourOnATerminalThroughThePipeline() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let png = try Data(contentsOf: cliCorpus("formats/TestImage.png"))
        server.setRoute("/t.png", .bytes(png, contentType: "image/png"))
        let cache = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: cache) }
        let (console, output) = Console.capturing(
            isTerminal: true, environment: ["COLORTERM": "truecolor", "XDG_CACHE_HOME": cache.path], width: 30)
        let status = await CLI.run(["show", server.url(for: "/t.png").absoluteString], console: console)
        #expect(status == 0, "\(output.stderr)")
        #expect(output.stdout.contains("\u{1B}[38;2;"))
        #expect(output.stdout.contains("▀"))
        #expect(server.requestCount(for: "/t.png") == 1)
        // And the image was stored in the disk cache under XDG_CACHE_HOME/imago
        #expect(FileManager.default.fileExists(atPath: cache.appendingPathComponent("imago/entries").path))
    }

    @Test func missingFileAnd404AreErrorsNamingWhatFailed() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        server.setRoute("/gone.png", .status(404, body: Data("no".utf8)))
        let cache = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: cache) }
        let (console, output) = Console.capturing(environment: ["XDG_CACHE_HOME": cache.path])
        #expect(await CLI.run(["show", "/nonexistent/img.png"], console: console) == 1)
        #expect(output.stderr.contains("cannot read '/nonexistent/img.png'"))
        let url = server.url(for: "/gone.png").absoluteString
        #expect(await CLI.run(["show", url], console: console) == 1)
        #expect(output.stderr.hasSuffix("imago show: the server answered HTTP 404 for \(url) (check the URL)\n"))
        // And a file that is no image is named once, as the user wrote it
        let pdf = cliCorpus("formats/TestImage.pdf").path
        #expect(await CLI.run(["show", pdf], console: console) == 1)
        #expect(
            output.stderr.hasSuffix(
                "imago show: \(pdf) is not an image Imago can decode: no decoder is registered for format 'unknown'\n"),
            "\(output.stderr)")
        #expect(await CLI.run(["show"], console: console) == 2)
    }
}

@Suite(.timeLimit(.minutes(3))) struct DemoCommandTests {
    @Test func threePassesComeFromNetworkThenDiskThenMemory() async throws {
        // Given the demo limited to 4 gallery images, not on a terminal
        let (console, output) = Console.capturing(width: 80)
        // When it runs
        let status = await CLI.run(["demo", "--limit", "4", "--corpus", cliCorpus("").path], console: console)
        // Then every pass loaded every image from the expected layer
        #expect(status == 0, "\(output.stderr)")
        let rows = output.stdout.split(separator: "\n").map {
            $0.split(separator: " ", omittingEmptySubsequences: true)
        }
        let cold = try #require(rows.first { $0.starts(with: ["1", "cold", "(network)"]) })
        let disk = try #require(rows.first { $0.starts(with: ["2", "disk", "(memory", "cleared)"]) })
        let memory = try #require(rows.first { $0.starts(with: ["3", "memory"]) })
        // columns after the name: time, "s", images, memory, disk, network, coalesced, failed
        #expect(Array(cold.suffix(6)) == ["8", "0", "0", "8", "4", "0"])  // 4 images + 4 duplicates, 4 coalesced
        #expect(Array(disk.suffix(6)) == ["4", "0", "4", "0", "0", "0"])
        #expect(Array(memory.suffix(6)) == ["4", "4", "0", "0", "0", "0"])
        #expect(output.stdout.contains("Contact sheet (4 thumbnails"))
        #expect(!output.stdout.contains("\u{1B}"))
    }

    @Test func fallsBackToGeneratedImagesWithoutACorpus() async throws {
        let (console, output) = Console.capturing(width: 80)
        let status = await CLI.run(["demo", "--limit", "3", "--corpus", "/nonexistent"], console: console)
        #expect(status == 0, "\(output.stderr)")
        #expect(output.stdout.contains("Gallery: 3 images"))
        #expect(output.stdout.contains("generated"))
    }
}

@Suite(.timeLimit(.minutes(3))) struct ShowLimitOptionsTests {
    /// Runs `imago show URL` with `limits` against a server whose only route is `route`; returns the run and
    /// the entry files the cache directory holds afterwards.
    func show(
        _ route: LoopbackServer.Route, limits: [String]
    ) async throws -> (run: CLIRun, url: String, files: [String], requests: Int) {
        let server = try LoopbackServer()
        defer { server.stop() }
        server.setRoute("/image.png", route)
        let cache = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: cache) }
        let url = server.url(for: "/image.png").absoluteString
        let run = await runCLI(["show", url, "--cache-dir", cache.path, "--width", "20"] + limits)
        let entries = cache.appendingPathComponent("entries").path
        let files = (FileManager.default.subpaths(atPath: entries) ?? []).filter {
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: entries + "/" + $0, isDirectory: &isDirectory)
                && !isDirectory.boolValue
        }
        return (run, url, files, server.requestCount(for: "/image.png"))
    }

    @Test func stalledServerFailsAfterTheTimeoutAndCachesNothing() async throws {
        // Given a server that sends 500 bytes of a PNG and then nothing
        let png = try Data(contentsOf: cliCorpus("formats/TestImage.png"))
        let route = LoopbackServer.Route.bytes(png, contentType: "image/png").stalling(afterBytes: 500)
        // When the image is shown with a 1 s timeout and no retries
        let start = ContinuousClock.now
        let (run, url, files, requests) = try await show(route, limits: ["--timeout", "1", "--retries", "0"])
        // Then the run fails naming the URL and the timeout after one attempt (the defaults would make three,
        // each waiting 15 s for data: a functional bound with a wide margin, not a speed test)
        #expect(ContinuousClock.now - start < .seconds(10), "--timeout 1 was not applied")
        #expect(requests == 1)
        #expect(run.status == 1)
        #expect(run.stderr.contains(url) && run.stderr.contains("timed out"), "\(run.stderr)")
        #expect(files.isEmpty, "cached: \(files)")
    }

    @Test func bodyOverMaxBytesIsRefused() async throws {
        // Given a PNG of more than 8 KiB (11,662 bytes)
        let png = try Data(contentsOf: cliCorpus("formats/TestImage.png"))
        #expect(png.count > 8 << 10)
        // When it is shown with --max-bytes 8K, then the body is refused and nothing is cached
        let (run, _, files, _) = try await show(.bytes(png, contentType: "image/png"), limits: ["--max-bytes", "8K"])
        #expect(run.status == 1)
        #expect(run.stderr.contains("is larger than the limit of 8192 bytes"), "\(run.stderr)")
        #expect(files.isEmpty, "cached: \(files)")
        // And without the limit the same image is shown and cached
        let (shown, _, stored, _) = try await show(.bytes(png, contentType: "image/png"), limits: [])
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(stored.count == 1)
    }

    @Test(arguments: [["--timeout", "0"], ["--max-bytes", "lots"], ["--retries", "11"]])
    func badLimitsAreBadUsage(_ option: [String]) async {
        let run = await runCLI(["show", "http://127.0.0.1:9/a.png"] + option)
        #expect(run.status == 2)
        #expect(run.stderr.hasPrefix("imago show: ") && run.stderr.contains(option[0]))
    }
}
