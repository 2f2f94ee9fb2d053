import Foundation
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
