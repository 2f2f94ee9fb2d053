import Foundation
import ImagoCore

#if canImport(Glibc)
    import Glibc
#endif

/// Where the CLI writes, and what it knows about the terminal it writes to.
///
/// `Console.standard()` writes to the process's stdout and stderr; tests use `Console.capturing(…)` to read
/// what a command printed, in-process.
public final class Console: Sendable {
    private let writeOut: @Sendable (String) -> Void
    private let writeErr: @Sendable (String) -> Void
    /// Whether stdout is a terminal (then progress displays and colour are used; otherwise plain lines / JSON).
    public let isTerminal: Bool
    /// The environment variables the CLI consults (`NO_COLOR`, `COLORTERM`, `COLUMNS`, `XDG_CACHE_HOME`, `HOME`).
    public let environment: [String: String]
    /// Terminal width in columns (from the terminal, else `COLUMNS`, else 80).
    public let width: Int
    /// The file descriptor a command reads for a file named `-`. Default the process's standard input.
    public let standardInput: Int32
    /// The file descriptor ``write(_:)`` and ``print(_:)`` end up on, when they do (the process's standard output
    /// for `Console.standard()`); `nil` by default, for output that goes elsewhere. `imago serve` writes its access
    /// log to it from a thread of its own.
    public let outputDescriptor: Int32?

    /// A console from its parts (used by tests and embedders); `outputDescriptor` default `nil`.
    public init(
        isTerminal: Bool, environment: [String: String], width: Int = 80, standardInput: Int32 = STDIN_FILENO,
        outputDescriptor: Int32? = nil, out: @escaping @Sendable (String) -> Void,
        err: @escaping @Sendable (String) -> Void
    ) {
        self.isTerminal = isTerminal
        self.outputDescriptor = outputDescriptor
        self.environment = environment
        self.width = max(20, width)
        self.standardInput = standardInput
        self.writeOut = out
        self.writeErr = err
    }

    /// The process's own stdout and stderr.
    public static func standard() -> Console {
        let env = ProcessInfo.processInfo.environment
        let tty = isatty(STDOUT_FILENO) == 1
        var columns = Int(env["COLUMNS"] ?? "") ?? 80
        var size = winsize()
        if tty, ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { columns = Int(size.ws_col) }
        return Console(
            isTerminal: tty, environment: env, width: columns, outputDescriptor: STDOUT_FILENO,
            out: { write($0, to: STDOUT_FILENO) }, err: { write($0, to: STDERR_FILENO) })
    }

    /// Writes `text` to `descriptor` whole; a failed write (a reader gone: `EPIPE` where SIGPIPE is ignored) is
    /// dropped, where `FileHandle.write(_:)` would stop the process.
    private static func write(_ text: String, to descriptor: Int32) {
        var text = text
        _ = text.withUTF8 { FileDescriptorWriting.writeAll(descriptor, UnsafeRawBufferPointer($0)) }
    }

    /// A console whose output is collected in memory; read it back with `output.stdout` / `output.stderr`.
    /// `standardInput` is what a file named `-` reads (default the process's standard input).
    public static func capturing(
        isTerminal: Bool = false, environment: [String: String] = [:], width: Int = 80,
        standardInput: Int32 = STDIN_FILENO
    )
        -> (Console, CapturedOutput)
    {
        let captured = CapturedOutput()
        let console = Console(
            isTerminal: isTerminal, environment: environment, width: width, standardInput: standardInput,
            out: { text in captured.state.withLock { $0.out += text } },
            err: { text in captured.state.withLock { $0.err += text } })
        return (console, captured)
    }

    /// Writes `text` to stdout as is.
    public func write(_ text: String) { writeOut(text) }
    /// Writes `line` and a newline to stdout.
    public func print(_ line: String) { writeOut(line + "\n") }
    /// Writes `line` and a newline to stderr.
    public func printError(_ line: String) { writeErr(line + "\n") }

    /// Whether to use ANSI colour and cursor codes: only on a terminal, and never when `NO_COLOR` is set.
    public var usesEscapeCodes: Bool { isTerminal && (environment["NO_COLOR"] ?? "").isEmpty }

    /// Whether the terminal announces 24-bit colour (`COLORTERM=truecolor` or `24bit`).
    public var supportsTrueColor: Bool {
        let value = (environment["COLORTERM"] ?? "").lowercased()
        return value.contains("truecolor") || value.contains("24bit")
    }
}

/// What a capturing ``Console`` collected.
public final class CapturedOutput: Sendable {
    struct State {
        var out = ""
        var err = ""
    }
    let state = Locked(State())

    /// Everything written to stdout so far.
    public var stdout: String { state.withLock { $0.out } }
    /// Everything written to stderr so far.
    public var stderr: String { state.withLock { $0.err } }
}
