import Foundation

/// Checks imgproxy URL signatures: base64url (no padding) of HMAC-SHA256(key, salt + the path after the
/// signature, from its leading `/`), with key and salt given as hex, so imgproxy's URL-signing libraries work as
/// they are.
///
/// ```swift
/// let signer = try URLSigner(keyHex: "943b421c…", saltHex: "520f986b…")
/// signer.signature(for: "/rs:fit:300:300/plain/http://img.example/pretty/image.jpg")
/// ```
public struct URLSigner: Sendable, Hashable {
    /// Why a key or salt was refused.
    public enum Error: Swift.Error, Sendable, Hashable, CustomStringConvertible {
        /// The text is not an even number of hex digits (`what` is "key" or "salt").
        case invalidHex(what: String)
        /// The key is empty.
        case emptyKey

        /// A sentence naming what to fix.
        public var description: String {
            switch self {
            case .invalidHex(let what):
                "the \(what) must be an even number of hex digits (e.g. from `xxd -g 2 -l 64 -p /dev/random`)"
            case .emptyKey: "the key is empty (give a hex-encoded key of at least one byte)"
            }
        }
    }

    let key: [UInt8]
    let salt: [UInt8]

    /// A signer with raw `key` (not empty) and `salt` (may be empty) bytes.
    public init(key: [UInt8], salt: [UInt8]) throws {
        guard !key.isEmpty else { throw Error.emptyKey }
        self.key = key
        self.salt = salt
    }

    /// A signer from hex-encoded key and salt, as imgproxy's `IMGPROXY_KEY` / `IMGPROXY_SALT`.
    ///
    /// - Throws: ``Error``.
    public init(keyHex: String, saltHex: String) throws {
        guard let key = Self.bytes(hex: keyHex) else { throw Error.invalidHex(what: "key") }
        guard let salt = Self.bytes(hex: saltHex) else { throw Error.invalidHex(what: "salt") }
        try self.init(key: key, salt: salt)
    }

    /// The signature of `path` (the part after the signature, starting with `/`), base64url without padding.
    public func signature(for path: String) -> String {
        Base64URL.encode(HMACSHA256.authenticationCode(key: key, message: salt + Array(path.utf8)))
    }

    /// Whether `signature` signs `path`. Compares in constant time; also accepts a signature cut to a prefix of at
    /// least 8 bytes, as imgproxy does with `IMGPROXY_SIGNATURE_SIZE`.
    public func isValid(signature: String, for path: String) -> Bool {
        guard let given = Base64URL.decode(signature), given.count >= 8 else { return false }
        let expected = HMACSHA256.authenticationCode(key: key, message: salt + Array(path.utf8))
        guard given.count <= expected.count else { return false }
        var difference: UInt8 = 0
        for (a, b) in zip(given, expected) { difference |= a ^ b }
        return difference == 0
    }

    /// The bytes of an even-length hex string, or `nil`.
    static func bytes(hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count.isMultiple(of: 2) else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(digits.count / 2)
        var i = 0
        while i < digits.count {
            guard let high = nibble(digits[i]), let low = nibble(digits[i + 1]) else { return nil }
            out.append(high << 4 | low)
            i += 2
        }
        return out
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
