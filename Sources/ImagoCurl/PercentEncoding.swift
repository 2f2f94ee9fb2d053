import Foundation

/// Percent-encoding as signed requests and form bodies need it: every UTF-8 byte but RFC 3986's unreserved
/// characters (`A–Z a–z 0–9 - . _ ~`) as `%XX`.
package enum PercentEncoding {
    /// `text` with every UTF-8 byte but `A–Z a–z 0–9 - . _ ~` as `%XX`.
    package static func unreserved(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreservedCharacters) ?? text
    }

    /// `pairs` as an `application/x-www-form-urlencoded` body: `name=value` joined by `&`, each side encoded as
    /// ``unreserved(_:)`` encodes.
    package static func form(_ pairs: [(String, String)]) -> String {
        pairs.map { unreserved($0) + "=" + unreserved($1) }.joined(separator: "&")
    }

    /// RFC 3986's unreserved characters, ASCII only (Foundation's `.alphanumerics` would let Unicode letters through).
    private static let unreservedCharacters = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
}
