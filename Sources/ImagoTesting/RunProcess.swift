import Foundation

extension ImagoTesting {
    /// What a child process printed and how it ended (``run(_:_:standardError:)``).
    public struct ProcessOutput: Sendable {
        /// The exit status (or the signal number when a signal ended it).
        public var status: Int32
        /// Everything it wrote to standard output, decoded as UTF-8.
        public var output: String

        /// ``output`` without leading and trailing white space and newlines.
        public var trimmedOutput: String { output.trimmingCharacters(in: .whitespacesAndNewlines) }
    }

    /// Runs `executable` with `arguments` to completion, its standard input empty, and returns its status and
    /// standard output. `standardError` receives its standard error (default `nil`: this process's own; pass
    /// `FileHandle.nullDevice` to drop it).
    ///
    /// ```swift
    /// let keys = try ImagoTesting.run("/usr/bin/redis-cli", ["-p", "6379", "DBSIZE"]).trimmedOutput
    /// ```
    public static func run(
        _ executable: String, _ arguments: [String], standardError: FileHandle? = nil
    ) throws -> ProcessOutput {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let stdout = Pipe()
        process.standardOutput = stdout
        process.standardInput = FileHandle.nullDevice
        if let standardError { process.standardError = standardError }
        try process.run()
        let data = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return ProcessOutput(status: process.terminationStatus, output: String(decoding: data, as: UTF8.self))
    }
}
