import Foundation
import Imago
import ImagoTesting
import Testing

@testable import ImagoCLI

/// A loopback server with a JPEG and a PNG, a scratch directory with a cache dir, cleaned up by `finish()`.
struct FetchFixture {
    let server: LoopbackServer
    let scratch: URL
    let jpeg: Data
    let png: Data

    init() throws {
        server = try LoopbackServer()
        scratch = try makeScratchDirectory()
        jpeg = try FetchImages.jpeg(width: 64, height: 48)
        png = try FetchImages.png(width: 40, height: 30)
        server.setRoute("/photos/a.jpg", .bytes(jpeg, contentType: "image/jpeg"))
        server.setRoute("/icons/b.png", .bytes(png, contentType: "image/png"))
    }

    var cacheDir: String { scratch.appendingPathComponent("cache").path }
    var a: URL { server.url(for: "/photos/a.jpg") }
    var b: URL { server.url(for: "/icons/b.png") }

    func finish() {
        server.stop()
        try? FileManager.default.removeItem(at: scratch)
    }
}

@Suite(.timeLimit(.minutes(1))) struct FetchJSONOutputTests {
    @Test func printsOneJSONObjectPerURLWithEveryField() async throws {
        // Given two images on the server
        let f = try FetchFixture()
        defer { f.finish() }
        // When they are fetched (stdout is not a terminal: JSON)
        let run = await runCLI(["fetch", f.a.absoluteString, f.b.absoluteString, "--cache-dir", f.cacheDir])
        // Then each has its line, with the fields in order and the right values
        #expect(run.status == 0)
        #expect(run.stderr.isEmpty)
        #expect(run.jsonObjects.count == 2)
        let a = try #require(run.object(for: f.a))
        #expect(a["status"] as? String == "ok")
        #expect(a["source"] as? String == "network")
        #expect(a["bytes"] as? Int == f.jpeg.count)
        #expect(a["width"] as? Int == 64 && a["height"] as? Int == 48)
        #expect((a["ms"] as? Int).map { $0 >= 0 } == true)
        #expect(a["error"] is NSNull)
        let b = try #require(run.object(for: f.b))
        #expect(b["bytes"] as? Int == f.png.count && b["width"] as? Int == 40 && b["height"] as? Int == 30)
        let firstLine = try #require(run.stdout.split(separator: "\n").first)
        let keys = [
            "\"url\"", "\"status\"", "\"source\"", "\"bytes\"", "\"width\"", "\"height\"", "\"ms\"", "\"error\"",
        ]
        let positions = keys.compactMap { firstLine.range(of: $0)?.lowerBound }
        #expect(positions.count == keys.count && positions == positions.sorted())
    }

    @Test func reportsTheDeliveredSizeAfterResize() async throws {
        let f = try FetchFixture()
        defer { f.finish() }
        let run = await runCLI(["fetch", f.a.absoluteString, "--resize", "32x32", "--cache-dir", f.cacheDir, "--json"])
        let a = try #require(run.object(for: f.a))
        #expect(run.status == 0)
        #expect(a["width"] as? Int == 32 && a["height"] as? Int == 24)
        #expect(a["bytes"] as? Int == f.jpeg.count)
    }
}

@Suite(.timeLimit(.minutes(1))) struct FetchMixedOutcomesTests {
    @Test func aMixOfGoodMissingCorruptSlowAndInvalidURLsExitsOneWithPerURLStatuses() async throws {
        // Given a good image, a 404, corrupt bytes, a slow (dripping) image and a string that is no URL
        let f = try FetchFixture()
        defer { f.finish() }
        f.server.setRoute("/missing.jpg", .status(404, body: Data("not here".utf8)))
        f.server.setRoute("/corrupt.jpg", .bytes(FetchImages.corruptJPEG, contentType: "image/jpeg"))
        f.server.setRoute(
            "/slow.jpg", .bytes(f.jpeg, contentType: "image/jpeg").dripping(bytes: 512, every: .milliseconds(10)))
        let missing = f.server.url(for: "/missing.jpg")
        let corrupt = f.server.url(for: "/corrupt.jpg")
        let slow = f.server.url(for: "/slow.jpg")
        // When they are fetched together
        let run = await runCLI([
            "fetch", f.a.absoluteString, missing.absoluteString, corrupt.absoluteString, slow.absoluteString,
            "not a url", "--cache-dir", f.cacheDir,
        ])
        // Then the exit status is 1 and each URL says what happened to it
        #expect(run.status == 1)
        #expect(run.jsonObjects.count == 5)
        #expect(run.object(for: f.a)?["status"] as? String == "ok")
        let slowLine = try #require(run.object(for: slow))
        #expect(slowLine["status"] as? String == "ok" && slowLine["bytes"] as? Int == f.jpeg.count)
        let missingLine = try #require(run.object(for: missing))
        #expect(missingLine["status"] as? String == "error")
        #expect(missingLine["source"] is NSNull && missingLine["width"] is NSNull)
        let missingError = try #require(missingLine["error"] as? String)
        #expect(missingError.contains("HTTP 404") && missingError.contains(missing.absoluteString))
        let corruptError = try #require(run.object(for: corrupt)?["error"] as? String)
        #expect(corruptError.contains(corrupt.absoluteString) && corruptError.contains("decode"))
        let invalid = try #require(run.jsonObjects.first { $0["url"] as? String == "not a url" })
        #expect(invalid["status"] as? String == "error")
        #expect((invalid["error"] as? String)?.contains("not a valid URL") == true)
    }
}

extension FetchMixedOutcomesTests {
    @Test func aURLThatFailedEarlierInTheRunFailsFastReadingAsTheFirstFailureDid() async throws {
        // Given a 404 and bytes that do not decode, each asked for twice, one URL at a time
        let f = try FetchFixture()
        defer { f.finish() }
        f.server.setRoute("/missing.jpg", .status(404, body: Data("not here".utf8)))
        f.server.setRoute("/corrupt.jpg", .bytes(FetchImages.corruptJPEG, contentType: "image/jpeg"))
        let missing = f.server.url(for: "/missing.jpg").absoluteString
        let corrupt = f.server.url(for: "/corrupt.jpg").absoluteString
        let run = await runCLI(["fetch", "-j", "1", missing, missing, corrupt, corrupt, "--cache-dir", f.cacheDir])
        // Then each was requested once: the second attempt is the remembered failure, which says what the first
        // said, that it is remembered and until when, and names the URL once
        #expect(run.status == 1)
        #expect(f.server.requestCount(for: "/missing.jpg") == 1 && f.server.requestCount(for: "/corrupt.jpg") == 1)
        for url in [missing, corrupt] {
            let errors = run.jsonObjects.filter { $0["url"] as? String == url }.compactMap { $0["error"] as? String }
            try #require(errors.count == 2, "\(run.stdout)")
            #expect(errors[1].hasPrefix(errors[0] + "; remembered from an earlier attempt, not tried again before "))
            #expect(errors.allSatisfy { $0.components(separatedBy: url).count == 2 }, "\(errors)")
        }
    }
}

@Suite(.timeLimit(.minutes(1))) struct FetchListTests {
    @Test func readsURLsFromAListSkippingBlankLinesAndComments() async throws {
        let f = try FetchFixture()
        defer { f.finish() }
        let list = f.scratch.appendingPathComponent("urls.txt")
        try "# images to fetch\n\n  \(f.a.absoluteString)  \n# \(f.server.url(for: "/nope"))\n\n\(f.b.absoluteString)\n"
            .write(to: list, atomically: true, encoding: .utf8)
        let run = await runCLI(["fetch", "--list", list.path, "--cache-dir", f.cacheDir])
        #expect(run.status == 0)
        #expect(Set(run.jsonObjects.compactMap { $0["url"] as? String }) == [f.a.absoluteString, f.b.absoluteString])
        #expect(f.server.requestCount(for: "/nope") == 0)
    }

    @Test func readsTheListFromStandardInputForDash() throws {
        let args = try parseArguments(["--list", "-", "--cache-dir", "/tmp/x"], options: FetchCommand.command.options)
        let options = try FetchCommand.parse(args, environment: [:]) { Data("http://h/a.jpg\n#c\n\nhttp://h/b\n".utf8) }
        #expect(options.urls == ["http://h/a.jpg", "http://h/b"])
    }

    @Test func aMissingListFileIsBadUsage() async throws {
        let run = await runCLI(["fetch", "--list", "/nonexistent/urls.txt"])
        #expect(run.status == 2)
        #expect(run.stderr.contains("/nonexistent/urls.txt"))
    }
}

@Suite(.timeLimit(.minutes(1))) struct FetchDiskCacheTests {
    @Test func fetchingAgainWithTheSameCacheDirComesFromDisk() async throws {
        // Given a first fetch that loaded both images from the network
        let f = try FetchFixture()
        defer { f.finish() }
        let args = ["fetch", f.a.absoluteString, f.b.absoluteString, "--cache-dir", f.cacheDir]
        let first = await runCLI(args)
        #expect(first.jsonObjects.allSatisfy { $0["source"] as? String == "network" })
        let requests = f.server.totalRequestCount
        // When the same fetch runs again (a new pipeline, so an empty memory cache)
        let second = await runCLI(args)
        // Then both come from the disk cache and the server saw no new request
        #expect(second.status == 0)
        #expect(second.jsonObjects.count == 2)
        #expect(second.jsonObjects.allSatisfy { $0["source"] as? String == "disk" })
        #expect(second.object(for: f.a)?["bytes"] as? Int == f.jpeg.count)
        #expect(f.server.totalRequestCount == requests)
    }
}

@Suite(.timeLimit(.minutes(1))) struct FetchUsageTests {
    @Test(arguments: [
        ["fetch"],
        ["fetch", "http://h/a.jpg", "--resize", "10"],
        ["fetch", "http://h/a.jpg", "--resize", "0x10"],
        ["fetch", "http://h/a.jpg", "--format", "psd", "--out", "/tmp/x"],
        ["fetch", "http://h/a.jpg", "--format", "png"],
        ["fetch", "http://h/a.jpg", "--quality", "80"],
        ["fetch", "http://h/a.jpg", "--out", "/tmp/x", "--quality", "0"],
        ["fetch", "http://h/a.jpg", "--out", "/tmp/x", "--png-colors", "16"],
        ["fetch", "http://h/a.jpg", "--out", "/tmp/x", "--format", "png", "--png-colors", "1"],
        ["fetch", "http://h/a.jpg", "--concurrency", "0"],
        ["fetch", "http://h/a.jpg", "--concurrency", "many"],
        ["fetch", "http://h/a.jpg", "--bogus"],
        ["cache"],
        ["cache", "shrink"],
        ["cache", "trim"],
        ["cache", "trim", "--max-size", "lots"],
        ["cache", "stats", "--max-size", "1M"],
    ])
    func badUsageExitsTwoWithAOneLineError(_ arguments: [String]) async {
        let run = await runCLI(arguments)
        #expect(run.status == 2)
        #expect(run.stdout.isEmpty)
        let first = run.stderr.split(separator: "\n").first.map(String.init) ?? ""
        #expect(first.hasPrefix("imago \(arguments[0]): "))
    }
}
