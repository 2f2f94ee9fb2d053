import CCrypto
import Foundation
import ImagoCore

/// A Google Cloud service account's key (the JSON file the console downloads), and the signed assertions it
/// trades for access tokens (OAuth 2.0's JWT bearer grant, RFC 7523), for ``GoogleAccessTokens``.
///
/// ```swift
/// let account = try GoogleServiceAccount(json: Data(contentsOf: keyFile))
/// let tokens = GoogleAccessTokens(account: account)
/// ```
public struct GoogleServiceAccount: Sendable, Hashable {
    /// Why a key could not be read or used.
    public enum Error: Swift.Error, Sendable, Hashable, CustomStringConvertible {
        /// The text is not usable credentials: not JSON, a type this library does not read, or a field missing.
        case invalidKey(String)
        /// libcrypto could not read the private key or sign with it.
        case signingFailed(String)
        /// The token endpoint or the metadata server answered without a token (its status and OAuth error), or
        /// answered as something else.
        case exchangeFailed(String)

        /// A sentence a person can act on.
        public var description: String {
            switch self {
            case .invalidKey(let reason): "not usable Google credentials: \(reason)"
            case .signingFailed(let reason): "could not sign with the service account's key: \(reason)"
            case .exchangeFailed(let reason): "no access token: \(reason)"
            }
        }
    }

    /// The account's e-mail address (`client_email`), the assertion's issuer.
    public var clientEmail: String
    /// The PEM private key (`private_key`, RSA).
    public var privateKey: String
    /// The key's identifier (`private_key_id`), sent as the assertion's `kid` when present.
    public var privateKeyID: String?
    /// Where assertions are traded for tokens (`token_uri`). Default Google's
    /// `https://oauth2.googleapis.com/token`.
    public var tokenURI: URL

    /// The largest key file read: 64 KiB (Google's are about 2.3 KB).
    public static let maximumKeyLength = 64 * 1024

    /// The account in a key file's JSON.
    ///
    /// - Throws: ``Error/invalidKey(_:)``.
    public init(json: Data) throws(Error) {
        guard json.count <= Self.maximumKeyLength else { throw .invalidKey("over \(Self.maximumKeyLength) bytes") }
        struct Key: Decodable {
            var type: String?
            var client_email: String?
            var private_key: String?
            var private_key_id: String?
            var token_uri: String?
        }
        guard let key = try? JSONDecoder().decode(Key.self, from: json) else { throw .invalidKey("not JSON") }
        guard key.type == "service_account" else {
            throw .invalidKey("its type is '\(key.type ?? "")', not 'service_account'")
        }
        guard let email = key.client_email, !email.isEmpty else { throw .invalidKey("no client_email") }
        guard let pem = key.private_key, pem.contains("PRIVATE KEY") else { throw .invalidKey("no private_key") }
        clientEmail = email
        privateKey = pem
        privateKeyID = key.private_key_id
        tokenURI = try Self.tokenURI(parsing: key.token_uri)
        _ = try Self.signature(of: Data("check".utf8), privateKey: pem)  // a key libcrypto cannot use fails here
    }

    /// A credentials file's `token_uri`: an http or https URL, or ``GoogleCredentials/defaultTokenURI`` when
    /// there is none.
    ///
    /// - Throws: ``Error/invalidKey(_:)`` for any other text.
    static func tokenURI(parsing text: String?) throws(Error) -> URL {
        guard let text else { return GoogleCredentials.defaultTokenURI }
        guard let url = URL(string: text), ["http", "https"].contains(url.scheme?.lowercased() ?? "") else {
            throw .invalidKey("token_uri '\(text)' is not an http or https URL")
        }
        return url
    }

    /// A JWT asserting this account for `scope`, issued at `now` and valid one hour, signed RS256.
    ///
    /// - Throws: ``Error/signingFailed(_:)``.
    public func assertion(scope: String, now: Date = Date()) throws(Error) -> String {
        let issued = Int(now.timeIntervalSince1970)
        var header: [String: String] = ["alg": "RS256", "typ": "JWT"]
        if let privateKeyID { header["kid"] = privateKeyID }
        let claims = Claims(
            iss: clientEmail, scope: scope, aud: tokenURI.absoluteString, iat: issued, exp: issued + 3600)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        guard let headerJSON = try? encoder.encode(header), let claimsJSON = try? encoder.encode(claims) else {
            throw .signingFailed("the assertion could not be written")
        }
        let signingInput = Base64URL.encode(Array(headerJSON)) + "." + Base64URL.encode(Array(claimsJSON))
        let signature = try Self.signature(of: Data(signingInput.utf8), privateKey: privateKey)
        return signingInput + "." + Base64URL.encode(Array(signature))
    }

    private struct Claims: Encodable {
        var iss: String
        var scope: String
        var aud: String
        var iat: Int
        var exp: Int
    }

    /// The RSASSA-PKCS1-v1_5 SHA-256 signature of `data` by the PEM `privateKey`, made by libcrypto; its size is
    /// the key's (`EVP_PKEY_get_size`), known before the buffer is allocated.
    static func signature(of data: Data, privateKey: String) throws(Error) -> Data {
        let pem = Array(privateKey.utf8)
        guard let bio = pem.withUnsafeBytes({ BIO_new_mem_buf($0.baseAddress, Int32($0.count)) }) else {
            throw .signingFailed("out of memory")
        }
        defer { BIO_free(bio) }
        guard let key = PEM_read_bio_PrivateKey(bio, nil, nil, nil) else { throw .signingFailed(lastError()) }
        defer { EVP_PKEY_free(key) }
        guard EVP_PKEY_get_base_id(key) == EVP_PKEY_RSA else { throw .signingFailed("the key is not an RSA key") }
        let size = Int(EVP_PKEY_get_size(key))
        guard size > 0, size <= 2048 else { throw .signingFailed("an RSA key of \(size * 8) bits") }
        guard let context = EVP_MD_CTX_new() else { throw .signingFailed("out of memory") }
        defer { EVP_MD_CTX_free(context) }
        var signature = [UInt8](repeating: 0, count: size)
        var length = size
        let signed = data.withUnsafeBytes { bytes in
            EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key) == 1
                && EVP_DigestSign(context, &signature, &length, bytes.baseAddress, bytes.count) == 1
        }
        guard signed else { throw .signingFailed(lastError()) }
        return Data(signature.prefix(length))
    }

    /// libcrypto's latest error on this thread, as text (and the thread's error queue emptied).
    private static func lastError() -> String {
        let code = ERR_get_error()
        defer { ERR_clear_error() }
        guard code != 0 else { return "libcrypto refused the key" }
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
