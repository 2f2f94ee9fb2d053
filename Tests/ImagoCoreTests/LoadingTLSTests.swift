import Foundation
import ImagoCore
import ImagoTesting
import Testing

/// A real TLS server on 127.0.0.1 (`openssl s_server`, which `make test` installs when missing) with a freshly
/// made self-signed certificate: the loader must refuse it, because certificate validation is always on.
final class SelfSignedTLSServer: Sendable {
    let port: Int
    /// The PEM certificate the server presents (a CA bundle that trusts it).
    let certificatePath: String
    private let process: Process
    private let output: Locked<Data>
    private let folder: URL

    /// Starts `openssl s_server` with `extraArguments` added (e.g. `-tls1_2` to speak TLS 1.2 only).
    init(extraArguments: [String] = []) async throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let key = folder.appendingPathComponent("key.pem").path
        let certificate = folder.appendingPathComponent("cert.pem").path
        certificatePath = certificate
        try Self.run([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key,
            "-out", certificate, "-subj", "/CN=127.0.0.1", "-days", "1", "-addext", "subjectAltName=IP:127.0.0.1",
        ])

        let output = Locked(Data())
        let pipe = Pipe()
        pipe.fileHandleForReading.readabilityHandler = { handle in
            let chunk = handle.availableData
            output.withLock { $0.append(chunk) }
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.openssl)
        process.arguments =
            ["s_server", "-accept", "127.0.0.1:0", "-www", "-cert", certificate, "-key", key] + extraArguments
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        self.process = process
        self.output = output

        // s_server prints "ACCEPT 127.0.0.1:PORT" once it listens on the port the kernel chose.
        var port: Int?
        _ = await ImagoTesting.eventually(timeout: .seconds(20)) {
            let text = String(decoding: output.value, as: UTF8.self)
            guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("ACCEPT ") }),
                let number = line.split(separator: ":").last.flatMap({ Int($0) })
            else { return false }
            port = number
            return true
        }
        guard let port else {
            kill(process.processIdentifier, SIGKILL)
            throw ServerError.didNotStart(String(decoding: output.value, as: UTF8.self))
        }
        self.port = port
    }

    /// Everything the server printed so far (its handshake errors name the alert the client sent).
    var log: String { String(decoding: output.value, as: UTF8.self) }

    func stop() {
        // SIGKILL, not terminate(): a child started from a Dispatch worker inherits its blocked signal mask, so
        // s_server never sees SIGTERM (measured: SigBlk fffffffe3bfbea27 in its /proc status).
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: folder)
    }

    enum ServerError: Error { case didNotStart(String), openSSLFailed(Int32) }

    private static let openssl = "/usr/bin/openssl"

    private static func run(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: openssl)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw ServerError.openSSLFailed(process.terminationStatus) }
    }
}

extension LoadingNetworkTests {
    @Suite(.timeLimit(.minutes(1))) struct LoadingTLSTests {
        @Test func selfSignedCertificateIsRefused() async throws {
            // Given an HTTPS server on 127.0.0.1 whose certificate no authority signed
            let server = try await SelfSignedTLSServer()
            defer { server.stop() }
            let url = try #require(URL(string: "https://127.0.0.1:\(server.port)/image.png"))
            var configuration = testLoaderConfiguration()
            configuration.retryPolicy = RetryPolicy(maximumRetries: 2, initialDelay: .milliseconds(5))
            let loader = makeTestLoader(configuration)
            let events = Locked<[DataLoaderEvent]>([])
            loader.addObserver { e in events.withLock { $0.append(e) } }

            // When a loader that retries fetches from it
            let recorder = EventRecorder()
            let task = loader.load(DataRequest(url: url), handler: recorder.handler)
            let result = await recorder.waitForResult(timeout: .seconds(30))
            _ = task

            // Then the load fails as a refused TLS connection, not retried (a handshake again cannot help), and
            // nothing was delivered
            guard case .failure(.tlsRefused(let failedURL, _)) = result else {
                Issue.record("expected tlsRefused, got \(String(describing: result))")
                return
            }
            #expect(failedURL == url)
            #expect(await ImagoTesting.eventually(timeout: .seconds(5)) { events.value.contains { $0.isTerminal } })
            #expect(!events.value.contains { if case .retried = $0 { true } else { false } }, "\(events.value)")
            #expect(FailureCache.reason(for: DataLoadingError.tlsRefused(url: url, reason: "")) == .rejected)
            #expect(!recorder.events.contains { if case .partialData = $0 { true } else { false } })
            // and the server saw the client abort the handshake over the certificate (not a refused connection)
            let sawAlert = await ImagoTesting.eventually(timeout: .seconds(5)) {
                server.log.contains("unknown ca") || server.log.contains("bad certificate")
                    || server.log.contains("certificate unknown")
            }
            #expect(sawAlert, "s_server said: \(server.log)")
        }
    }
}
