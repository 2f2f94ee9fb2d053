import Dispatch
import Foundation
import Imago
import ImagoTesting
import Testing

// The README's "Use the library" snippets, compiled and run here. Each `// snippet: NAME` … `// end snippet`
// region below must read exactly as the README's ```swift block after `<!-- snippet: NAME -->` (the first test
// checks it), so neither can change without the other.

/// A view double for the binding snippet (declared at file scope, as in the README).
// snippet: binding-type
// @unchecked Sendable: it is only used on the pipeline's callback queue, as ImageDisplaying asks.
final class Thumbnail: ImageDisplaying, @unchecked Sendable {
    let imageBinder = ImageBinder()
    var shown: ImageContainer?
    func display(_ image: ImageContainer?, in slot: ImageBinder.Slot) { shown = image }
}
// end snippet

@Suite("README snippets", .timeLimit(.minutes(1)))
struct ReadmeSnippetTests {
    /// A loopback origin serving one Kodak photo as JPEG at `/photo.jpg`, and a body that never ends at `/slow.jpg`.
    private func origin() throws -> (LoopbackServer, URL, URL, Data) {
        let png = try corpusData("kodak/01.png")
        let pixels = try PNGDecoder().decode(png, options: DecodingOptions()).image
        let jpeg = try JPEGEncoder().encode(pixels, options: EncodingOptions())
        let server = try LoopbackServer()
        server.setRoute("/photo.jpg", .bytes(jpeg, contentType: "image/jpeg"))
        server.setRoute("/slow.jpg", .endless(pattern: Data([0xFF, 0xD8, 0xFF, 0xE0])))
        return (server, server.url(for: "/photo.jpg"), server.url(for: "/slow.jpg"), jpeg)
    }

    @Test func readmeSnippetsMatchThisFile() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let documented = Self.readmeSnippets(readme)
        let tested = Self.sourceSnippets(source)
        #expect(Set(documented.keys) == ["pipeline", "processors", "caches", "cancellation", "binding"])
        for (name, code) in documented {
            // The binding snippet is the type (declared at file scope here) followed by its use.
            let expected =
                name == "binding"
                ? [tested["binding-type"], tested["binding"]].compactMap { $0 }.joined(separator: "\n\n")
                : tested[name]
            #expect(code == expected, "README snippet '\(name)' differs from ReadmeSnippetTests")
        }
    }

    @Test func pipelineAndProcessorsAndCaches() async throws {
        let (server, url, _, _) = try origin()
        defer { server.stop() }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("readme-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        setenv("TMPDIR", scratch.path + "/", 1)
        defer { unsetenv("TMPDIR") }

        // snippet: pipeline
        let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("imago-readme")
        let pipeline = ImagePipeline(configuration: try .withDefaults(diskCacheDirectory: directory))
        let image = try await pipeline.image(for: url)
        print(image.format, image.image.width, image.image.height)  // jpeg 768 512
        // end snippet
        #expect(image.format == .jpeg && image.image.size == PixelSize(width: 768, height: 512))
        #expect(directory.path.hasPrefix(scratch.path))

        // snippet: processors
        let processors: [any ImageProcessing] = [.resize(width: 256, height: 256), .roundedCorners(radius: 16)]
        let request = ImageRequest(url: url, processors: processors)
        let thumbnail = try await pipeline.image(for: request)
        print(thumbnail.image.width, thumbnail.image.height)  // 256 171
        let again = pipeline.cachedImage(for: request)  // the same pixels, from memory
        // end snippet
        #expect(thumbnail.image.size == PixelSize(width: 256, height: 171))
        #expect(thumbnail.image[pixel: 0, 0].a == 0)  // the rounded corner is transparent
        #expect(again?.image[pixel: 128, 85] == thumbnail.image[pixel: 128, 85])

        await pipeline.waitForPendingCacheWrites()
        let loadsBefore = server.requestCount(for: "/photo.jpg")
        // snippet: caches
        let response = try await pipeline.response(for: ImageRequest(url: url))
        print(response.source)  // memory, disk or network: where this image came from
        pipeline.removeAll(for: url)  // this URL's images from memory, its bytes from disk
        pipeline.configuration.imageCache?.removeAll()  // every decoded image
        // end snippet
        #expect(response.source == .memory)
        #expect(pipeline.cachedImage(for: request) == nil)
        _ = try await pipeline.image(for: url)
        #expect(server.requestCount(for: "/photo.jpg") == loadsBefore + 1, "removed from disk too: loaded again")
    }

    @Test func cancellationAndBinding() async throws {
        let (server, url, slowURL, _) = try origin()
        defer { server.stop() }
        let pipeline = ImagePipeline(configuration: try .withDefaults())

        // snippet: cancellation
        let load = Task { try await pipeline.image(for: ImageRequest(url: slowURL)) }
        load.cancel()  // the awaiting call throws ImagePipeline.Error.cancelled

        let task = pipeline.loadImage(with: ImageRequest(url: slowURL)) { result in print(result) }
        task.cancel()
        // end snippet
        await #expect(throws: ImagePipeline.Error.cancelled) { try await load.value }
        #expect(task.isCancelled)

        // snippet: binding
        let cell = Thumbnail()
        pipeline.configuration.callbackQueue.async {
            // A recycled cell: the second call cancels the first load, whose image never shows.
            cell.setImage(with: slowURL, pipeline: pipeline)
            cell.setImage(with: url, pipeline: pipeline)
        }
        // end snippet
        #expect(await ImagoTesting.eventually { pipeline.configuration.callbackQueue.sync { cell.shown != nil } })
        let shown = pipeline.configuration.callbackQueue.sync { cell.shown }
        #expect(shown?.image.size == PixelSize(width: 768, height: 512))
    }

    /// The README's ```swift blocks that follow a `<!-- snippet: NAME -->` line, by name, without `import` lines.
    static func readmeSnippets(_ text: String) -> [String: String] {
        var result: [String: String] = [:]
        let lines = text.components(separatedBy: "\n")
        var index = 0
        while index < lines.count {
            let line = lines[index].trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("<!-- snippet: "), line.hasSuffix(" -->") {
                let name = String(line.dropFirst("<!-- snippet: ".count).dropLast(" -->".count))
                var body: [String] = []
                index += 2  // past the ```swift line
                while index < lines.count, lines[index] != "```" {
                    body.append(lines[index])
                    index += 1
                }
                let code = body.filter { !$0.hasPrefix("import ") }
                result[name] = code.joined(separator: "\n").trimmingCharacters(in: .newlines)
            }
            index += 1
        }
        return result
    }

    /// This file's `// snippet: NAME` … `// end snippet` regions, by name, with their common indentation removed.
    static func sourceSnippets(_ text: String) -> [String: String] {
        var result: [String: String] = [:]
        var name: String?
        var body: [String] = []
        for line in text.components(separatedBy: "\n") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("// snippet: ") {
                name = String(trimmed.dropFirst("// snippet: ".count))
                body = []
            } else if trimmed == "// end snippet", let current = name {
                let indent =
                    body.filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
                    .map { $0.prefix(while: { $0 == " " }).count }.min() ?? 0
                result[current] = body.map { String($0.dropFirst(min(indent, $0.count))) }.joined(separator: "\n")
                    .trimmingCharacters(in: .newlines)
                name = nil
            } else if name != nil {
                body.append(line)
            }
        }
        return result
    }
}
