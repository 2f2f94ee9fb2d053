import Foundation
import Imago

/// The `imago` command-line tool as a library, so tests drive it in-process.
///
/// ```swift
/// let (console, output) = Console.capturing()
/// let status = await CLI.run(["decode", "photo.jpg", "--json"], console: console)
/// ```
public enum CLI {
    /// The tool's version, printed by `imago --version`: the library's (``ImagoVersion/current``).
    public static let version = ImagoVersion.current

    /// Every subcommand, in the order `--help` lists them.
    package static let commands: [Command] = [
        DecodeCommand.command,
        FetchCommand.command,
        ShowCommand.command,
        CacheCommand.command,
        DemoCommand.command,
        ServeCommand.command,
    ]

    /// Runs the tool with `arguments` (without the program name) on `console`; returns the exit status:
    /// 0 success, 1 some work failed, 2 bad usage.
    public static func run(_ arguments: [String], console: Console = .standard()) async -> Int32 {
        guard let first = arguments.first else {
            console.printError(usage)
            return 2
        }
        switch first {
        case "-h", "--help", "help":
            if arguments.count > 1, let command = commands.first(where: { $0.name == arguments[1] }) {
                console.write(command.help)
            } else {
                console.write(usage + "\n")
            }
            return 0
        case "--version", "-V":
            console.print("imago \(version)")
            return 0
        case svgRenderCommand:  // not listed: the child `imago serve` draws SVGs in (SVGRendering.childProcess)
            return SVGDecoder.runChild()
        case heifDecodeCommand:  // not listed: the child `imago serve` decodes HEIF in (ChildProcessDecoder)
            return ChildProcessDecoder.runChild(decoding: HEIFDecoder())
        case heicEncodeCommand:  // not listed: the child `imago serve` encodes HEIC in (ChildProcessEncoder)
            return ChildProcessEncoder.runChild(encoding: HEICEncoder())
        default: break
        }
        guard let command = commands.first(where: { $0.name == first }) else {
            console.printError("imago: unknown command '\(first)'\n\n\(usage)")
            return 2
        }
        let rest = Array(arguments.dropFirst())
        let parsed: ParsedArguments
        do {
            parsed = try parseArguments(rest, options: command.options + [Command.helpOption])
        } catch {
            console.printError("imago \(command.name): \(error)\nUsage: imago \(command.name) \(command.synopsis)")
            console.printError("Run 'imago \(command.name) --help' for the options.")
            return 2
        }
        if parsed.has("--help") {
            console.write(command.help)
            return 0
        }
        return await command.run(parsed, console)
    }

    /// The hidden command that draws one SVG for a parent's ``SVGRendering/childProcess(executable:arguments:timeout:)``.
    static let svgRenderCommand = "svg-render"

    /// The hidden command that decodes one HEIF image for a parent's ``ChildProcessDecoder``.
    static let heifDecodeCommand = "heif-decode"

    /// The hidden command that encodes HEIC images for a parent's ``ChildProcessEncoder``.
    static let heicEncodeCommand = "heic-encode"

    /// The top-level usage text.
    static var usage: String {
        var text = "Usage: imago COMMAND [OPTIONS]\n\nImago loads, decodes, resizes and caches images.\n\nCommands:\n"
        let width = commands.map(\.name.count).max() ?? 0
        for command in commands {
            text +=
                "  " + command.name.padding(toLength: width + 2, withPad: " ", startingAt: 0) + command.summary + "\n"
        }
        text += "\nRun 'imago COMMAND --help' for a command's options; 'imago --version' for the version."
        return text
    }
}
