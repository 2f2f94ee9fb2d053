import Foundation

/// URL-safe base64 (RFC 4648 §5) as imgproxy uses it: `-` and `_` for `+` and `/`, padding optional on input and
/// left off on output.
enum Base64URL {
    /// `bytes` in base64url without padding.
    static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The bytes of base64url `text` (padded or not), or `nil` when it is not base64url.
    static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var standard = String(text)
        guard !standard.contains("+"), !standard.contains("/") else { return nil }
        standard = standard.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while standard.count % 4 != 0 { standard += "=" }
        return Data(base64Encoded: standard).map { [UInt8]($0) }
    }
}
