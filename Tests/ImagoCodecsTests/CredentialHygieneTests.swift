import Foundation
import Imago
import ImagoCore
import ImagoTesting
import Testing

/// Passwords in URLs and the values of token-like query items: sent to the server, never written to the disk cache
/// (not in names, not in any byte of any file), never in logs, pipeline events, loader events or errors; the
/// images are still cached and served from disk.
@Suite(.serialized, .timeLimit(.minutes(1))) struct CredentialHygieneTests {
    static let secrets = ["hunter2secret", "tok-SECRET-42", "sig-SECRET-9", "key-SECRET-7"]

    static func withCredentials(_ url: URL, user: String, password: String) throws -> URL {
        var components = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false))
        components.user = user
        components.password = password
        return try #require(components.url)
    }

    /// Every byte of every file under `directory`, with its relative path.
    static func files(under directory: URL) -> [(name: String, bytes: Data)] {
        let names = FileManager.default.enumerator(atPath: directory.path)?.allObjects as? [String] ?? []
        return names.compactMap { name in
            FileManager.default.contents(atPath: directory.appendingPathComponent(name).path).map { (name, $0) }
        }
    }

    @Test func secretsNeverReachDiskLogsEventsOrErrorsAndImagesAreStillServedFromDisk() async throws {
        // Given a server with three images and a 404, and URLs carrying a password, a token and a signature
        let server = try LoopbackServer()
        defer { server.stop() }
        let png = try corpusData("pngsuite/png/basn6a08.png")
        for path in ["/a.png", "/b.png", "/c.png"] { server.setRoute(path, .bytes(png, contentType: "image/png")) }
        server.setRoute("/missing.png", .status(404))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("creds-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let urls = [
            try Self.withCredentials(server.url(for: "/a.png"), user: "alice", password: "hunter2secret"),
            server.url(for: "/b.png?token=tok-SECRET-42&w=1"),
            server.url(for: "/c.png?X-Amz-Signature=sig-SECRET-9"),
        ]
        let missing = server.url(for: "/missing.png?api_key=key-SECRET-7")

        let logs = Locked<[String]>([])
        let loaderEvents = Locked<[String]>([])
        let loader = HTTPDataLoader()
        _ = loader.addObserver { event in loaderEvents.withLock { $0.append(event.description) } }
        var configuration = try ImagePipeline.Configuration.withDefaults(diskCacheDirectory: directory)
        configuration.dataLoader = loader
        configuration.logger = { record in logs.withLock { $0.append(record.description) } }
        let pipeline = ImagePipeline(configuration: configuration)
        let collected = eventDescriptionsUntilAFailure(of: pipeline)

        // When the three load (and reach the disk) and the fourth fails
        for url in urls { _ = try await pipeline.image(for: url) }
        var errorText = ""
        do {
            _ = try await pipeline.image(for: missing)
        } catch {
            errorText = "\(error) | \(String(reflecting: error))"
        }
        let eventLines = await collected.value
        let disk = try #require(configuration.dataCache as? DiskCache)
        for url in urls {
            #expect(await ImagoTesting.eventually { disk.containsData(for: ImageRequest(url: url).sourceKey) })
        }
        disk.close()

        // Then the secrets were sent
        #expect(server.lastRequest(for: "/b.png")?.query == "token=tok-SECRET-42&w=1")
        #expect(server.lastRequest(for: "/c.png")?.query == "X-Amz-Signature=sig-SECRET-9")
        #expect(server.lastRequest(for: "/missing.png")?.query == "api_key=key-SECRET-7")
        // and appear in no byte of any file of the cache, no file name, log record, event or error
        let files = Self.files(under: directory)
        #expect(files.count >= 3 && files.reduce(0) { $0 + $1.bytes.count } > 3 * png.count)
        let texts: [String: [String]] = [
            "logs": logs.withLock { $0 }, "pipeline events": eventLines, "loader events": loaderEvents.withLock { $0 },
            "error": [errorText], "file names": files.map(\.name),
        ]
        #expect(!errorText.isEmpty && !eventLines.isEmpty && !logs.withLock { $0 }.isEmpty)
        #expect(errorText.contains("api_key=<redacted>"), "the error still names the URL: \(errorText)")
        for secret in Self.secrets {
            for (place, lines) in texts {
                #expect(!lines.contains { $0.contains(secret) }, "\(secret) found in \(place)")
            }
            for file in files {
                #expect(file.bytes.range(of: Data(secret.utf8)) == nil, "\(secret) found in the bytes of \(file.name)")
            }
        }
        #expect(!files.contains { $0.bytes.range(of: Data("alice".utf8)) != nil }, "user name stored")

        // When a new pipeline (empty memory cache) on the same directory asks again
        let requestsBefore = server.totalRequestCount
        let second = ImagePipeline(configuration: try .withDefaults(diskCacheDirectory: directory))
        for url in urls {
            let response = try await second.response(for: ImageRequest(url: url))
            // Then each comes from the disk, pixel-identical, without a request
            #expect(response.source == .disk, "\(url.redactedString)")
            #expect(response.image.image.width == 32)
        }
        #expect(server.totalRequestCount == requestsBefore)
        (second.configuration.dataCache as? DiskCache)?.close()
    }

    @Test func differentTokensKeepDifferentEntries() async throws {
        // Given one path that answers with a different image per token
        let server = try LoopbackServer()
        defer { server.stop() }
        let small = try corpusData("pngsuite/png/basn6a08.png")
        let large = try corpusData("formats/TestImage.png")
        server.setRoute(
            "/p.png",
            .handler { request in
                let body = request.query == "token=B" ? large : small
                return .init(status: 200, headers: ["Content-Type": "image/png"], body: body)
            })
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tokens-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let pipeline = ImagePipeline(configuration: try .withDefaults(diskCacheDirectory: directory))
        // When both are loaded
        let a = try await pipeline.image(for: server.url(for: "/p.png?token=A"))
        let b = try await pipeline.image(for: server.url(for: "/p.png?token=B"))
        // Then each got its own image and its own entry
        #expect(a.image.width != b.image.width)
        #expect(server.requestCount(for: "/p.png") == 2)
        let disk = try #require(pipeline.configuration.dataCache as? DiskCache)
        #expect(await ImagoTesting.eventually { disk.statistics.entryCount == 2 })
        disk.close()
    }

    @Test func aFailureWithWrongCredentialsDoesNotFailTheRightOnes() async throws {
        // Given a server that wants alice:right (HTTP Basic) and answers 401 otherwise
        let server = try LoopbackServer()
        defer { server.stop() }
        let png = try corpusData("pngsuite/png/basn6a08.png")
        let expected = "Basic " + Data("alice:right".utf8).base64EncodedString()
        server.setRoute(
            "/private.png",
            .handler { request in
                request.headers["Authorization"] == expected
                    ? .init(status: 200, headers: ["Content-Type": "image/png"], body: png)
                    : .init(status: 401, headers: ["WWW-Authenticate": "Basic realm=\"x\""], body: Data())
            })
        // (a failure cache is on by default; the disk cache off keeps the second load on the network)
        let pipeline = ImagePipeline(configuration: try .withDefaults())
        let wrong = try Self.withCredentials(server.url(for: "/private.png"), user: "alice", password: "wrong")
        let right = try Self.withCredentials(server.url(for: "/private.png"), user: "alice", password: "right")
        // When the wrong credentials fail first
        await #expect(throws: ImagePipeline.Error.self) { try await pipeline.image(for: wrong) }
        // Then the right ones are not answered from the remembered failure
        let image = try await pipeline.image(for: right)
        #expect(image.image.width == 32)
        #expect(server.lastRequestHeaders(for: "/private.png")?["Authorization"] == expected)
    }
}
