import Foundation
import Imago
import ImagoTesting
import Testing

@testable import ImagoCLI

/// A fresh directory under the system temp dir; remove it with `FileManager.default.removeItem`.
func makeScratchDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("imago-cli-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// Small real images, encoded with Imago's own encoders.
enum FetchImages {
    /// A `width`×`height` RGB gradient.
    static func pixels(width: Int, height: Int) throws -> PixelBuffer {
        var bytes = [UInt8](repeating: 255, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let i = (y * width + x) * 4
                bytes[i] = UInt8(x * 255 / max(1, width - 1))
                bytes[i + 1] = UInt8(y * 255 / max(1, height - 1))
                bytes[i + 2] = UInt8((x + y) % 256)
            }
        }
        return try PixelBuffer(width: width, height: height, bytes: bytes)
    }

    static func jpeg(width: Int = 64, height: Int = 48) throws -> Data {
        try ImageEncoderRegistry.makeDefault().encode(pixels(width: width, height: height), as: .jpeg)
    }

    static func png(width: Int = 40, height: Int = 30) throws -> Data {
        try ImageEncoderRegistry.makeDefault().encode(pixels(width: width, height: height), as: .png)
    }

    /// A JPEG's signature followed by garbage: sniffed as JPEG, undecodable.
    static let corruptJPEG = Data([0xFF, 0xD8, 0xFF, 0xE0] + [UInt8](repeating: 0x5A, count: 600))
}

/// What one CLI run printed, and its exit status.
struct CLIRun {
    let status: Int32
    let stdout: String
    let stderr: String

    /// Each stdout line parsed as a JSON object.
    var jsonObjects: [[String: Any]] {
        stdout.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
    }

    /// The JSON object whose "url" is `url`.
    func object(for url: URL) -> [String: Any]? {
        jsonObjects.first { $0["url"] as? String == url.absoluteString }
    }
}

/// Runs `imago ARGS` in-process on a capturing console (not a terminal unless asked).
func runCLI(_ arguments: [String], isTerminal: Bool = false, environment: [String: String] = [:]) async -> CLIRun {
    let (console, output) = Console.capturing(isTerminal: isTerminal, environment: environment, width: 100)
    let status = await CLI.run(arguments, console: console)
    return CLIRun(status: status, stdout: output.stdout, stderr: output.stderr)
}

/// Runs `imago fetch ARGS` in-process with `interrupt` as its Ctrl-C.
func runFetch(_ arguments: [String], interrupt: InterruptTrigger, isTerminal: Bool = false) async throws -> CLIRun {
    let (console, output) = Console.capturing(isTerminal: isTerminal, width: 100)
    let parsed = try parseArguments(arguments, options: FetchCommand.command.options + [Command.helpOption])
    let status = await FetchCommand.run(parsed, console: console, interrupt: interrupt)
    return CLIRun(status: status, stdout: output.stdout, stderr: output.stderr)
}

/// The built `imago` executable (see ``ImagoTesting/builtExecutable(named:environmentVariable:preferringPlainBuild:filePath:)``;
/// `$IMAGO_CLI` overrides).
func imagoExecutableURL(filePath: String = #filePath) -> URL? {
    ImagoTesting.builtExecutable(named: "imago", environmentVariable: "IMAGO_CLI", filePath: filePath)
}

/// A running `imago` child process with its stdout and stderr collected in files.
struct CLIChild {
    let process: Process
    let stdoutFile: URL
    let stderrFile: URL

    /// Starts `executable` with `arguments`; `environment` replaces the inherited one when given.
    init(executable: URL, arguments: [String], scratch: URL, environment: [String: String]? = nil) throws {
        stdoutFile = scratch.appendingPathComponent("stdout-\(UUID().uuidString)")
        stderrFile = scratch.appendingPathComponent("stderr-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: stdoutFile.path, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrFile.path, contents: nil)
        process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        process.standardOutput = try FileHandle(forWritingTo: stdoutFile)
        process.standardError = try FileHandle(forWritingTo: stderrFile)
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    var stdout: String { (try? String(contentsOf: stdoutFile, encoding: .utf8)) ?? "" }
    var stderr: String { (try? String(contentsOf: stderrFile, encoding: .utf8)) ?? "" }

    /// Waits (polling, with a deadline) for the process to exit; kills it when the deadline passes.
    func waitForExit(seconds: Double = 15) async -> CLIRun? {
        let exited = await ImagoTesting.eventually(timeout: .seconds(seconds)) { !process.isRunning }
        guard exited else {
            process.terminate()
            return nil
        }
        return CLIRun(status: process.terminationStatus, stdout: stdout, stderr: stderr)
    }
}
