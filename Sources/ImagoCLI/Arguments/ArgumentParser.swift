import Foundation

/// One option a command accepts, as a row of the command's table.
package struct OptionSpec: Sendable {
    /// The long name with its dashes, e.g. `--max-size`.
    package let name: String
    /// A one-letter alias with its dash, e.g. `-j`, or nil.
    let short: String?
    /// The value's placeholder in help text (`WxH`), or nil for a flag that takes no value.
    let valueName: String?
    /// Whether the option may be given more than once (values accumulate).
    let isRepeatable: Bool
    /// One line of help.
    let help: String
    /// For a repeatable option, the option whose value separates its values in an environment variable instead of a
    /// comma (imgproxy's `IMGPROXY_PRESETS_SEPARATOR`), or nil for commas.
    let environmentSeparator: String?

    package init(
        _ name: String, short: String? = nil, value: String? = nil, repeatable: Bool = false,
        environmentSeparator: String? = nil, help: String
    ) {
        self.name = name
        self.short = short
        self.valueName = value
        self.isRepeatable = repeatable
        self.environmentSeparator = environmentSeparator
        self.help = help
    }

    var takesValue: Bool { valueName != nil }
}

/// What a command line said, once checked against the command's table.
package struct ParsedArguments: Sendable {
    /// Values of options that take one, by long name (in the order given).
    var values: [String: [String]] = [:]
    /// Flags that were given, by long name.
    var flags: Set<String> = []
    /// Arguments that are not options, in order.
    var positionals: [String] = []

    /// Nothing given.
    package init() {}

    /// The last value given for `name`, if any.
    func value(_ name: String) -> String? { values[name]?.last }

    /// Whether the flag `name` was given.
    func has(_ name: String) -> Bool { flags.contains(name) }

    /// The whole number given for the option `name` (its last value), or nil when it was not given.
    ///
    /// - Throws: ``UsageError`` naming the option when the value is not a whole number within `range`.
    func integer(_ name: String, in range: ClosedRange<Int>) throws -> Int? {
        try value(name).map { try parseInteger($0, option: name, range: range) }
    }

    /// Throws unless `options` (flags or options with a value) were all left out: they only mean something with
    /// `required`, which was not given (`option '--s3-region' needs --s3`).
    ///
    /// - Throws: ``UsageError`` naming the first option given.
    func refuse(_ options: [String], without required: String) throws {
        for option in options where has(option) || value(option) != nil {
            throw UsageError("option '\(option)' needs \(required)")
        }
    }
}

extension ParsedArguments {
    /// The environment variable that gives `option` when the command line does not: `prefix` and its long name
    /// in capitals, `-` as `_` (`--max-pixels` → `IMAGO_MAX_PIXELS`).
    package static func environmentName(of option: OptionSpec, prefix: String) -> String {
        prefix + option.name.dropFirst(2).uppercased().replacingOccurrences(of: "-", with: "_")
    }

    /// These arguments with each of `options` the command line leaves out taken from `environment`, as twelve-factor
    /// deployments configure a server (``environmentName(of:prefix:)``). A value is taken as given; a repeatable
    /// option's is split at commas, or at the value of its ``OptionSpec/environmentSeparator`` option (from the
    /// command line, else the environment) when that is given and not empty; a flag is on for `1`, `true`, `yes` or
    /// `on` and off for `0`, `false`, `no`, `off` (any case). Empty variables are ignored, and `--help` is never
    /// read.
    ///
    /// - Throws: ``UsageError`` naming the variable when a flag's value is none of those.
    package func fillingIn(
        from environment: [String: String], prefix: String, options: [OptionSpec]
    ) throws -> ParsedArguments {
        var filled = self
        for option in options where option.name != Command.helpOption.name {
            let name = Self.environmentName(of: option, prefix: prefix)
            guard let text = environment[name], !text.isEmpty, values[option.name] == nil,
                !flags.contains(option.name)
            else { continue }
            if !option.takesValue {
                switch text.lowercased() {
                case "1", "true", "yes", "on": filled.flags.insert(option.name)
                case "0", "false", "no", "off": break
                default: throw UsageError("environment variable \(name) expects true or false (got '\(text)')")
                }
            } else if option.isRepeatable {
                var separator = ","
                if let named = option.environmentSeparator, let spec = options.first(where: { $0.name == named }),
                    let given = value(named) ?? environment[Self.environmentName(of: spec, prefix: prefix)],
                    !given.isEmpty
                {
                    separator = given
                }
                let parts = text.components(separatedBy: separator).map { $0.trimmingCharacters(in: .whitespaces) }
                filled.values[option.name] = parts.filter { !$0.isEmpty }
            } else {
                filled.values[option.name] = [text]
            }
        }
        return filled
    }
}

/// A mistake in how the tool was called: exit status 2, a one-line message and the usage.
package struct UsageError: Error, Sendable, Equatable, CustomStringConvertible {
    let message: String
    package var description: String { message }
    package init(_ message: String) { self.message = message }
}

/// Parses `arguments` against `options`: `--name value`, `--name=value`, `-x value`, flags, `--` ends options.
/// Unknown options, missing values and values given to flags are usage errors.
package func parseArguments(_ arguments: [String], options: [OptionSpec]) throws -> ParsedArguments {
    var parsed = ParsedArguments()
    var index = 0
    var optionsEnded = false
    func spec(for token: String) -> OptionSpec? {
        options.first { $0.name == token || ($0.short != nil && $0.short == token) }
    }
    while index < arguments.count {
        let token = arguments[index]
        index += 1
        if optionsEnded || !token.hasPrefix("-") || token == "-" {
            parsed.positionals.append(token)
            continue
        }
        if token == "--" {
            optionsEnded = true
            continue
        }
        var name = token
        var inlineValue: String?
        if token.hasPrefix("--"), let eq = token.firstIndex(of: "=") {
            name = String(token[..<eq])
            inlineValue = String(token[token.index(after: eq)...])
        }
        guard let option = spec(for: name) else { throw UsageError("unknown option '\(name)'") }
        if option.takesValue {
            let value: String
            if let inlineValue {
                value = inlineValue
            } else {
                guard index < arguments.count else { throw UsageError("option '\(option.name)' needs a value") }
                value = arguments[index]
                index += 1
            }
            if !option.isRepeatable, parsed.values[option.name] != nil {
                throw UsageError("option '\(option.name)' given more than once")
            }
            parsed.values[option.name, default: []].append(value)
        } else {
            if inlineValue != nil { throw UsageError("option '\(option.name)' takes no value") }
            parsed.flags.insert(option.name)
        }
    }
    return parsed
}

/// Parses `WxH` (e.g. `256x256`) into a positive size.
package func parsePixelSize(_ text: String, option: String) throws -> (width: Int, height: Int) {
    let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
    guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), w > 0, h > 0, w <= 1 << 20, h <= 1 << 20
    else {
        throw UsageError("option '\(option)' expects WIDTHxHEIGHT with positive numbers, e.g. 256x256 (got '\(text)')")
    }
    return (w, h)
}

/// Parses a byte count: a plain number or one with K, M, G, KB, MB, GB (binary multiples: 1K = 1024), case-insensitive.
package func parseByteCount(_ text: String, option: String) throws -> Int {
    let upper = text.uppercased().trimmingCharacters(in: .whitespaces)
    let units: [(String, Int)] = [
        ("KB", 1 << 10), ("MB", 1 << 20), ("GB", 1 << 30), ("K", 1 << 10), ("M", 1 << 20), ("G", 1 << 30), ("B", 1),
    ]
    var number = upper
    var multiplier = 1
    for (suffix, m) in units where upper.hasSuffix(suffix) {
        number = String(upper.dropLast(suffix.count))
        multiplier = m
        break
    }
    guard let value = Double(number), value >= 0, value.isFinite else {
        throw UsageError("option '\(option)' expects a size such as 500M, 2GB or 1048576 (got '\(text)')")
    }
    let bytes = value * Double(multiplier)
    guard bytes < Double(Int.max / 2) else { throw UsageError("option '\(option)': size '\(text)' is too large") }
    return Int(bytes)
}

/// Parses a positive integer option value within `range`.
package func parseInteger(_ text: String, option: String, range: ClosedRange<Int>) throws -> Int {
    try parseInteger(text, variable: "option '\(option)'", range: range)
}

/// Parses a whole number within `range` that `variable` gives (an environment variable, or a phrase naming an
/// option); a ``UsageError`` names it otherwise.
package func parseInteger(_ text: String, variable: String, range: ClosedRange<Int>) throws -> Int {
    guard let v = Int(text), range.contains(v) else {
        throw UsageError(
            "\(variable) expects a whole number from \(range.lowerBound) to \(range.upperBound) (got '\(text)')")
    }
    return v
}
