import Foundation
import Imago
import ImagoServer
import ImagoTesting
import Testing

@testable import ImagoCLI

#if canImport(Glibc)
    import Glibc
#endif

/// `imago serve` decodes HEIC and HEIF sources in a child process (`imago heif-decode`): a file that makes libheif
/// abort costs its own request, and the server goes on.
@Suite struct ImageProxyHEIFChildTests {
    @Test(.timeLimit(.minutes(1)))
    func aSourceWhoseDecoderCrashesIsA415AndTheServerGoesOn() async throws {
        let heic = try serverCorpus("heic/gen-kodim03-8bit-420.heic")
        let crashing = ChildProcessDecoder(
            formats: [.heic, .heif], executable: URL(fileURLWithPath: "/bin/sh"),
            arguments: ["-c", "cat > /dev/null; kill -ABRT $$"], timeout: .seconds(10))
        let fixture = try ProxyFixture { $0.decoders.register(crashing) }
        fixture.origin.setRoute("/a.heic", .bytes(heic, contentType: "image/heic"))
        let crashed = await fixture.get(fixture.path("w:100/f:png", "/a.heic"))
        #expect(crashed.status == 415, "\(crashed.status) \(errorMessage(crashed))")
        #expect(errorMessage(crashed).hasSuffix("the source is not a valid heic image"), "\(errorMessage(crashed))")
        let jpeg = await fixture.get(fixture.path("w:100/f:png"))
        #expect(try jpeg.status == 200 && ServerTestImages.decode(jpeg.body).width == 100)

        let hanging = ChildProcessDecoder(
            formats: [.heic, .heif], executable: URL(fileURLWithPath: "/bin/sh"),
            arguments: ["-c", "cat > /dev/null; sleep 30"], timeout: .seconds(1))
        let slow = try ProxyFixture { $0.decoders.register(hanging) }
        slow.origin.setRoute("/a.heic", .bytes(heic, contentType: "image/heic"))
        let stopped = await slow.get(slow.path("w:100/f:png", "/a.heic"))
        #expect(stopped.status == 422, "\(stopped.status) \(errorMessage(stopped))")
        #expect(
            errorMessage(stopped).hasSuffix("decoding the heic source took longer than 1 s"), "\(errorMessage(stopped))"
        )
    }

    @Test func serveDecodesHEIFInAChildOfItsOwnExecutable() {
        let decoder = ServeCommand.heifDecoder(timeout: .seconds(7))
        #expect(decoder.formats == [.heic, .heif])
        #expect(decoder.executable.path == "/proc/self/exe" && decoder.arguments == ["heif-decode"])
        #expect(decoder.timeout == .seconds(7))
    }

    /// The subprocess: the same bytes as an in-process proxy, and CPU time charged to a child it waited for
    /// (`/proc/PID/stat`'s cutime + cstime) only without `--heif-in-process`.
    @Test(.timeLimit(.minutes(2)))
    func imagoServeDecodesHEIFInAChildUnlessToldNot() async throws {
        let executable = try #require(
            ImagoTesting.builtExecutable(named: "imago", environmentVariable: "IMAGO_CLI", preferringPlainBuild: true),
            "build the imago executable first (swift build)")
        let heic = try serverCorpus("heic/gen-kodim03-8bit-420.heic")
        let origin = try LoopbackServer()
        defer { origin.stop() }
        for index in 0..<4 { origin.setRoute("/\(index).heic", .bytes(heic, contentType: "image/heic")) }
        let inProcess = try ProxyFixture()
        inProcess.origin.setRoute("/a.heic", .bytes(heic, contentType: "image/heic"))
        let expected = await inProcess.get(inProcess.path("rs:fit:120:120/f:png", "/a.heic"))
        #expect(expected.status == 200)

        for flags in [["--heif-timeout", "20"], ["--heif-in-process"]] {
            let directory = ServeCommandTests.scratch()
            defer { try? FileManager.default.removeItem(at: directory) }
            let serve = try ServeProcess(
                executable, ["--listen", "127.0.0.1:0", "--unsigned", "--allow-private"] + flags, in: directory)
            defer { serve.terminate() }
            let port = try #require(await serve.listeningPort())
            for index in 0..<4 {
                let url =
                    "http://127.0.0.1:\(port)/_/rs:fit:120:120/f:png/plain/"
                    + origin.url(for: "/\(index).heic").absoluteString
                let response = try await TestHTTPClient().send(URL(string: url)!)
                #expect(response.status == 200 && response.body == expected.body, "\(flags) \(response.status)")
            }
            let children = try Self.childCPUTicks(serve.process.processIdentifier)
            if flags.contains("--heif-in-process") {
                #expect(children == 0, "\(flags): \(children) ticks in children")
            } else {
                #expect(children > 0, "\(flags): no CPU time in children")
            }
        }
    }

    /// User and system clock ticks of the children `pid` has waited for.
    static func childCPUTicks(_ pid: Int32) throws -> Int {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        // After the command's closing parenthesis: state is field 3, cutime 16, cstime 17.
        let fields = stat[stat.index(after: try #require(stat.lastIndex(of: ")")))...].split(separator: " ")
        return try #require(Int(fields[13])) + #require(Int(fields[14]))
    }
}
