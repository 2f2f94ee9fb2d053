import Foundation
import ImagoTesting
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The loopback test server against Python's threading HTTP server (HTTP/1.1 keep-alive, backlog 128), both
/// serving 500 × 200 KB to the same clients at concurrency 6: curl --parallel (a fast client, so the server shows)
/// and URLSession (the client the library uses, which should be the limit).
enum LoopbackServerBench {
    static let requestCount = 500
    static let bodySize = 200 * 1024

    static func run() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("imago-bench-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let body = Data((0..<bodySize).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        try body.write(to: folder.appendingPathComponent("img.bin"))

        let server = try LoopbackServer()
        defer { server.stop() }
        server.setRoute("/files", .directory(folder))
        let python = try PythonServer(folder: folder)
        defer { python.stop() }
        let ours = (0..<requestCount).map { server.url(for: "/files/img.bin?\($0)") }
        let theirs = (0..<requestCount).map { URL(string: "http://127.0.0.1:\(python.port)/img.bin?\($0)")! }

        try compare(
            "server: 500×200KB c=6 via curl --parallel, wall", unit: "s", goal: 1.0, peerName: "python http.server",
            imago: { try curl(ours) }, peer: { try curl(theirs) })
        try compare(
            "server: 500×200KB c=6 via curl, server CPU", unit: "s", goal: 1.0, peerName: "python http.server",
            imago: {
                let before = cpuSeconds()
                _ = try curl(ours)
                return cpuSeconds() - before
            },
            peer: {
                let before = try python.cpuSeconds()
                _ = try curl(theirs)
                return try python.cpuSeconds() - before
            })
        try compare(
            "server: start listening, then stop", unit: "ms", goal: 1.0, peerName: "python http.server",
            imago: { try time { try LoopbackServer().stop() } * 1000 },
            peer: { try time { try PythonServer(folder: folder).stop() } * 1000 })
        let session = makeSession()
        defer { session.invalidateAndCancel() }
        try compare(
            "server: 500×200KB c=6 via URLSession, wall", unit: "s", goal: 1.1, peerName: "python http.server",
            imago: { try fetchAll(ours, session) }, peer: { try fetchAll(theirs, session) })
    }

    /// CPU seconds (user + system) used by this process so far: the server's threads, as curl runs apart.
    private static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// Wall time for curl to fetch `urls` six at a time (reusing connections).
    private static func curl(_ urls: [URL]) throws -> Double {
        let config = FileManager.default.temporaryDirectory.appendingPathComponent("imago-curl-\(getpid()).txt")
        try urls.map { "url = \"\($0.absoluteString)\"\noutput = \"/dev/null\"\n" }.joined()
            .write(to: config, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: config) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = ["--parallel", "--parallel-max", "6", "--silent", "--fail", "--config", config.path]
        return try time {
            try process.run()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else { throw BenchError.curlFailed(process.terminationStatus) }
        }
    }

    private static func makeSession() -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = 6
        configuration.urlCache = nil
        return URLSession(configuration: configuration)
    }

    /// Wall time for URLSession to fetch `urls`, at most six in flight (its per-host limit).
    private static func fetchAll(_ urls: [URL], _ session: URLSession) throws -> Double {
        let failures = Failures()
        let group = DispatchGroup()
        let seconds = time {
            for url in urls {
                group.enter()
                session.dataTask(with: url) { data, _, error in
                    if error != nil || data?.count != bodySize { failures.count.withLock { $0 += 1 } }
                    group.leave()
                }.resume()
            }
            group.wait()
        }
        let failed = failures.count.withLock { $0 }
        guard failed == 0 else { throw BenchError.requestsFailed(failed) }
        return seconds
    }

    private final class Failures: Sendable {
        let count = Mutex(0)
    }

    enum BenchError: Error {
        case curlFailed(Int32)
        case requestsFailed(Int)
        case pythonDidNotStart
    }

    /// `python3` running a ThreadingHTTPServer (HTTP/1.1, backlog 128) over `folder` on a free port.
    private final class PythonServer {
        let process = Process()
        let port: Int

        init(folder: URL) throws {
            let script = """
                import functools, http.server, sys
                class Handler(http.server.SimpleHTTPRequestHandler):
                    protocol_version = "HTTP/1.1"
                    def log_message(self, *args): pass
                class Server(http.server.ThreadingHTTPServer):
                    request_queue_size = 128
                    daemon_threads = True
                server = Server(("127.0.0.1", 0), functools.partial(Handler, directory=sys.argv[1]))
                print(server.server_address[1], flush=True)
                server.serve_forever()
                """
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", "-c", script, folder.path]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            var line = Data()
            while let byte = try output.fileHandleForReading.read(upToCount: 1), !byte.isEmpty, byte != Data("\n".utf8)
            {
                line += byte
            }
            guard let port = Int(String(decoding: line, as: UTF8.self)) else { throw BenchError.pythonDidNotStart }
            self.port = port
        }

        /// CPU seconds (user + system) the Python process has used, from /proc (10 ms ticks).
        func cpuSeconds() throws -> Double {
            let stat = try String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8)
            // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
            let fields = stat[(stat.lastIndex(of: ")") ?? stat.startIndex)...].split(separator: " ")
            guard fields.count > 13, let user = Double(fields[12]), let system = Double(fields[13]) else {
                throw BenchError.pythonDidNotStart
            }
            return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
        }

        func stop() {
            process.terminate()
            process.waitUntilExit()
        }
    }
}
