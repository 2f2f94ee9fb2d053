import Foundation
import Imago
import ImagoTesting
import Testing

@testable import ImagoCLI

/// The shared corpus beside the package (`../shared/corpus`), or a recorded failure when it is missing.
func cliCorpus(_ path: String, filePath: String = #filePath) -> URL {
    let root = URL(fileURLWithPath: filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    let url = root.appendingPathComponent("shared/corpus/\(path)")
    if !FileManager.default.fileExists(atPath: url.path) {
        Issue.record("the image corpus is missing at \(url.path); it must sit at ../shared/corpus beside the package")
    }
    return url
}

func temporaryDirectory() -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("imago-cli-test-\(UUID().uuidString)")
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

@Suite struct ShowCommandTests {
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
        #expect(output.stderr.contains(url))
        #expect(output.stderr.contains("404"))
        #expect(await CLI.run(["show"], console: console) == 2)
    }
}

@Suite struct DemoCommandTests {
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
