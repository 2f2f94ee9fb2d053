import Foundation

/// Text as a JSON string literal: the one escaper for the CLI's JSON lines and the quoted fields of `imago serve`'s
/// text access log.
package enum JSONStringLiteral {
    /// `text` in double quotes, `"` and `\` escaped with a backslash, and control characters (and DEL) as `\n`,
    /// `\r`, `\t` or `\u00xx`: the result never ends a line or its quotes early, whatever `text` holds.
    package static func quoted(_ text: String) -> String {
        var quoted = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": quoted += "\\\""
            case "\\": quoted += "\\\\"
            case "\n": quoted += "\\n"
            case "\r": quoted += "\\r"
            case "\t": quoted += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                quoted += String(format: "\\u%04x", scalar.value)
            default: quoted.unicodeScalars.append(scalar)
            }
        }
        return quoted + "\""
    }
}
