import Foundation
import ImagoTesting

/// The soak's loopback server: 3,000 URLs of three real images (11.6 KB PNG, 184 B PNG, 331 B JPEG), in this
/// process or in a child (`imago-bench --child soak-server`, which prints its base URL, then serves until its
/// standard input closes).
final class SoakServer {
    static let urlCount = 3_000

    /// The server when it runs in this process; nil when a child runs it.
    let inProcess: LoopbackServer?
    private let child: Process?
    private let childInput: Pipe?
    /// `http://127.0.0.1:<port>`.
    let baseURL: URL

    init(inProcess: Bool) throws {
        if inProcess {
            let server = try Self.makeServer()
            (self.inProcess, child, childInput, baseURL) = (server, nil, nil, server.baseURL)
            return
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: selfExecutable())
        process.arguments = ["--child", "soak-server"]
        let (input, output) = (Pipe(), Pipe())
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        // The child's first line is its base URL.
        var line = Data()
        while let byte = try output.fileHandleForReading.read(upToCount: 1), let first = byte.first, first != 10 {
            line.append(first)
        }
        guard let url = URL(string: String(decoding: line, as: UTF8.self)), url.port != nil else {
            process.terminate()
            throw PeerProcessError.badOutput(
                command: "imago-bench --child soak-server", output: String(decoding: line, as: UTF8.self))
        }
        (self.inProcess, child, childInput, baseURL) = (nil, process, input, url)
    }

    /// The URL of `path` (with its leading `/`) on the server.
    func url(for path: String) -> URL {
        URL(string: baseURL.absoluteString + path) ?? baseURL.appendingPathComponent(path)
    }

    /// Requests the server answered; nil when a child process served them.
    var requestCount: Int? {
        inProcess.map { $0.statistics.requestCounts.values.reduce(0, +) }
    }

    func stop() {
        inProcess?.stop()
        if let child, let childInput {
            try? childInput.fileHandleForWriting.close()
            child.waitUntilExit()
        }
    }

    private static func makeServer() throws -> LoopbackServer {
        let server = try LoopbackServer()
        let payloads = try [
            "formats/TestImage.png", "pngsuite/png/basn6a08.png", "jpeg/reference/grayscale_square.jpg",
        ]
        .map { try DecodeBench.corpus($0) }
        for i in 0..<urlCount {
            let data = payloads[i % payloads.count]
            server.setRoute("/img/\(i)", .bytes(data, contentType: i % 3 == 2 ? "image/jpeg" : "image/png"))
        }
        return server
    }

    /// `imago-bench --child soak-server`: serves the soak's routes, prints the base URL, and stops when standard
    /// input reaches its end (the parent closed it or died).
    static func serveAsChild() -> Int32 {
        do {
            let server = try makeServer()
            // Unbuffered, so that the parent reads the line at once.
            FileHandle.standardOutput.write(Data((server.baseURL.absoluteString + "\n").utf8))
            _ = FileHandle.standardInput.readDataToEndOfFile()
            server.stop()
            return 0
        } catch {
            FileHandle.standardError.write(Data("imago-bench --child soak-server: \(error)\n".utf8))
            return 1
        }
    }
}
