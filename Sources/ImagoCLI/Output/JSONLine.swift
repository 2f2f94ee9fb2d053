import Foundation
import ImagoCore

/// Builds one JSON object with its keys in the order they are added (for line-per-item output that people and
/// scripts both read).
struct JSONLine {
    private var parts: [String] = []

    /// Adds a string field (escaped).
    mutating func add(_ key: String, _ value: String?) {
        parts.append("\(Self.quote(key)):\(value.map(Self.quote) ?? "null")")
    }

    /// Adds an integer field.
    mutating func add(_ key: String, _ value: Int?) {
        parts.append("\(Self.quote(key)):\(value.map(String.init) ?? "null")")
    }

    /// Adds a number field (finite; non-finite become null), with at most 3 decimals.
    mutating func add(_ key: String, _ value: Double?) {
        let text = value.flatMap { $0.isFinite ? String(format: "%.3f", $0) : nil } ?? "null"
        parts.append("\(Self.quote(key)):\(text)")
    }

    /// Adds an array of integers.
    mutating func add(_ key: String, _ values: [Int]) {
        parts.append("\(Self.quote(key)):[\(values.map(String.init).joined(separator: ","))]")
    }

    /// Adds a boolean field.
    mutating func add(_ key: String, _ value: Bool) {
        parts.append("\(Self.quote(key)):\(value)")
    }

    /// The object as one line of text, without a newline.
    var text: String { "{" + parts.joined(separator: ",") + "}" }

    /// A JSON string literal for `s` (``JSONStringLiteral``).
    static func quote(_ s: String) -> String { JSONStringLiteral.quoted(s) }
}
