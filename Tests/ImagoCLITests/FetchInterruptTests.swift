import Foundation
import Imago
import ImagoTesting
import Testing

@testable import ImagoCLI

#if canImport(Glibc)
    import Glibc
#endif

extension FetchFixture {
    /// A JPEG served 64 bytes every 100 ms: several seconds in flight, long enough to interrupt.
    func addSlowRoute() -> URL {
        server.setRoute(
            "/slow.jpg", .bytes(jpeg, contentType: "image/jpeg").dripping(bytes: 8, every: .milliseconds(250)))
        return server.url(for: "/slow.jpg")
    }
}

@Suite(.timeLimit(.minutes(3))) struct FetchInterruptTests {
    @Test func anInterruptCancelsTransfersPrintsThePartialSummaryAndExits130() async throws {
        // Given a fetch, one image at a time, of a fast image, a slow one and one more
        let f = try FetchFixture()
        defer { f.finish() }
        let slow = f.addSlowRoute()
        let trigger = InterruptTrigger()
        let fetch = Task {
            try await runFetch(
                [
                    f.a.absoluteString, slow.absoluteString, f.b.absoluteString, "--concurrency", "1", "--cache-dir",
                    f.cacheDir,
                ],
                interrupt: trigger)
        }
        // When the user interrupts while the slow image is in flight
        #expect(await ImagoTesting.eventually { f.server.requestCount(for: "/slow.jpg") == 1 })
        trigger.fire()
        let run = try await fetch.value
        // Then it exits 130 with what was done, the transfer is aborted and the third never started
        #expect(run.status == 130)
        #expect(run.jsonObjects.count == 1)
        #expect(run.object(for: f.a)?["status"] as? String == "ok")
        #expect(run.stderr.contains("interrupted after"))
        #expect(run.stderr.contains("1 of 3 images fetched, 0 failed, 1 cancelled in flight, 1 not started"))
        #expect(await ImagoTesting.eventually { f.server.statistics.abortedTransfers["/slow.jpg", default: 0] == 1 })
        #expect(f.server.requestCount(for: "/icons/b.png") == 0)
        // And the cache was left consistent: the finished image is in it, nothing is damaged
        let verify = await runCLI(["cache", "verify", "--cache-dir", f.cacheDir, "--json"])
        #expect(verify.stdout == "{\"checked\":1,\"corrupt\":0,\"removed\":0}\n")
    }

    @Test func onATerminalTheInterruptedSummaryGoesToStdout() async throws {
        let f = try FetchFixture()
        defer { f.finish() }
        let slow = f.addSlowRoute()
        let trigger = InterruptTrigger()
        let fetch = Task {
            try await runFetch([slow.absoluteString, "--cache-dir", f.cacheDir], interrupt: trigger, isTerminal: true)
        }
        #expect(await ImagoTesting.eventually { f.server.requestCount(for: "/slow.jpg") == 1 })
        trigger.fire()
        let run = try await fetch.value
        #expect(run.status == 130)
        #expect(run.stdout.contains("Interrupted after"))
        #expect(run.stdout.contains("0 of 1 images fetched, 0 failed, 1 cancelled in flight, 0 not started"))
    }
}

@Suite(.timeLimit(.minutes(3))) struct FetchSubprocessTests {
    @Test func theBuiltToolPrintsJSONAndExitsZero() async throws {
        let tool = try #require(imagoExecutableURL(), "build the imago executable first (swift build --build-tests)")
        let f = try FetchFixture()
        defer { f.finish() }
        let child = try CLIChild(
            executable: tool, arguments: ["fetch", f.a.absoluteString, f.b.absoluteString, "--cache-dir", f.cacheDir],
            scratch: f.scratch)
        let run = try #require(await child.waitForExit())
        #expect(run.status == 0)
        #expect(run.jsonObjects.count == 2)
        #expect(run.object(for: f.b)?["width"] as? Int == 40)
        #expect(!run.stdout.contains("\u{1B}"))
    }

    @Test func sigintStopsARunningFetchWithThePartialSummaryAndStatus130() async throws {
        // Given the built tool fetching a fast image and a slow one
        let tool = try #require(imagoExecutableURL(), "build the imago executable first (swift build --build-tests)")
        let f = try FetchFixture()
        defer { f.finish() }
        let slow = f.addSlowRoute()
        let child = try CLIChild(
            executable: tool,
            arguments: ["fetch", f.a.absoluteString, slow.absoluteString, "--cache-dir", f.cacheDir],
            scratch: f.scratch)
        // When it receives SIGINT while the slow transfer runs
        #expect(
            await ImagoTesting.eventually {
                f.server.requestCount(for: "/slow.jpg") == 1 && child.stdout.contains("\"ok\"")
            })
        kill(child.process.processIdentifier, SIGINT)
        // Then it exits 130 after printing what it did
        let run = try #require(await child.waitForExit())
        #expect(run.status == 130)
        #expect(run.object(for: f.a)?["status"] as? String == "ok")
        #expect(run.stderr.contains("imago fetch: interrupted after"))
        #expect(run.stderr.contains("1 of 2 images fetched"))
        #expect(await ImagoTesting.eventually { f.server.statistics.abortedTransfers["/slow.jpg", default: 0] == 1 })
    }
}
