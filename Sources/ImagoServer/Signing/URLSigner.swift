import Foundation
import ImagoCore

/// Checks imgproxy URL signatures: base64url (no padding) of HMAC-SHA256(key, salt + the path after the
/// signature, from its leading `/`), with key and salt given as hex, so imgproxy's URL-signing libraries work as
/// they are. Several key/salt pairs may be valid at once, for key rotation (imgproxy's comma-separated
/// `IMGPROXY_KEY` and `IMGPROXY_SALT`); new signatures use the first.
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
        /// Rotation needs as many salts as keys, at least one of each.
        case pairCount(keys: Int, salts: Int)

        /// A sentence naming what to fix.
        public var description: String {
            switch self {
            case .invalidHex(let what):
                "the \(what) must be an even number of hex digits (e.g. from `xxd -g 2 -l 64 -p /dev/random`)"
            case .emptyKey: "the key is empty (give a hex-encoded key of at least one byte)"
            case .pairCount(let keys, let salts):
                "give as many salts as keys, comma-separated, paired in order (got \(keys) keys and \(salts) salts)"
            }
        }
    }

    /// One key and its salt.
    struct Pair: Sendable, Hashable {
        let key: [UInt8]
        let salt: [UInt8]
    }

    /// The valid pairs, the one new signatures use first (never empty).
    let pairs: [Pair]
    /// The bytes of the HMAC a signature carries (imgproxy's `IMGPROXY_SIGNATURE_SIZE`, 1…32): signatures are
    /// made that long and only that long is accepted. Default `nil`: signatures are made whole (32 bytes), and any
    /// prefix of 8 to 32 bytes is accepted.
    public var signatureSize: Int? {
        didSet { signatureSize = signatureSize.map { min(32, max(1, $0)) } }
    }

    /// A signer with raw `key` (not empty) and `salt` (may be empty) bytes.
    public init(key: [UInt8], salt: [UInt8]) throws {
        guard !key.isEmpty else { throw Error.emptyKey }
        pairs = [Pair(key: key, salt: salt)]
    }

    /// A signer from hex-encoded key and salt, as imgproxy's `IMGPROXY_KEY` / `IMGPROXY_SALT`.
    ///
    /// - Throws: ``Error``.
    public init(keyHex: String, saltHex: String) throws {
        guard let key = Self.bytes(hex: keyHex) else { throw Error.invalidHex(what: "key") }
        guard let salt = Self.bytes(hex: saltHex) else { throw Error.invalidHex(what: "salt") }
        try self.init(key: key, salt: salt)
    }

    /// A signer accepting any of several hex-encoded key/salt pairs, paired by position (key rotation); new
    /// signatures use the first pair.
    ///
    /// - Throws: ``Error``; ``Error/pairCount(keys:salts:)`` when the lists differ in length or are empty.
    public init(keysHex: [String], saltsHex: [String]) throws {
        guard !keysHex.isEmpty, keysHex.count == saltsHex.count else {
            throw Error.pairCount(keys: keysHex.count, salts: saltsHex.count)
        }
        pairs = try zip(keysHex, saltsHex).map { try URLSigner(keyHex: $0, saltHex: $1).pairs[0] }
    }

    /// The signature of `path` (the part after the signature, starting with `/`) under the first pair, base64url
    /// without padding.
    public func signature(for path: String) -> String {
        Base64URL.encode(Array(Self.code(pairs[0], path).prefix(signatureSize ?? 32)))
    }

    /// Whether `signature` signs `path` under any pair. Compares in constant time; accepts a signature cut to
    /// ``signatureSize`` bytes when it is set, else to any prefix of 8 to 32 bytes.
    public func isValid(signature: String, for path: String) -> Bool {
        guard let given = Base64URL.decode(signature) else { return false }
        if let signatureSize {
            guard given.count == signatureSize else { return false }
        } else {
            guard given.count >= 8, given.count <= 32 else { return false }
        }
        var valid = false
        for pair in pairs {
            var difference: UInt8 = 0
            for (a, b) in zip(given, Self.code(pair, path)) { difference |= a ^ b }
            valid = valid || difference == 0
        }
        return valid
    }

    private static func code(_ pair: Pair, _ path: String) -> [UInt8] {
        HMACSHA256.authenticationCode(key: pair.key, message: pair.salt + Array(path.utf8))
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
