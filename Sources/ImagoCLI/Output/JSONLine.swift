import Foundation
import ImagoCore

/// Builds one JSON object with its keys in the order they are added (for line-per-item output that people and
/// scripts both read).
struct JSONLine {
    private var parts: [String] = []

    /// Adds a string field (escaped).
    mutating func add(_ key: String, _ value: String?) {
        field(key, value.map(JSONStringLiteral.quoted) ?? "null")
    }

    /// Adds an integer field.
    mutating func add(_ key: String, _ value: Int?) {
        field(key, value.map(String.init) ?? "null")
    }

    /// Adds a number field (finite; non-finite become null), with at most 3 decimals.
    mutating func add(_ key: String, _ value: Double?) {
        let text = value.flatMap { $0.isFinite ? String(format: "%.3f", $0) : nil } ?? "null"
        field(key, text)
    }

    /// Adds an array of integers.
    mutating func add(_ key: String, _ values: [Int]) {
        field(key, "[" + values.map(String.init).joined(separator: ",") + "]")
    }

    /// Adds a boolean field.
    mutating func add(_ key: String, _ value: Bool) {
        field(key, String(value))
    }

    /// The object as one line of text, without a newline.
    var text: String { "{" + parts.joined(separator: ",") + "}" }

    /// Adds `key` (escaped) with `json`, a value already in JSON.
    private mutating func field(_ key: String, _ json: String) {
        parts.append(JSONStringLiteral.quoted(key) + ":" + json)
    }
}
