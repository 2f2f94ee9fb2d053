import Foundation
import Imago
import ImagoTesting
import Testing

@testable import ImagoCLI

/// `imago fetch --public-only` and `--cacert`, through the libcurl loader the CLI uses.
@Suite(.serialized, .timeLimit(.minutes(1))) struct FetchNetworkPolicyTests {
    @Test func publicOnlyRefusesTheLoopbackServerAndNamesTheHost() async throws {
        // Given a loopback server holding a real image
        let server = try LoopbackServer()
        defer { server.stop() }
        server.setRoute("/a.png", .bytes(try FetchImages.png(), contentType: "image/png"))
        let scratch = try makeScratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let url = server.url(for: "/a.png?token=s3cret")
        let common = [url.absoluteString, "--json", "--retries", "0", "--cache-dir", scratch.path]
        // When it is fetched with --public-only
        let refused = await runCLI(["fetch"] + common + ["--public-only"])
        // Then the fetch fails naming the address policy and the host, never the secret, and nothing was requested
        #expect(refused.status == 1)
        let message = try #require(refused.jsonObjects.first?["error"] as? String, "\(refused)")
        #expect(message.contains("address policy") && message.contains("127.0.0.1"))
        #expect(!(refused.stdout + refused.stderr).contains("s3cret"))
        #expect(server.totalRequestCount == 0)
        // while without it the same fetch succeeds
        let allowed = await runCLI(["fetch"] + common)
        #expect(allowed.status == 0)
        #expect(server.requestCount(for: "/a.png") == 1)
    }

    @Test func proxyEnvironmentVariablesAreHonoured() async throws {
        // Given the real executable and an http_proxy that points nowhere
        let tool = try #require(imagoExecutableURL(), "build the imago executable first")
        let server = try LoopbackServer()
        defer { server.stop() }
        server.setRoute("/a.png", .bytes(try FetchImages.png(), contentType: "image/png"))
        let scratch = try makeScratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        var environment = ProcessInfo.processInfo.environment
        for name in ["no_proxy", "NO_PROXY", "all_proxy", "ALL_PROXY"] { environment[name] = nil }
        let arguments = [
            "fetch", server.url(for: "/a.png").absoluteString, "--json", "--retries", "0", "--cache-dir", scratch.path,
        ]
        // When it fetches from the loopback server through that proxy
        environment["http_proxy"] = "http://127.0.0.1:1"
        let proxied = try CLIChild(executable: tool, arguments: arguments, scratch: scratch, environment: environment)
        let failed = try #require(await proxied.waitForExit(seconds: 30))
        // Then the request went to the (dead) proxy, not to the server
        #expect(failed.status == 1, "\(failed)")
        #expect(failed.stdout.contains("curl error 7"), "\(failed)")
        #expect(server.totalRequestCount == 0)
        // while without the variable the same command reaches the server
        environment["http_proxy"] = nil
        let direct = try CLIChild(executable: tool, arguments: arguments, scratch: scratch, environment: environment)
        #expect(try #require(await direct.waitForExit(seconds: 30)).status == 0)
        #expect(server.requestCount(for: "/a.png") == 1)
    }

    @Test func cacertMustBeAReadableFile() async {
        let run = await runCLI(["fetch", "http://h/a.jpg", "--cacert", "/nonexistent/ca.pem"])
        #expect(run.status == 2)
        #expect(run.stderr.contains("--cacert"))
    }

    @Test func parsesPublicOnlyAndCacert() throws {
        let args = try parseArguments(
            ["http://h/a.jpg", "--public-only", "--cacert", "/etc/hostname"], options: FetchCommand.command.options)
        let options = try FetchCommand.parse(args, environment: [:]) { Data() }
        #expect(options.network.isPublicOnly)
        #expect(options.network.caBundlePath == "/etc/hostname")
        let loader = options.network.makeLoader(concurrency: 3)
        #expect(loader.configuration.addressPolicy == .publicOnly)
        #expect(loader.configuration.tls.caBundlePath == "/etc/hostname")
        #expect(loader.configuration.loading.maximumConcurrentTransfers == 3)
    }
}
