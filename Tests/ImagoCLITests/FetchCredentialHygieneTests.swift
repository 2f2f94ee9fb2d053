import Foundation
import Imago
import ImagoTesting
import Testing

@testable import ImagoCLI

/// `imago fetch` and `imago show` never print a password or a token, and keep neither in the cache.
@Suite(.serialized) struct FetchCredentialHygieneTests {
    static let secrets = ["hunter2secret", "tok-SECRET-42", "sig-SECRET-9"]

    @Test func fetchPrintsAndStoresNoSecretAndServesTheImagesFromDiskAgain() async throws {
        // Given URLs with a password, a token and a signature, and a failing one with a key
        let f = try FetchFixture()
        defer { f.finish() }
        f.server.setRoute("/missing.png", .status(404))
        let port = f.server.baseURL.port ?? 0
        let urls = [
            "http://alice:hunter2secret@127.0.0.1:\(port)/photos/a.jpg",
            "http://127.0.0.1:\(port)/icons/b.png?token=tok-SECRET-42&w=1",
            "http://127.0.0.1:\(port)/photos/a.jpg?X-Amz-Signature=sig-SECRET-9",
            "http://127.0.0.1:\(port)/missing.png?api_key=key-SECRET-7",
        ]
        let out = f.scratch.appendingPathComponent("out")
        // When they are fetched as JSON, and again on a "terminal"
        let first = await runCLI(["fetch"] + urls + ["--cache-dir", f.cacheDir, "--out", out.path])
        let second = await runCLI(["fetch"] + urls + ["--cache-dir", f.cacheDir], isTerminal: true)
        // Then the secrets were sent to the server
        #expect(f.server.lastRequest(for: "/icons/b.png")?.query == "token=tok-SECRET-42&w=1")
        #expect(f.server.lastRequest(for: "/missing.png")?.query == "api_key=key-SECRET-7")
        // and are in no output line, no output file name, and no byte of the cache
        #expect(first.status == 1 && second.status == 1)
        let printed = first.stdout + first.stderr + second.stdout + second.stderr
        for secret in Self.secrets + ["key-SECRET-7"] {
            #expect(!printed.contains(secret), "\(secret) printed")
        }
        #expect(first.jsonObjects.contains { $0["url"] as? String == "http://127.0.0.1:\(port)/photos/a.jpg" })
        #expect(
            first.jsonObjects.contains {
                $0["url"] as? String == "http://127.0.0.1:\(port)/icons/b.png?token=<redacted>&w=1"
            })
        let failure = try #require(
            first.jsonObjects.first { ($0["url"] as? String)?.contains("missing.png") == true })
        #expect((failure["error"] as? String)?.contains("missing.png?api_key=<redacted>") == true)
        let outNames = (try? FileManager.default.contentsOfDirectory(atPath: out.path)) ?? []
        #expect(outNames.count == 3 && !outNames.contains { $0.contains("SECRET") || $0.contains("hunter2") })
        let cache = URL(fileURLWithPath: f.cacheDir)
        let names = FileManager.default.enumerator(atPath: cache.path)?.allObjects as? [String] ?? []
        #expect(!names.isEmpty)
        for name in names {
            let bytes = FileManager.default.contents(atPath: cache.appendingPathComponent(name).path) ?? Data()
            for secret in Self.secrets + ["key-SECRET-7", "alice"] {
                #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(secret) stored in \(name)")
            }
        }
        // and the second run got the three images from the disk cache (the first with and without the password
        // are one entry; the signed one has its own)
        #expect(second.stdout.contains("disk 3  network 0"), "\(second.stdout)")
        #expect(f.server.requestCount(for: "/photos/a.jpg") == 2)
        #expect(f.server.requestCount(for: "/icons/b.png") == 1)
    }

    @Test func showNamesTheURLWithoutItsSecrets() async throws {
        let f = try FetchFixture()
        defer { f.finish() }
        f.server.setRoute("/missing.png", .status(404))
        let port = f.server.baseURL.port ?? 0
        let run = await runCLI([
            "show", "http://bob:hunter2secret@127.0.0.1:\(port)/missing.png?token=tok-SECRET-42", "--cache-dir",
            f.cacheDir,
        ])
        #expect(run.status == 1)
        #expect(run.stderr.contains("127.0.0.1:\(port)/missing.png?token=<redacted>"), "\(run.stderr)")
        for secret in ["hunter2secret", "tok-SECRET-42", "bob"] {
            #expect(!(run.stdout + run.stderr).contains(secret), "\(secret) printed")
        }
    }

    @Test func showEndsARedirectLoopWithAnErrorNamingTheURL() async throws {
        let f = try FetchFixture()
        defer { f.finish() }
        f.server.setRoute("/loop.png", .redirect(to: "/loop.png"))
        let url = f.server.url(for: "/loop.png")
        let run = await runCLI(["show", url.absoluteString, "--cache-dir", f.cacheDir, "--width", "20"])
        #expect(run.status == 1)
        #expect(run.stderr.contains(url.absoluteString), "\(run.stderr)")
        #expect(
            run.stderr.contains("redirected more than") || run.stderr.contains("connection to"), "\(run.stderr)")
    }
}
