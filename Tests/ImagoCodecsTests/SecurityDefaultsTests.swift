import Foundation
import Imago
import ImagoCore
import ImagoTesting
import Testing

/// What the library refuses or hides by default. Directory 0700 / files 0600 is proven by
/// DiskCacheTests.createsTheDirectory0700AndFiles0600; TLS validation has no switch at all (HTTPDataLoader sets no
/// URLSession challenge handler, so FoundationNetworking's default validation always applies — see RELIABILITY.md).
@Suite(.timeLimit(.minutes(1))) struct SecurityDefaultsTests {
    @Test func defaultPipelineRefusesFileURLs() async throws {
        // Given the default configuration (http and https only)
        let pipeline = ImagePipeline(configuration: try .withDefaults())
        let url = URL(fileURLWithPath: "/etc/hostname")

        // When a file: URL is requested, Then it fails with unsupportedScheme
        await #expect(throws: ImagePipeline.Error.dataLoadingFailed(url: url, underlying: .unsupportedScheme(url: url)))
        {
            _ = try await pipeline.image(for: url)
        }
    }

    @Test func hostileKeysNeverLeaveTheCacheDirectory() throws {
        // Given a cache inside an otherwise empty sandbox folder
        let sandbox = FileManager.default.temporaryDirectory.appendingPathComponent("keys-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: sandbox) }
        let directory = sandbox.appendingPathComponent("cache")
        let cache = try DiskCache(directory: directory)
        let keys = [
            "../../etc/passwd", "/etc/passwd", "..", ".", "a/../../../b", "entries/../../x", "\0nul", "~root",
            String(repeating: "../", count: 3000), "C:\\windows\\system32", "%2e%2e%2fescape",
        ]

        // When each is stored
        for (i, key) in keys.enumerated() { try cache.storeSynchronously(Data("payload \(i)".utf8), for: key) }
        cache.close()

        // Then the sandbox holds only the cache folder, and every key reads back its own bytes
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.path) == ["cache"])
        let reopened = try DiskCache(directory: directory)
        for (i, key) in keys.enumerated() {
            #expect(reopened.data(for: key) == Data("payload \(i)".utf8), "\(key.prefix(40))")
        }
        // and no file name under the cache contains a key's text
        let names = FileManager.default.enumerator(atPath: directory.path)?.allObjects as? [String] ?? []
        #expect(!names.isEmpty)
        #expect(!names.contains { $0.contains("passwd") || $0.contains("..") || $0.contains("escape") })
    }

    @Test func credentialsNeverAppearInFileNamesLogsEventsOrErrors() async throws {
        // Given a pipeline with a disk cache, a logger and an event observer, and a server
        let server = try LoopbackServer()
        defer { server.stop() }
        let png = try corpusData("pngsuite/png/basn6a08.png")
        server.setRoute("/x.png", .bytes(png, contentType: "image/png"))
        server.setRoute("/missing.png", .status(404))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cred-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let logs = Locked<[String]>([])
        var configuration = try ImagePipeline.Configuration.withDefaults(diskCacheDirectory: directory)
        configuration.logger = { record in logs.withLock { $0.append(record.description) } }
        let pipeline = ImagePipeline(configuration: configuration)
        let collected = eventDescriptionsUntilAFailure(of: pipeline)
        func authorised(_ path: String) -> ImageRequest {
            var components = URLComponents(url: server.url(for: path), resolvingAgainstBaseURL: false)!
            components.user = "alice"
            components.password = "hunter2secret"
            var request = ImageRequest(url: components.url!)
            request.headers["Authorization"] = "Bearer tok-SECRET-42"
            return request
        }

        // When an image loads (and reaches the disk) and another fails
        let ok = authorised("/x.png")
        _ = try await pipeline.image(for: ok)
        let disk = configuration.dataCache
        #expect(await ImagoTesting.eventually { disk?.containsData(for: ok.sourceKey) == true })
        var errorText = ""
        do {
            _ = try await pipeline.image(for: authorised("/missing.png"))
        } catch {
            errorText = "\(error) \(String(describing: error))"
        }
        let eventLines = await collected.value

        // Then neither the password nor the token appears in file names, log records, events or the error
        let names = FileManager.default.enumerator(atPath: directory.path)?.allObjects as? [String] ?? []
        let texts = ["files": names, "logs": logs.withLock { $0 }, "events": eventLines, "error": [errorText]]
        #expect(!errorText.isEmpty && !eventLines.isEmpty && !logs.withLock { $0 }.isEmpty && !names.isEmpty)
        for (place, lines) in texts {
            for secret in ["hunter2secret", "tok-SECRET-42"] {
                #expect(!lines.contains { $0.contains(secret) }, "\(secret) found in \(place)")
            }
        }
    }

    @Test func authorizationIsNotForwardedToAnotherOriginOnRedirect() async throws {
        // Given a server that redirects to a second server (another port: another origin)
        let first = try LoopbackServer()
        let second = try LoopbackServer()
        defer {
            first.stop()
            second.stop()
        }
        let png = try corpusData("pngsuite/png/basn6a08.png")
        second.setRoute("/x.png", .bytes(png, contentType: "image/png"))
        first.setRoute("/x.png", .redirect(to: second.url(for: "/x.png").absoluteString))
        let pipeline = ImagePipeline(configuration: try .withDefaults())
        var request = ImageRequest(url: first.url(for: "/x.png"))
        request.headers["Authorization"] = "Bearer tok-SECRET-42"

        // When it is loaded
        _ = try await pipeline.image(for: request)

        // Then the first origin got the token and the second did not
        #expect(first.lastRequestHeaders(for: "/x.png")?["Authorization"] == "Bearer tok-SECRET-42")
        #expect(second.requestCount(for: "/x.png") == 1)
        #expect(second.lastRequestHeaders(for: "/x.png")?["Authorization"] == nil, "token leaked across origins")
    }

    @Test func budgetsAreBoundedByDefault() {
        let loader = HTTPDataLoader.Configuration()
        #expect(loader.maximumBodySize == 64 << 20)
        #expect(loader.acceptedSchemes == ["http", "https"])
        #expect(loader.maximumRedirects == 10)
        #expect(loader.resourceTimeout == .seconds(60) && loader.idleTimeout == .seconds(15))
        let decoding = ImagePipeline.Configuration().decodingOptions
        #expect(decoding.pixelLimit == 100_000_000)
        #expect(decoding.frameLimit == 10_000)
        #expect(decoding.animationByteLimit == 1 << 30)
        #expect(DiskCache.Configuration().sizeLimit == 256 << 20)
    }
}

/// Collects the descriptions of `pipeline`'s events until the first task that fails (that event included).
func eventDescriptionsUntilAFailure(of pipeline: ImagePipeline) -> Task<[String], Never> {
    let events = pipeline.events()
    return Task {
        var lines: [String] = []
        for await event in events {
            lines.append(event.description)
            if case .taskFinished(_, _, .failure) = event { break }
        }
        return lines
    }
}
