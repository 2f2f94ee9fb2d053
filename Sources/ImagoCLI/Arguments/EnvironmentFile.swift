import Foundation

/// A file of environment variables in the `.env` form Docker, systemd's `EnvironmentFile` and imgproxy's
/// `IMGPROXY_ENV_LOCAL_FILE_PATH` (godotenv) read, for `imago serve --env-file`:
///
/// ```sh
/// # a comment
/// IMAGO_MAX_AGE=3600
/// export AWS_REGION=eu-west-1          # `export` is allowed, and a comment after a space
/// IMAGO_KEY='943b421c…'                # single quotes: the text as it is
/// IMAGO_WATERMARK_DATA="line one\nline two ${HOME}"   # double quotes: \n \t \" \\ \$ escapes, may span lines
/// CACHE=${XDG_CACHE_HOME:-/var/cache}/imago           # $NAME, ${NAME} and ${NAME:-default} expanded
/// ```
///
/// Names are letters, digits, `_` and `.`, not starting with a digit. Unquoted and double-quoted values expand
/// `$NAME`, `${NAME}` and `${NAME:-default}` from the file's earlier lines, then from `environment`; a name set
/// nowhere expands to nothing (or its default). Single-quoted values are literal. The file is at most
/// ``maximumSize`` bytes.
package struct EnvironmentFile {
    /// What is wrong with a file, with the line it is on (from 1).
    struct Error: Swift.Error, CustomStringConvertible, Equatable {
        /// The line the problem is on, from 1.
        var line: Int
        /// What is wrong there.
        var reason: String
        var description: String { line > 0 ? "line \(line): \(reason)" : reason }
    }

    /// The largest file read: 1 MiB.
    static let maximumSize = 1 << 20

    /// The most text all of a file's expansions may add together: 8 MiB (a file whose lines each repeat the one
    /// before several times would otherwise grow exponentially, to gigabytes in a few lines).
    static let maximumExpansion = 8 << 20

    /// The variables in the order the file sets them (a later line replaces an earlier one of the same name).
    private(set) var variables: [(name: String, value: String)] = []

    /// The variables as a dictionary, the last value of each name.
    var values: [String: String] {
        Dictionary(variables.map { ($0.name, $0.value) }, uniquingKeysWith: { $1 })
    }

    /// Reads `url` (at most ``maximumSize`` bytes), expanding from `environment`.
    ///
    /// - Throws: ``Error`` for what does not parse; Foundation's error for a file that cannot be read.
    init(contentsOf url: URL, environment: [String: String]) throws {
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        let data = try handle.read(upToCount: Self.maximumSize + 1) ?? Data()
        guard data.count <= Self.maximumSize else {
            throw Error(line: 0, reason: "the file is over \(Self.maximumSize) bytes")
        }
        guard let text = String(data: data, encoding: .utf8) else { throw Error(line: 0, reason: "not UTF-8 text") }
        try self.init(parsing: text, environment: environment)
    }

    /// Parses `text`, expanding from `environment`.
    ///
    /// - Throws: ``Error`` naming the line.
    package init(parsing text: String, environment: [String: String]) throws {
        var reader = Reader(Array(text.unicodeScalars))
        var known = environment
        while let (name, value) = try reader.nextAssignment(known: known) {
            variables.append((name, value))
            known[name] = value
        }
    }

    /// Walks the text one assignment at a time.
    private struct Reader {
        let scalars: [Unicode.Scalar]
        var at = 0
        var line = 1
        /// The bytes expansions may still add (``EnvironmentFile/maximumExpansion`` at the start).
        var expansionBudget = EnvironmentFile.maximumExpansion

        init(_ scalars: [Unicode.Scalar]) { self.scalars = scalars }

        var current: Unicode.Scalar? { at < scalars.count ? scalars[at] : nil }

        mutating func advance() {
            if current == "\n" { line += 1 }
            at += 1
        }

        mutating func skipSpaces() {
            while let c = current, c == " " || c == "\t" || c == "\r" { advance() }
        }

        mutating func skipLine() {
            while let c = current, c != "\n" { advance() }
            advance()
        }

        func fail(_ reason: String) -> Error { Error(line: line, reason: reason) }

        static func isNameStart(_ c: Unicode.Scalar) -> Bool { c == "_" || (c.isASCII && c.properties.isAlphabetic) }

        static func isName(_ c: Unicode.Scalar, dots: Bool) -> Bool {
            isNameStart(c) || (dots && c == ".") || ("0"..."9").contains(c)
        }

        /// The name at the current character, empty when none starts there; with `dots` (a variable set, not
        /// one expanded, as the shell ends `$NAME.` before the dot) `.` is part of it.
        mutating func name(dots: Bool = true) -> String {
            var name = ""
            guard let first = current, Self.isNameStart(first) else { return name }
            while let c = current, Self.isName(c, dots: dots) {
                name.unicodeScalars.append(c)
                advance()
            }
            return name
        }

        /// The next `NAME=value`, skipping blank and comment lines; `nil` at the end.
        mutating func nextAssignment(known: [String: String]) throws(Error) -> (String, String)? {
            while true {
                skipSpaces()
                guard let c = current else { return nil }
                if c == "\n" || c == "#" {
                    skipLine()
                    continue
                }
                var name = self.name()
                if name == "export", current == " " || current == "\t" {
                    skipSpaces()
                    name = self.name()
                }
                guard !name.isEmpty else { throw fail("expected NAME=value") }
                skipSpaces()
                guard current == "=" || current == ":" else { throw fail("expected = after \(name)") }
                advance()
                skipSpaces()
                let value = try self.value(known: known)
                skipSpaces()
                if let c = current, c == "#" {
                    skipLine()
                } else if let c = current, c != "\n" {
                    throw fail("unexpected text after the value of \(name)")
                } else {
                    advance()
                }
                return (name, value)
            }
        }

        mutating func value(known: [String: String]) throws(Error) -> String {
            switch current {
            case "'":
                advance()
                var text = ""
                while let c = current, c != "'" {
                    text.unicodeScalars.append(c)
                    advance()
                }
                guard current == "'" else { throw fail("a single-quoted value is not closed") }
                advance()
                return text
            case "\"":
                let start = line
                advance()
                var text = ""
                while let c = current, c != "\"" {
                    if c == "\\" {
                        advance()
                        guard let escaped = current else { break }
                        switch escaped {
                        case "n": text += "\n"
                        case "t": text += "\t"
                        case "r": text += "\r"
                        default: text.unicodeScalars.append(escaped)  // \" \\ \$ and any other: the character
                        }
                        advance()
                    } else if c == "$" {
                        text += try expansion(known: known)
                    } else {
                        text.unicodeScalars.append(c)
                        advance()
                    }
                }
                guard current == "\"" else {
                    throw Error(line: start, reason: "a double-quoted value is not closed")
                }
                advance()
                return text
            default:
                var text = ""
                while let c = current, c != "\n" {
                    if c == "#", text.last?.isWhitespace ?? true { break }  // a comment, after a space
                    if c == "$" {
                        text += try expansion(known: known)
                    } else {
                        text.unicodeScalars.append(c)
                        advance()
                    }
                }
                return text.trimmingCharacters(in: .whitespaces)
            }
        }

        /// `$NAME`, `${NAME}` or `${NAME:-default}` at the current `$`, expanded; a `$` before anything else is
        /// itself.
        mutating func expansion(known: [String: String]) throws(Error) -> String {
            advance()  // $
            if current == "{" {
                advance()
                let name = self.name(dots: false)
                guard !name.isEmpty else { throw fail("expected a name after ${") }
                var fallback: String?
                if current == ":" {
                    advance()
                    guard current == "-" else { throw fail("expected :- after ${\(name)") }
                    advance()
                    var text = ""
                    while let c = current, c != "}", c != "\n" {
                        text.unicodeScalars.append(c)
                        advance()
                    }
                    fallback = text
                }
                guard current == "}" else { throw fail("${\(name) is not closed") }
                advance()
                let value = known[name] ?? ""
                return try spend(value.isEmpty ? (fallback ?? value) : value)
            }
            let name = self.name(dots: false)
            return name.isEmpty ? "$" : try spend(known[name] ?? "")
        }

        /// `text`, once its bytes are taken from ``expansionBudget``.
        mutating func spend(_ text: String) throws(Error) -> String {
            expansionBudget -= text.utf8.count
            guard expansionBudget >= 0 else {
                throw fail("the expansions add up to over \(EnvironmentFile.maximumExpansion >> 20) MiB")
            }
            return text
        }
    }
}
