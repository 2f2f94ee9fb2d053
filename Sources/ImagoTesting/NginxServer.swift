import Foundation

/// A real nginx on 127.0.0.1 for HTTP/2 tests and network benchmarks: serves the files of `root` over plain
/// HTTP/1.1, over TLS with HTTP/2 and over TLS with HTTP/1.1 only, each on a free port, with a certificate made
/// for the run by `openssl` (self-signed, for `127.0.0.1`; trust it through ``certificatePath``). A fourth port,
/// ``mutualTLSURL``, asks for a client certificate signed by a CA made for the run (``clientCertificatePath``,
/// ``clientKeyPath``) and answers every request to it, any method, 200 with an empty body. The access log records
/// the connection serial number of every request, so tests can count connections.
///
/// Started by `init`, stopped by ``stop()`` (by its pid); everything lives in a temporary folder removed on stop.
public final class NginxServer: Sendable {
    /// `http://127.0.0.1:PORT` (HTTP/1.1).
    public let plainURL: URL
    /// `https://127.0.0.1:PORT` with HTTP/2 offered by ALPN.
    public let http2URL: URL
    /// `https://127.0.0.1:PORT` with HTTP/1.1 only.
    public let http1TLSURL: URL
    /// `https://127.0.0.1:PORT` that refuses clients without a certificate of its client CA (HTTP 400), and
    /// answers 200 to everything else.
    public let mutualTLSURL: URL
    /// The PEM certificate the TLS ports present (also the CA bundle that trusts them).
    public let certificatePath: String
    /// A PEM client certificate ``mutualTLSURL`` accepts.
    public let clientCertificatePath: String
    /// Its PEM private key.
    public let clientKeyPath: String
    private let folder: URL
    private let process: Process

    /// Why nginx could not be started.
    public enum ServerError: Error, CustomStringConvertible {
        /// nginx or openssl is not installed at the path given.
        case missingTool(String)
        /// A tool exited with a failure status.
        case toolFailed(String, Int32)
        /// nginx exited or did not listen in time; carries its error log.
        case didNotStart(String)

        /// A sentence saying what failed.
        public var description: String {
            switch self {
            case .missingTool(let path): "\(path) is missing (make test installs nginx and openssl)"
            case .toolFailed(let tool, let status): "\(tool) failed with status \(status)"
            case .didNotStart(let log): "nginx did not start: \(log)"
            }
        }
    }

    /// Starts nginx serving `root`.
    public init(root: URL, nginx: String = "/usr/sbin/nginx", openssl: String = "/usr/bin/openssl") throws {
        for tool in [nginx, openssl] where !FileManager.default.isExecutableFile(atPath: tool) {
            throw ServerError.missingTool(tool)
        }
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("nginx-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("tmp"), withIntermediateDirectories: true)
        let key = folder.appendingPathComponent("key.pem").path
        certificatePath = folder.appendingPathComponent("cert.pem").path
        try Self.run(
            openssl,
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key,
                "-out", certificatePath, "-subj", "/CN=127.0.0.1", "-days", "1", "-addext",
                "subjectAltName=IP:127.0.0.1,DNS:localhost",
            ])
        // A client CA and a client certificate it signs, for the mutual-TLS port.
        let clientCA = folder.appendingPathComponent("client-ca.pem").path
        let clientCAKey = folder.appendingPathComponent("client-ca-key.pem").path
        let request = folder.appendingPathComponent("client.csr").path
        clientCertificatePath = folder.appendingPathComponent("client.pem").path
        clientKeyPath = folder.appendingPathComponent("client-key.pem").path
        try Self.run(
            openssl,
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
                clientCAKey, "-out", clientCA, "-subj", "/CN=imago test client CA", "-days", "1",
            ])
        try Self.run(
            openssl,
            [
                "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
                clientKeyPath, "-out", request, "-subj", "/CN=imago test client",
            ])
        try Self.run(
            openssl,
            [
                "x509", "-req", "-in", request, "-CA", clientCA, "-CAkey", clientCAKey, "-CAcreateserial", "-out",
                clientCertificatePath, "-days", "1",
            ])
        let ports = try (0..<4).map { _ in try Self.freePort() }
        let dir = folder.path
        let config = """
            worker_processes 1;
            daemon off;
            master_process on;
            user root;
            pid \(dir)/nginx.pid;
            error_log \(dir)/error.log warn;
            events { worker_connections 1024; }
            http {
              log_format conn '$connection $server_port $request $status';
              access_log \(dir)/access.log conn;
              sendfile on;
              keepalive_requests 100000;
              http2_max_concurrent_streams 128;
              client_body_temp_path \(dir)/tmp;
              proxy_temp_path \(dir)/tmp;
              fastcgi_temp_path \(dir)/tmp;
              uwsgi_temp_path \(dir)/tmp;
              scgi_temp_path \(dir)/tmp;
              types { image/jpeg jpg; image/png png; image/webp webp; image/gif gif; }
              ssl_certificate \(certificatePath);
              ssl_certificate_key \(key);
              server { listen 127.0.0.1:\(ports[0]) backlog=1024; root \(root.path); }
              server { listen 127.0.0.1:\(ports[1]) ssl http2 backlog=1024; root \(root.path); }
              server { listen 127.0.0.1:\(ports[2]) ssl backlog=1024; root \(root.path); }
              server {
                listen 127.0.0.1:\(ports[3]) ssl backlog=1024;
                ssl_client_certificate \(clientCA);
                ssl_verify_client on;
                location / { return 200; }
              }
            }
            """
        let configPath = folder.appendingPathComponent("nginx.conf").path
        try config.write(toFile: configPath, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: nginx)
        process.arguments = ["-c", configPath, "-p", dir, "-e", "\(dir)/error.log"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        plainURL = URL(string: "http://127.0.0.1:\(ports[0])")!
        http2URL = URL(string: "https://127.0.0.1:\(ports[1])")!
        http1TLSURL = URL(string: "https://127.0.0.1:\(ports[2])")!
        mutualTLSURL = URL(string: "https://127.0.0.1:\(ports[3])")!
        // Ready once every port accepts a connection.
        let deadline = Date().addingTimeInterval(20)
        while !ports.allSatisfy(Self.accepts) {
            guard process.isRunning, Date() < deadline else {
                let log = (try? String(contentsOfFile: "\(dir)/error.log", encoding: .utf8)) ?? ""
                stop()
                throw ServerError.didNotStart(log)
            }
            usleep(20_000)
        }
    }

    deinit { stop() }

    /// Stops nginx (SIGTERM to its pid, then waits) and removes its folder. Idempotent.
    public func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: folder)
    }

    /// The access log's lines: `connection port request status` per request.
    public var accessLog: [String] {
        let text = (try? String(contentsOf: folder.appendingPathComponent("access.log"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map(String.init)
    }

    /// The number of distinct connections that carried requests to `port`, from the access log.
    public func connectionCount(port: Int) -> Int {
        Set(
            accessLog.compactMap { line -> Substring? in
                let fields = line.split(separator: " ")
                guard fields.count > 1, Int(fields[1]) == port else { return nil }
                return fields[0]
            }
        ).count
    }

    /// The number of requests served on `port`, from the access log.
    public func requestCount(port: Int) -> Int {
        accessLog.count { $0.split(separator: " ").dropFirst().first.flatMap { Int($0) } == port }
    }

    private static func run(_ tool: String, _ arguments: [String]) throws {
        let status = try ImagoTesting.run(tool, arguments, standardError: .nullDevice).status
        guard status == 0 else { throw ServerError.toolFailed(tool, status) }
    }

    /// A port the kernel says is free right now.
    private static func freePort() throws -> Int { try LoopbackPort.free() }

    private static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}
