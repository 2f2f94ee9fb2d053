import Foundation
import ImagoTesting
import Testing

@testable import ImagoCLI

#if canImport(Glibc)
    import Glibc
#endif

/// Files named on the command line: `-` for standard input, and a sentence for each way a path fails.
@Suite(.timeLimit(.minutes(1))) struct InputFileTests {
    /// A pipe whose read end holds `data` and then ends (written from another thread: more than a pipe's buffer).
    func pipe(holding data: Data) throws -> Int32 {
        signal(SIGPIPE, SIG_IGN)  // a reader that stops early must not end the test process
        var ends: [Int32] = [0, 0]
        try #require(Glibc.pipe(&ends) == 0)
        let writer = ends[1]
        Thread.detachNewThread {
            data.withUnsafeBytes { bytes in
                var offset = 0
                while offset < bytes.count {
                    let written = write(writer, bytes.baseAddress! + offset, bytes.count - offset)
                    if written <= 0 { break }
                    offset += written
                }
            }
            close(writer)
        }
        return ends[0]
    }

    @Test func decodeReadsStandardInputForADash() async throws {
        let png = try Data(contentsOf: cliCorpus("kodak/01.png"))
        let input = try pipe(holding: png)
        defer { close(input) }
        let out = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: out) }
        let (console, output) = Console.capturing(standardInput: input)
        let status = await CLI.run(
            ["decode", "-", "--json", "--frames", out.path], console: console)
        #expect(status == 0, "\(output.stdout)")
        #expect(output.stdout.hasPrefix("{\"file\":\"-\",\"format\":\"png\",\"width\":768,\"height\":512"))
        let frame = out.appendingPathComponent("stdin.frame000.rgba")
        #expect((try? Data(contentsOf: frame))?.count == 768 * 512 * 4)
    }

    @Test func showReadsStandardInputForADash() async throws {
        let input = try pipe(holding: try Data(contentsOf: cliCorpus("kodak/01.png")))
        defer { close(input) }
        let cache = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: cache) }
        let (console, output) = Console.capturing(environment: ["XDG_CACHE_HOME": cache.path], standardInput: input)
        #expect(await CLI.run(["show", "-", "--width", "40"], console: console) == 0, "\(output.stderr)")
        #expect(output.stdout.split(separator: "\n").count == 14)
    }

    @Test func fetchReadsItsURLListFromTheConsolesStandardInput() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        server.setRoute("/a.png", .bytes(try Data(contentsOf: cliCorpus("kodak/01.png")), contentType: "image/png"))
        let input = try pipe(holding: Data("# one image\n\(server.url(for: "/a.png").absoluteString)\n".utf8))
        defer { close(input) }
        let cache = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: cache) }
        let (console, output) = Console.capturing(standardInput: input)
        let status = await CLI.run(["fetch", "--list", "-", "--cache-dir", cache.path, "--json"], console: console)
        #expect(status == 0, "\(output.stdout)\(output.stderr)")
        #expect(server.requestCount(for: "/a.png") == 1)
    }

    @Test func eachWayAPathFailsHasItsOwnSentence() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (console, output) = Console.capturing()
        let status = await CLI.run(
            ["decode", directory.path, directory.appendingPathComponent("missing.png").path, "--json"],
            console: console)
        #expect(status == 1)
        let lines = output.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 2)
        #expect(lines.first?.contains("\"error\":\"cannot read file: it is a directory") == true, "\(lines)")
        #expect(lines.last?.contains("\"error\":\"cannot read file: no such file\"") == true, "\(lines)")

        let (showConsole, shown) = Console.capturing()
        #expect(await CLI.run(["show", directory.path], console: showConsole) == 1)
        #expect(shown.stderr.contains("cannot read '\(directory.path)': it is a directory"), "\(shown.stderr)")
    }

    @Test func nothingIsReadPastTheLimit() throws {
        // A regular file over the limit is refused before it is read; a stream that never ends stops at the limit
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("big.bin")
        try Data(count: 3 << 20).write(to: file)
        #expect(throws: InputFile.Failure.tooLarge(limit: 2 << 20)) { try InputFile.read(file.path, limit: 2 << 20) }
        #expect(try InputFile.read(file.path, limit: 3 << 20).count == 3 << 20)
        #expect(throws: InputFile.Failure.tooLarge(limit: 1 << 20)) { try InputFile.read("/dev/zero", limit: 1 << 20) }
        let input = try pipe(holding: Data(count: 100_000))
        defer { close(input) }
        #expect(throws: InputFile.Failure.tooLarge(limit: 65_536)) {
            try InputFile.read("-", limit: 65_536, standardInput: input)
        }
        #expect("\(InputFile.Failure.tooLarge(limit: 1 << 30))" == "it is larger than 1024 MiB")
    }

    @Test func aRegularFileIsReadThroughTheDescriptorThatWasChecked() throws {
        // Its bytes as written, an empty file as no bytes; and what was read stays as read when the path is
        // replaced afterwards (the mapping is of the file that was opened and checked)
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("a.bin")
        let bytes = Data((0..<100_003).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try bytes.write(to: file)
        let read = try InputFile.read(file.path)
        try Data(repeating: 7, count: 10).write(to: file, options: .atomic)
        #expect(read == bytes)
        #expect(try InputFile.read(file.path) == Data(repeating: 7, count: 10))
        try Data().write(to: file)
        #expect(try InputFile.read(file.path).isEmpty)
    }
}
