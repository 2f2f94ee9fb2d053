import Foundation
import ImagoCore
import ImagoTesting

#if canImport(Glibc)
    import Glibc
#endif

/// A real gRPC server standing in for an OpenTelemetry collector: Python's `grpc` (Debian's `python3-grpcio`, an
/// independent implementation of gRPC over HTTP/2) serving the three OTLP `Export` methods on a free loopback port.
/// It records each call (method, metadata, deadline, the message's bytes) and answers with the statuses it was
/// given, in order, then `OK`; a negative status -N is `OK` with a partial success of N items rejected. Stopped by its process id on ``stop()`` or deinit.
final class GRPCCollector: Sendable {
    /// One call the collector took.
    struct Call: Decodable, Sendable {
        /// The method's path (`opentelemetry.proto.collector.trace.v1.TraceService/Export`).
        var method: String
        /// The gRPC status it answered with (0: OK; -N: OK with N items rejected).
        var status: Int
        /// The call's metadata (header fields), text values only.
        var metadata: [String: String]
        /// The seconds left of the call's deadline when it arrived (`grpc-timeout`), `nil` without one.
        var remaining: Double?
        /// The message, base64.
        var body: String

        /// The message's bytes.
        var message: Data { Data(base64Encoded: body) ?? Data() }
    }

    /// The collector's port on 127.0.0.1.
    let port: Int
    /// The self-signed certificate (for `127.0.0.1`) it answers TLS with, to trust; `nil` without TLS.
    let certificatePath: String?
    private let folder: URL?
    private let process: Locked<Process?>
    private let calls = Locked<[Call]>([])

    /// The Python server: argument 1 is the statuses to answer with, comma-separated (`14,0`); arguments 2 and 3,
    /// when given, a certificate and its key for TLS.
    private static let script = #"""
        import base64, json, sys, threading
        from concurrent import futures
        import grpc
        answers = [int(a) for a in sys.argv[1].split(",") if a] if len(sys.argv) > 1 else []
        codes = {c.value[0]: c for c in grpc.StatusCode}
        lock = threading.Lock()
        def export(method):
            def answer(request, context):
                with lock:
                    code = answers.pop(0) if answers else 0
                    metadata = {k: v for k, v in context.invocation_metadata() if isinstance(v, str)}
                    record = {"method": method, "status": code, "metadata": metadata,
                              "remaining": context.time_remaining(), "body": base64.b64encode(request).decode()}
                    sys.stdout.write(json.dumps(record) + "\n")
                    sys.stdout.flush()
                if code > 0:
                    context.abort(codes[code], "the test's collector refuses: %d%% sure" % code)
                if code < 0:  # OK with a partial success: -code items rejected (a varint under 128)
                    text = b"rejected by the test"
                    inner = bytes([0x08, -code, 0x12, len(text)]) + text
                    return bytes([0x0A, len(inner)]) + inner
                return b""
            return answer
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        for package, service in (("trace", "TraceService"), ("metrics", "MetricsService"), ("logs", "LogsService")):
            name = "opentelemetry.proto.collector.%s.v1.%s" % (package, service)
            handler = grpc.unary_unary_rpc_method_handler(export(name + "/Export"))
            server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(name, {"Export": handler}),))
        if len(sys.argv) > 3:  # TLS: the certificate and key files
            pair = (open(sys.argv[3], "rb").read(), open(sys.argv[2], "rb").read())
            port = server.add_secure_port("127.0.0.1:0", grpc.ssl_server_credentials([pair]))
        else:
            port = server.add_insecure_port("127.0.0.1:0")
        server.start()
        sys.stdout.write(json.dumps({"port": port}) + "\n")
        sys.stdout.flush()
        sys.stdin.read()
        server.stop(0)
        """#

    /// Why the collector could not start.
    struct StartFailure: Error, CustomStringConvertible {
        var description: String
    }

    /// Starts a collector answering the first calls with `statuses` (gRPC codes, 0 for OK) and the rest with OK;
    /// with `tls`, over TLS with a certificate made for the run by `openssl` (``certificatePath``).
    init(statuses: [Int] = [], tls: Bool = false) throws {
        let python = "/usr/bin/python3"
        var arguments = ["-c", Self.script, statuses.map(String.init).joined(separator: ",")]
        if tls {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("grpc-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let (certificate, key) = (
                folder.appendingPathComponent("cert.pem").path, folder.appendingPathComponent("key.pem").path
            )
            let made = try ImagoTesting.run(
                "/usr/bin/openssl",
                [
                    "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
                    key, "-out", certificate, "-subj", "/CN=127.0.0.1", "-days", "1", "-addext",
                    "subjectAltName=IP:127.0.0.1",
                ], standardError: .nullDevice)
            guard made.status == 0 else { throw StartFailure(description: "openssl could not make a certificate") }
            arguments += [certificate, key]
            self.folder = folder
            certificatePath = certificate
        } else {
            folder = nil
            certificatePath = nil
        }
        let probe = try ImagoTesting.run(python, ["-c", "import grpc"], standardError: .nullDevice)
        guard probe.status == 0 else {
            throw StartFailure(
                description: "\(python) cannot import grpc: scripts/install-deps.sh installs python3-grpcio")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = Pipe()  // open until the process is killed: the script waits on it
        process.standardError = FileHandle.nullDevice
        let port = Locked<Int?>(nil)
        let pending = Locked(Data())
        let calls = self.calls
        output.fileHandleForReading.readabilityHandler = { handle in
            let chunk = handle.availableData
            let lines: [Data] = pending.withLock { buffer in
                buffer.append(chunk)
                var lines: [Data] = []
                while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    lines.append(buffer[buffer.startIndex..<newline])
                    buffer.removeSubrange(buffer.startIndex...newline)
                }
                return lines
            }
            for line in lines {
                if let call = try? JSONDecoder().decode(Call.self, from: line) {
                    calls.withLock { $0.append(call) }
                } else if let started = try? JSONDecoder().decode([String: Int].self, from: line) {
                    port.withLock { $0 = started["port"] }
                }
            }
            if chunk.isEmpty { handle.readabilityHandler = nil }
        }
        try process.run()
        self.process = Locked(process)
        let deadline = Date().addingTimeInterval(20)
        while port.value == nil {
            guard process.isRunning, Date() < deadline else {
                Glibc.kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                throw StartFailure(description: "the gRPC collector did not start within 20 s")
            }
            usleep(10_000)
        }
        self.port = port.value ?? 0
    }

    deinit {
        stop()
        if let folder { try? FileManager.default.removeItem(at: folder) }
    }

    /// The collector's base URL, `http://127.0.0.1:PORT` (`https` with TLS).
    var url: URL { URL(string: "\(certificatePath == nil ? "http" : "https")://127.0.0.1:\(port)")! }

    /// The calls taken so far, in order, once `condition` holds for them or 5 s have passed: a call's record is
    /// printed before its answer, and read from the pipe a moment later.
    func received(when condition: ([Call]) -> Bool) async -> [Call] {
        _ = await ImagoTesting.eventually(timeout: .seconds(5)) { condition(calls.value) }
        return calls.value
    }

    /// The calls taken so far, once there are at least `count` (or 5 s have passed).
    func received(atLeast count: Int) async -> [Call] { await received { $0.count >= count } }

    /// Stops the server (SIGKILL to its pid) and waits for it. Idempotent.
    func stop() {
        guard
            let process = process.withLock({ current in
                defer { current = nil }; return current
            })
        else { return }
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}
