import Foundation

/// URL-safe base64 (RFC 4648 §5) as imgproxy's signatures and sources and JSON Web Tokens use it: `-` and `_` for
/// `+` and `/`, padding optional on input and left off on output.
package enum Base64URL {
    /// `bytes` in base64url without padding.
    package static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The bytes of base64url `text` (padded or not), or `nil` when it is not base64url.
    package static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var standard = String(text)
        guard !standard.contains("+"), !standard.contains("/") else { return nil }
        standard = standard.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while standard.count % 4 != 0 { standard += "=" }
        return Data(base64Encoded: standard).map { [UInt8]($0) }
    }
}
