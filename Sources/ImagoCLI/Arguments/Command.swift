import Foundation

/// A subcommand of `imago`: its table of options, its help, and what it does.
package struct Command: Sendable {
    /// The word that selects it (`decode`).
    let name: String
    /// One line for the command list.
    let summary: String
    /// The synopsis after `imago NAME` (`FILE... [--json]`).
    let synopsis: String
    /// Paragraphs after the option list (exit status, examples).
    let details: String
    /// The options it accepts (`--help` is added for every command).
    package let options: [OptionSpec]
    /// Runs it; returns the exit status.
    let run: @Sendable (ParsedArguments, Console) async -> Int32

    /// The full `--help` text.
    var help: String {
        var text = "Usage: imago \(name) \(synopsis)\n\n\(summary)\n"
        let rows = (options + [Command.helpOption]).map { o -> (String, String) in
            var left = o.short.map { "\($0), " } ?? "    "
            left += o.name
            if let v = o.valueName { left += " \(v)" }
            return (left, o.help)
        }
        let width = rows.map(\.0.count).max() ?? 0
        text += "\nOptions:\n"
        for (left, right) in rows {
            text += "  " + left.padding(toLength: width + 2, withPad: " ", startingAt: 0) + right + "\n"
        }
        if !details.isEmpty { text += "\n" + details + "\n" }
        return text
    }

    package static let helpOption = OptionSpec("--help", short: "-h", help: "Show this help.")
}
