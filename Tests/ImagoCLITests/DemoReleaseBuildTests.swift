import Foundation
import Imago
import Testing

@testable import ImagoCLI

extension DemoCommandTests {
    @Test("Issue 23 item 13: make demo builds and runs imago in release mode, and says so while it builds")
    func makeDemoUsesAReleaseBuild() throws {
        // Given the project's Makefile
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let makefile = try String(contentsOf: root.appendingPathComponent("Makefile"), encoding: .utf8)
        // When the demo target's recipe is read
        let lines = makefile.split(separator: "\n", omittingEmptySubsequences: false)
        let start = try #require(lines.firstIndex { $0.hasPrefix("demo:") })
        let recipe = lines[(start + 1)...].prefix { $0.hasPrefix("\t") }.joined(separator: "\n")
        // Then it builds imago with -c release, runs the release binary, and announces the slow first build
        #expect(recipe.contains("build -c release") && recipe.contains("--product imago"))
        #expect(recipe.contains("build -c release --show-bin-path)/imago demo"))
        #expect(recipe.contains("echo") && recipe.contains("release mode"))
        #expect(!recipe.contains("$(SWIFT) build -j $(JOBS) --product imago"))
    }
}

extension FetchJSONOutputTests {
    @Test("Issue 23 item 2: fetch --resize stores the resized image, so a rerun decodes no original")
    func fetchResizeStoresTheProcessedImage() async throws {
        // Given a large JPEG on the server
        let f = try FetchFixture()
        defer { f.finish() }
        let big = try FetchImages.jpeg(width: 1200, height: 800)
        f.server.setRoute("/photos/big.jpg", .bytes(big, contentType: "image/jpeg"))
        let url = f.server.url(for: "/photos/big.jpg")
        let arguments = ["fetch", url.absoluteString, "--resize", "120x120", "--cache-dir", f.cacheDir]

        // When it is fetched with --resize, twice (two processes' worth: a new pipeline each run)
        let first = await runCLI(arguments)
        let second = await runCLI(arguments)

        // Then the rerun came from disk, and the disk holds the small resized image, not the original
        #expect(first.status == 0 && second.status == 0)
        let rerun = try #require(second.object(for: url))
        #expect(rerun["source"] as? String == "disk")
        #expect(rerun["width"] as? Int == 120 && rerun["height"] as? Int == 80)
        let stored = try #require(rerun["bytes"] as? Int)
        #expect(stored < big.count / 4)
        let cache = try DiskCache(directory: URL(fileURLWithPath: f.cacheDir))
        defer { cache.close() }
        #expect(!cache.containsData(for: url.absoluteString))
        let processed = ImageRequest(url: url, processors: [.resize(width: 120, height: 120)]).processedDataCacheKey
        #expect(cache.containsData(for: processed))
    }
}
