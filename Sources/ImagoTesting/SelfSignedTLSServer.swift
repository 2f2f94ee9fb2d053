import Foundation
import ImagoCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A real TLS server on 127.0.0.1 (`openssl s_server -www`, which `make test` installs when missing) with a freshly
/// made self-signed certificate, for tests of certificate checks: a loader refuses it unless its CA bundle holds
/// ``certificatePath``. Its ``log`` names each handshake the client aborted ("unknown ca").
public final class SelfSignedTLSServer: Sendable {
    /// The port the kernel chose.
    public let port: Int
    /// The PEM certificate the server presents (a CA bundle that trusts it).
    public let certificatePath: String
    private let process: Process
    private let output: Locked<Data>
    private let folder: URL

    /// Starts `openssl s_server` with `extraArguments` added (e.g. `-tls1_2` to speak TLS 1.2 only).
    public init(extraArguments: [String] = []) async throws {
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
    public var log: String { String(decoding: output.value, as: UTF8.self) }

    /// Kills the server and removes its key and certificate.
    public func stop() {
        // SIGKILL, not terminate(): a child started from a Dispatch worker inherits its blocked signal mask, so
        // s_server never sees SIGTERM (measured: SigBlk fffffffe3bfbea27 in its /proc status).
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: folder)
    }

    /// Why the server could not be started.
    public enum ServerError: Error {
        /// `openssl s_server` did not report a listening port within 20 s; its output so far.
        case didNotStart(String)
        /// `openssl req` could not make the key and certificate; its exit status.
        case openSSLFailed(Int32)
    }

    private static let openssl = "/usr/bin/openssl"

    private static func run(_ arguments: [String]) throws {
        let status = try ImagoTesting.run(openssl, arguments, standardError: .nullDevice).status
        guard status == 0 else { throw ServerError.openSSLFailed(status) }
    }
}
