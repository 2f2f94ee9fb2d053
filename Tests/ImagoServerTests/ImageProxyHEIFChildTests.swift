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
    func aChildThatCrashesCostsOneRequestAndTheServerGoesOn() async throws {
        let heic = try serverCorpus("heic/gen-kodim03-8bit-420.heic")
        let records = Locked<[AccessLogRecord]>([])
        /// A proxy whose HEIF decoder's child is `/bin/sh -c 'cat > /dev/null; SCRIPT'`, serving `/a.heic`.
        func proxy(decodingWith script: String, timeout: Duration) throws -> ProxyFixture {
            let decoder = ChildProcessDecoder(
                formats: [.heic, .heif], executable: URL(fileURLWithPath: "/bin/sh"),
                arguments: ["-c", "cat > /dev/null; " + script], timeout: timeout)
            let fixture = try ProxyFixture {
                $0.decoders.register(decoder)
                $0.accessLog = { record in records.withLock { $0.append(record) } }
            }
            fixture.origin.setRoute("/a.heic", .bytes(heic, contentType: "image/heic"))
            return fixture
        }
        let fixture = try proxy(decodingWith: "kill -ABRT $$", timeout: .seconds(10))
        let crashed = await fixture.get(fixture.path("w:100/f:png", "/a.heic"))
        #expect(crashed.status == 415, "\(crashed.status) \(errorMessage(crashed))")
        #expect(errorMessage(crashed).hasSuffix("the source is not a valid heic image"), "\(errorMessage(crashed))")
        #expect(!errorMessage(crashed).contains("signal"), "the client is not told about the server's processes")
        // The operator is: the access log names the signal.
        let logged = records.withLock { $0 }.first { $0.status == 415 }?.error ?? ""
        #expect(logged.contains("ended on signal 6"), "\(logged)")
        let jpeg = await fixture.get(fixture.path("w:100/f:png"))
        #expect(try jpeg.status == 200 && ServerTestImages.decode(jpeg.body).width == 100)

        // An encoder child that crashes is the server's failure (500), and the server goes on.
        let crashingEncoder = ChildProcessEncoder(
            format: .heic, settingsIdentifier: nil, executable: URL(fileURLWithPath: "/bin/sh"),
            arguments: ["-c", "cat > /dev/null; kill -SEGV $$"], timeout: .seconds(10))
        let encoding = try ProxyFixture { $0.encoders.register(crashingEncoder) }
        let failed = await encoding.get(encoding.path("w:100/f:heic"))
        #expect(failed.status == 500, "\(failed.status) \(errorMessage(failed))")
        #expect(await encoding.get(encoding.path("w:100/f:png")).status == 200)

        let slow = try proxy(decodingWith: "sleep 30", timeout: .seconds(1))
        let stopped = await slow.get(slow.path("w:100/f:png", "/a.heic"))
        #expect(stopped.status == 422, "\(stopped.status) \(errorMessage(stopped))")
        #expect(
            errorMessage(stopped).hasSuffix("decoding or encoding the heic image took longer than 1 s"),
            "\(errorMessage(stopped))"
        )
    }

    @Test func serveDecodesHEIFInAChildOfItsOwnExecutable() {
        let decoder = ServeCommand.heifDecoder(timeout: .seconds(7))
        #expect(decoder.formats == [.heic, .heif])
        #expect(decoder.executable.path == "/proc/self/exe" && decoder.arguments == ["heif-decode"])
        #expect(decoder.timeout == .seconds(7) && decoder.answersPerChild == 1_000)
        #expect(decoder.idleChildren == ProcessInfo.processInfo.activeProcessorCount)
        let encoder = ServeCommand.heicEncoder(timeout: .seconds(7))
        #expect(encoder.format == .heic && encoder.settingsIdentifier == HEICEncoder().settingsIdentifier)
        #expect(encoder.executable.path == "/proc/self/exe" && encoder.arguments == ["heic-encode"])
        #expect(encoder.timeout == .seconds(7) && encoder.answersPerChild == 1_000)
    }

    /// The subprocess: the same bytes as an in-process proxy for a HEIC source and a HEIC output; children running
    /// `imago heif-decode` and `imago heic-encode` kept by default (and gone once the server is), none with
    /// `--heif-in-process`.
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
        origin.setRoute("/a.jpg", .bytes(inProcess.jpeg, contentType: "image/jpeg"))
        let expectedHEIC = await inProcess.get(inProcess.path("w:64/f:heic"))
        #expect(expectedHEIC.status == 200 && expectedHEIC.header("Content-Type") == "image/heic")

        for flags in [["--heif-timeout", "20"], ["--heif-in-process"]] {
            let directory = ServeCommandTests.scratch()
            defer { try? FileManager.default.removeItem(at: directory) }
            let serve = try ServeProcess(
                executable, ["--listen", "127.0.0.1:0", "--unsigned", "--allow-private"] + flags, in: directory)
            let port = try #require(await serve.listeningPort())
            for index in 0..<4 {
                let url =
                    "http://127.0.0.1:\(port)/_/rs:fit:120:120/f:png/plain/"
                    + origin.url(for: "/\(index).heic").absoluteString
                let response = try await TestHTTPClient().send(URL(string: url)!)
                #expect(response.status == 200 && response.body == expected.body, "\(flags) \(response.status)")
            }
            let url = "http://127.0.0.1:\(port)/_/w:64/f:heic/plain/" + origin.url(for: "/a.jpg").absoluteString
            let heic = try await TestHTTPClient().send(URL(string: url)!)
            #expect(heic.status == 200 && heic.body == expectedHEIC.body, "\(flags) \(heic.status)")
            let decoders = Self.children(of: serve.process.processIdentifier, running: "heif-decode")
            let encoders = Self.children(of: serve.process.processIdentifier, running: "heic-encode")
            let children = decoders + encoders
            serve.terminate()
            if flags.contains("--heif-in-process") {
                #expect(children.isEmpty, "\(flags): \(children)")
            } else {
                #expect(!decoders.isEmpty && !encoders.isEmpty, "\(flags): \(decoders) \(encoders)")
                #expect(
                    await ImagoTesting.eventually(timeout: .seconds(10)) { children.allSatisfy(Self.hasEnded) },
                    "the children outlived the server")
            }
        }
    }

    /// Whether `pid` is gone or a zombie (ended, waiting for whoever adopted it to reap it).
    static func hasEnded(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return true }
        return stat[stat.index(after: close)...].split(separator: " ").first == "Z"
    }

    /// The processes whose parent is `pid` and whose command line has `command`.
    static func children(of pid: Int32, running command: String) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(Int32.init).filter { candidate in
            guard let stat = try? String(contentsOfFile: "/proc/\(candidate)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return false }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 1, Int32(fields[1]) == pid,
                let line = try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(candidate)/cmdline"))
            else { return false }
            return String(decoding: line, as: UTF8.self).contains(command)
        }
    }
}
