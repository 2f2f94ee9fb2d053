import Foundation
import ImagoCore

#if canImport(Glibc)
    import Glibc
#endif

/// A real `redis-server` for the shared-tier tests and benchmarks: on a unix socket (default) or a free loopback
/// port, no persistence (`--save "" --appendonly no`), optionally with a password (`--requirepass`).
///
/// Started by `init`, stopped by ``stop()`` or killed by ``kill()`` (by its pid), started again on the same
/// socket or port by ``restart()``; stopped and its folder removed on deinit.
public final class RedisServer: Sendable {
    /// How clients reach it: the URL ImagoRedis parses (`unix:///…` or `redis://127.0.0.1:PORT`, with the password).
    public let url: String
    /// The socket path (unix) or `nil`.
    public let socketPath: String?
    /// The TCP port (loopback) or `nil`.
    public let port: Int?
    /// The password, if any.
    public let password: String?
    private let folder: URL
    private let server: String
    private let process: Locked<Process?>

    /// Why the server could not be started.
    public enum ServerError: Error, CustomStringConvertible {
        /// `redis-server` or `redis-cli` is not installed at the path given.
        case missingTool(String)
        /// It exited or did not answer in time; carries its log.
        case didNotStart(String)

        /// A sentence saying what failed.
        public var description: String {
            switch self {
            case .missingTool(let path): "\(path) is missing (scripts/install-deps.sh installs redis-server)"
            case .didNotStart(let log): "redis-server did not start: \(log)"
            }
        }
    }

    /// Starts a server: on a unix socket unless `tcp`, with `password` if given.
    public init(tcp: Bool = false, password: String? = nil, server: String = "/usr/bin/redis-server") throws {
        for tool in [server, "/usr/bin/redis-cli"] where !FileManager.default.isExecutableFile(atPath: tool) {
            throw ServerError.missingTool(tool)
        }
        self.server = server
        self.password = password
        folder = URL(fileURLWithPath: "/tmp").appendingPathComponent("redis-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        if tcp {
            let port = try LoopbackPort.free()
            self.port = port
            socketPath = nil
            url = "redis://" + (password.map { ":\($0)@" } ?? "") + "127.0.0.1:\(port)/0"
        } else {
            port = nil
            let path = folder.appendingPathComponent("redis.sock").path
            socketPath = path
            url = "unix://\(path)" + (password.map { "?password=\($0)" } ?? "")
        }
        process = Locked(nil)
        try start()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: folder)
    }

    /// The server's process id while it runs.
    public var pid: Int32? { process.withLock { $0?.isRunning == true ? $0?.processIdentifier : nil } }

    /// Starts the server again (after ``stop()`` or ``kill()``) on the same socket or port.
    public func restart() throws { try start() }

    /// Stops the server (SIGKILL to its pid, then waits: nothing is persisted, and a child of a test process may
    /// inherit a signal mask that blocks SIGTERM). Idempotent; the folder is kept for a restart until deinit.
    public func stop() { signal(SIGKILL) }

    /// Kills the server at once (SIGKILL to its pid) and waits for it to exit.
    public func kill() { signal(SIGKILL) }

    /// Runs `redis-cli` against the server with `arguments`; returns its standard output.
    @discardableResult
    public func cli(_ arguments: [String]) throws -> String {
        var args: [String] = socketPath.map { ["-s", $0] } ?? ["-h", "127.0.0.1", "-p", "\(port ?? 0)"]
        if let password { args += ["-a", password, "--no-auth-warning"] }
        return try ImagoTesting.run("/usr/bin/redis-cli", args + arguments, standardError: .nullDevice).trimmedOutput
    }

    private func start() throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: server)
        var args = ["--save", "", "--appendonly", "no", "--dir", folder.path, "--daemonize", "no"]
        if let socketPath {
            args += ["--port", "0", "--unixsocket", socketPath, "--unixsocketperm", "700"]
        } else if let port {
            args += ["--port", "\(port)", "--bind", "127.0.0.1"]
        }
        if let password { args += ["--requirepass", password] }
        p.arguments = args
        let log = folder.appendingPathComponent("redis.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        p.standardOutput = handle
        p.standardError = handle
        try p.run()
        process.withLock { $0 = p }
        let deadline = Date().addingTimeInterval(10)
        while (try? cli(["PING"]))?.isEmpty != false {
            guard p.isRunning, Date() < deadline else {
                signal(SIGKILL)
                throw ServerError.didNotStart((try? String(contentsOf: log, encoding: .utf8)) ?? "")
            }
            usleep(10_000)
        }
    }

    private func signal(_ number: Int32) {
        guard let p = process.withLock({ $0 }), p.isRunning else { return }
        Glibc.kill(p.processIdentifier, number)
        p.waitUntilExit()
    }
}

/// Free loopback ports for servers started by tests.
public enum LoopbackPort {
    /// A port the kernel says is free right now (bound to port 0, then released).
    public static func free() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RedisServer.ServerError.didNotStart("socket() failed") }
        defer { close(fd) }
        guard let port = bindToLoopback(fd) else { throw RedisServer.ServerError.didNotStart("bind() failed") }
        return port
    }

    /// Binds the IPv4 socket `fd` to `127.0.0.1` on a port the kernel chooses, and returns that port; `nil` when
    /// binding fails.
    public static func bindToLoopback(_ fd: Int32) -> Int? {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        return bound ? Int(UInt16(bigEndian: address.sin_port)) : nil
    }
}
