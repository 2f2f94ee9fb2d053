import Foundation
import Imago
import ImagoTesting
import Testing

@testable import ImagoCLI

/// Hostile servers through `imago fetch`: in one batch with good images, every fault of the loopback server ends
/// in an error line naming its URL, the run exits 1 within a bounded time, the good images are fetched, and the
/// disk cache holds nothing of the hostile URLs (checked through the DiskCache API, `imago cache stats` and the raw
/// bytes of every cache file).
@Suite(.serialized, .timeLimit(.minutes(1))) struct FetchHostileServerTests {
    /// One fault at one path, and the phrases one of which its error must contain.
    struct Fault: Sendable {
        let name: String
        let path: String
        let route: LoopbackServer.Route
        let phrases: [String]
    }

    /// A fixture whose server holds the two good images of ``FetchFixture`` and every fault under `/hostile/`.
    struct Batch {
        let f: FetchFixture
        let faults: [Fault]
        /// Idle and total timeout 2 s, body limit 1 MiB, no retries, everything in flight at once.
        static let limits = ["--timeout", "2", "--max-bytes", "1M", "--retries", "0", "--concurrency", "16"]

        init() throws {
            f = try FetchFixture()
            // A 160×120 PNG of noise (~77 KB; a gradient compresses to < 1 KB): long enough for mid-body faults.
            let large = try Self.noisePNG(width: 160, height: 120)
            precondition(large.count > 50_000)
            var halfGarbage = [UInt8](large)
            for i in halfGarbage.count / 2..<halfGarbage.count { halfGarbage[i] = UInt8(truncatingIfNeeded: i &* 31) }
            let png = "image/png"
            faults = [
                // Paced: an unpaced endless body keeps URLSession reading long after cancel() and stalls the rest.
                Fault(
                    name: "endless body", path: "/hostile/endless.png",
                    route: .endless().dripping(bytes: 65_536, every: .milliseconds(5)),
                    phrases: ["is larger than the limit of 1048576 bytes"]),
                Fault(
                    name: "Content-Length longer than the body", path: "/hostile/long.png",
                    route: .bytes(large, contentType: png).declaringContentLength(large.count * 2),
                    phrases: ["ended after", "timed out"]),
                Fault(
                    name: "Content-Length shorter than the body", path: "/hostile/short.png",
                    route: .bytes(large, contentType: png).declaringContentLength(large.count / 2),
                    phrases: ["is not an image Imago can decode"]),
                Fault(
                    name: "slow drip past the timeout", path: "/hostile/drip.png",
                    route: .bytes(Data(count: 200_000), contentType: png).dripping(
                        bytes: 100, every: .milliseconds(50)),
                    phrases: ["timed out"]),
                Fault(
                    name: "stall after 500 bytes", path: "/hostile/stall.png",
                    route: .bytes(large, contentType: png).stalling(afterBytes: 500), phrases: ["timed out"]),
                Fault(
                    name: "reset mid-body", path: "/hostile/reset.png",
                    route: .bytes(large, contentType: png).resetting(afterBytes: 1000),
                    phrases: ["ended after", "connection to"]),
                Fault(
                    name: "redirect loop", path: "/hostile/loop.png", route: .redirect(to: "/hostile/loop.png"),
                    phrases: ["redirected more than", "connection to"]),
                Fault(
                    name: "304 with no cached entry", path: "/hostile/304.png", route: .status(304),
                    phrases: ["HTTP 304"]),
                Fault(
                    name: "gzip bomb (4 MiB of zeros in ~27 KB)", path: "/hostile/bomb.png",
                    route: .bytes(ImagoTesting.Gzip.zeros(count: 4 << 20), contentType: png).withContentEncoding(
                        "gzip"),
                    phrases: ["is larger than the limit of 1048576 bytes"]),
                Fault(
                    name: "valid first half, then garbage", path: "/hostile/garbage.png",
                    route: .bytes(Data(halfGarbage), contentType: png), phrases: ["is not an image Imago can decode"]),
            ]
            for fault in faults { f.server.setRoute(fault.path, fault.route) }
        }

        /// An RGBA PNG of pseudo-random pixels (fixed seed): barely compressible.
        static func noisePNG(width: Int, height: Int) throws -> Data {
            var state: UInt64 = 20_261_130
            let bytes = (0..<width * height * 4).map { _ -> UInt8 in
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                return UInt8(truncatingIfNeeded: state >> 56)
            }
            let pixels = try PixelBuffer(width: width, height: height, bytes: bytes)
            return try ImageEncoderRegistry.makeDefault().encode(pixels, as: .png)
        }

        /// Good and hostile URLs interleaved: a, the faults, b.
        var urls: [String] {
            [f.a.absoluteString] + faults.map { f.server.url(for: $0.path).absoluteString } + [f.b.absoluteString]
        }

        var arguments: [String] { ["fetch"] + urls + Self.limits + ["--cache-dir", f.cacheDir] }

        /// Checks what a finished run printed and left in the cache.
        func check(_ run: CLIRun) async throws {
            #expect(run.status == 1)
            #expect(run.jsonObjects.count == faults.count + 2)
            for good in [f.a, f.b] {
                let line = try #require(run.object(for: good))
                #expect(line["status"] as? String == "ok" && line["source"] as? String == "network", "\(good)")
            }
            for fault in faults {
                let url = f.server.url(for: fault.path)
                let line = try #require(run.object(for: url), "no line for the \(fault.name)")
                #expect(line["status"] as? String == "error", "\(fault.name)")
                let message = try #require(line["error"] as? String, "\(fault.name): no error message")
                #expect(message.contains(url.absoluteString), "\(fault.name): the error does not name the URL")
                #expect(
                    fault.phrases.contains { message.contains($0) },
                    "\(fault.name): expected one of \(fault.phrases), got: \(message)")
                #expect(f.server.requestCount(for: fault.path) >= 1, "\(fault.name) was never requested")
            }

            // Nothing of a hostile URL is in the cache: no entry for its key…
            let directory = URL(fileURLWithPath: f.cacheDir)
            do {
                let disk = try DiskCache(directory: directory)
                defer { disk.close() }
                for fault in faults {
                    let key = ImageRequest(url: f.server.url(for: fault.path)).sourceKey
                    #expect(!disk.containsData(for: key) && disk.entry(for: key) == nil, "\(fault.name) was cached")
                }
                for good in [f.a, f.b] { #expect(disk.entry(for: ImageRequest(url: good).sourceKey) != nil) }
                #expect(disk.statistics.entryCount == 2)
            }
            // …the cache command counts only the two good images, with their bytes…
            let stats = await runCLI(["cache", "stats", "--cache-dir", f.cacheDir, "--json"])
            let object = try #require(stats.jsonObjects.first)
            #expect(object["entries"] as? Int == 2)
            #expect((object["bytes"] as? Int).map { $0 >= f.jpeg.count + f.png.count } == true)
            // …and no byte of any file under the cache directory holds a hostile path.
            let names = FileManager.default.enumerator(atPath: directory.path)?.allObjects as? [String] ?? []
            #expect(!names.isEmpty)
            for name in names {
                let bytes = FileManager.default.contents(atPath: directory.appendingPathComponent(name).path) ?? Data()
                #expect(bytes.range(of: Data("/hostile/".utf8)) == nil, "\(name) holds a hostile URL")
            }
        }
    }

    @Test func everyFaultInABatchFailsItsURLAloneAndLeavesNothingInTheCache() async throws {
        // Given good images and every fault in one batch
        let batch = try Batch()
        defer { batch.f.finish() }
        // When they are fetched in-process (stdout not a terminal: one JSON line per URL)
        let started = ContinuousClock.now
        let run = await runCLI(batch.arguments)
        let elapsed = ContinuousClock.now - started
        // Then each hostile URL failed alone, clearly, and within a bound set by the 2 s timeout (with a wide
        // margin for a loaded machine: this guards against hangs, it is not a speed target)
        #expect(elapsed < .seconds(30), "took \(elapsed)")
        try await batch.check(run)
        #expect(run.stderr.isEmpty)
    }

    @Test func theRealExecutableExitsOneWithTheSameLinesAndAnUntouchedCache() async throws {
        // Given the built `imago` and the same batch
        let tool = try #require(imagoExecutableURL(), "build the imago executable first (swift build --build-tests)")
        let batch = try Batch()
        defer { batch.f.finish() }
        // When it runs as a child process
        let child = try CLIChild(executable: tool, arguments: batch.arguments, scratch: batch.f.scratch)
        let run = try #require(await child.waitForExit(seconds: 30), "imago fetch did not exit within 30 s")
        // Then it exited 1 with the same per-URL lines and nothing of the faults cached
        try await batch.check(run)
    }

    @Test func onATerminalTheSummaryListsEveryFailureByURL() async throws {
        let batch = try Batch()
        defer { batch.f.finish() }
        let run = await runCLI(batch.arguments, isTerminal: true, environment: ["NO_COLOR": "1"])
        #expect(run.status == 1)
        let lines = run.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("Fetched 2 of \(batch.faults.count + 2) images") })
        #expect(lines.contains("\(batch.faults.count) failed:"))
        for fault in batch.faults {
            let url = batch.f.server.url(for: fault.path).absoluteString
            #expect(lines.contains { $0.hasPrefix("error  ") && $0.contains(url) }, "no error line for \(fault.name)")
        }
    }
}

@Suite(.timeLimit(.minutes(1))) struct FetchLimitOptionsTests {
    @Test func parsesTimeoutMaxBytesAndRetries() throws {
        let args = try parseArguments(
            ["http://h/a.jpg", "--timeout", "2.5", "--max-bytes", "1M", "--retries", "0"],
            options: FetchCommand.command.options)
        let options = try FetchCommand.parse(args, environment: [:]) { Data() }
        #expect(options.network.timeout == .milliseconds(2500))
        #expect(options.network.maximumBodySize == 1 << 20)
        #expect(options.network.retries == 0)
        let defaults = try FetchCommand.parse(
            try parseArguments(["http://h/a.jpg"], options: FetchCommand.command.options), environment: [:]
        ) { Data() }
        #expect(defaults.network == NetworkOptions())
    }

    /// A loopback origin with a 2 × 2 PNG at `/a.png`, and a scratch folder for ``fetchFresh(_:into:_:)``.
    func pngOrigin() throws -> (LoopbackServer, URL) {
        let server = try LoopbackServer()
        server.setRoute(
            "/a.png",
            .bytes(
                try ImageEncoderRegistry.makeDefault().encode(try PixelBuffer(width: 2, height: 2), as: .png),
                contentType: "image/png"))
        return (server, FileManager.default.temporaryDirectory.appendingPathComponent("fetch-\(UUID().uuidString)"))
    }

    /// `imago fetch URL` with `extra` arguments, over a new cache and output folder in `directory`.
    func fetchFresh(_ url: URL, into directory: URL, _ extra: [String]) async -> CLIRun {
        let fresh = directory.appendingPathComponent(UUID().uuidString)
        return await runCLI(["fetch", url.absoluteString, "--cache-dir", fresh.path, "-o", fresh.path] + extra)
    }

    @Test func theUserAgentReachesTheOrigin() async throws {
        let (server, directory) = try pngOrigin()
        defer { server.stop() }
        defer { try? FileManager.default.removeItem(at: directory) }
        for (extra, expected) in [
            ([], "Imago/\(ImagoVersion.current)"),
            (["--user-agent", "Gallery/2.0 (+ops@example.com)"], "Gallery/2.0 (+ops@example.com)"),
            (["--user-agent", ""], nil),
        ] as [([String], String?)] {
            let run = await fetchFresh(server.url(for: "/a.png"), into: directory, extra)
            #expect(run.status == 0, "\(run.stderr)")
            #expect(server.lastRequestHeaders(for: "/a.png")?["User-Agent"] == expected, "\(extra)")
        }
        #expect(await runCLI(["fetch", "http://h/a.jpg", "--user-agent", "a\nb"]).status == 2)
    }

    /// `--max-redirects` (imgproxy's `IMGPROXY_MAX_REDIRECTS`): a chain of three redirects needs three.
    @Test func maxRedirectsBoundsTheChain() async throws {
        let (server, directory) = try pngOrigin()
        defer { server.stop() }
        defer { try? FileManager.default.removeItem(at: directory) }
        server.setRoute("/r1", .redirect(to: "/r2"))
        server.setRoute("/r2", .redirect(to: "/r3"))
        server.setRoute("/r3", .redirect(to: "/a.png"))
        func fetch(_ extra: [String]) async -> CLIRun {
            await fetchFresh(server.url(for: "/r1"), into: directory, extra)
        }
        let refused = await fetch(["--max-redirects", "2"])
        let message = refused.stdout + refused.stderr
        #expect(refused.status != 0 && message.contains("redirected more than 2"), "\(message)")
        #expect(server.requestCount(for: "/a.png") == 0)
        let followed = await fetch(["--max-redirects", "3"])
        #expect(followed.status == 0, "\(followed.stderr)")
        #expect(server.requestCount(for: "/a.png") == 1)
        #expect(await fetch([]).status == 0, "the default, 10, follows it")
        let none = await fetch(["--max-redirects", "0"])
        #expect(none.status != 0, "\(none.stderr)")
        #expect(await runCLI(["fetch", "http://h/a.jpg", "--max-redirects", "51"]).status == 2)
    }

    @Test(arguments: [
        ["--timeout", "0"], ["--timeout", "soon"], ["--timeout", "nan"], ["--timeout", "-1"], ["--max-bytes", "0"],
        ["--max-bytes", "lots"], ["--retries", "11"], ["--retries", "-1"],
    ])
    func badLimitsAreBadUsage(_ option: [String]) async {
        let run = await runCLI(["fetch", "http://h/a.jpg"] + option)
        #expect(run.status == 2)
        #expect(run.stderr.hasPrefix("imago fetch: ") && run.stderr.contains(option[0]))
    }

    @Test func helpDocumentsTheLimits() async {
        let run = await runCLI(["fetch", "--help"])
        for option in ["--timeout SECONDS", "--max-bytes SIZE", "--retries N"] {
            #expect(run.stdout.contains(option), "\(option) missing from the help")
        }
    }
}
