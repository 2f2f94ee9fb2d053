import Foundation
import ImagoCore

/// Signs the requests a ``CurlDataLoader`` sends to some hosts with Azure Storage's Shared Key scheme: private
/// blobs of Azure Blob Storage (and of Azurite).
///
/// libcurl has no Azure signing, so the signature is computed here (HMAC-SHA256 of Azure's string-to-sign) for
/// every attempt, retries and resumed ranges included, over the request's conditional and `Range` fields, its
/// `x-ms-` fields and its resource, with fresh `x-ms-date` and `x-ms-version` fields. Requests to hosts
/// ``hosts`` does not match are sent unsigned, and a signed request follows no redirect.
///
/// ```swift
/// var configuration = CurlDataLoader.Configuration()
/// configuration.azureSigning = [
///     try AzureSharedKeySigning(accountName: "media", accountKey: key, hosts: ["media.blob.core.windows.net"])
/// ]
/// ```
public struct AzureSharedKeySigning: Sendable, Hashable {
    /// Why a signing cannot be made.
    public enum Error: Swift.Error, Hashable {
        /// The account key is not base64 (the form the Azure portal shows it in).
        case accountKeyNotBase64
    }

    /// The storage service version asked for (`x-ms-version`).
    package static let version = "2021-08-06"

    /// The storage account (`media` of `media.blob.core.windows.net`).
    public var accountName: String
    /// The account key, decoded.
    public var accountKey: [UInt8]
    /// The hosts whose requests are signed: `host` (any port), `host:port`, or `*.domain`, compared without case.
    public var hosts: [String]

    /// Signing as `accountName` with `accountKey` (base64, as the portal shows it) of the requests to `hosts`.
    ///
    /// - Throws: ``Error/accountKeyNotBase64``.
    public init(accountName: String, accountKey: String, hosts: [String]) throws(Error) {
        guard let key = Data(base64Encoded: accountKey), !key.isEmpty else { throw .accountKeyNotBase64 }
        self.accountName = accountName
        self.accountKey = Array(key)
        self.hosts = hosts
    }

    /// Whether requests to `url` are signed: an http or https URL whose host (or `host:port`, the scheme's
    /// default port filled in) one of ``hosts`` matches.
    public func signs(_ url: URL) -> Bool { HostPatterns.match(hosts, url) }

    /// Whether a request field is one a signing replaces: `x-ms-date`, `x-ms-version`, `Authorization`.
    static func isReplaced(_ name: String) -> Bool {
        ["x-ms-date", "x-ms-version", "authorization"].contains(name.lowercased())
    }

    /// The fields that sign a body-less `method` request for `url` carrying `fields` (none of them replaced, see
    /// ``isReplaced(_:)``), at `date`: `x-ms-date`, `x-ms-version` and `Authorization: SharedKey ACCOUNT:SIGNATURE`.
    func signatureFields(method: String, url: URL, fields: [(String, String)], date: Date) -> [(String, String)] {
        let dated = [("x-ms-date", HTTPDateParser.imfFixdate(from: date)), ("x-ms-version", Self.version)]
        let message = stringToSign(method: method, url: url, fields: fields + dated)
        let signature = Data(HMACSHA256.authenticationCode(key: accountKey, message: Array(message.utf8)))
        return dated + [("Authorization", "SharedKey \(accountName):\(signature.base64EncodedString())")]
    }

    /// Azure's string-to-sign for Shared Key (service version 2015-02-21 and later) of a body-less request.
    func stringToSign(method: String, url: URL, fields: [(String, String)]) -> String {
        func value(_ name: String) -> String {
            fields.last { $0.0.lowercased() == name }.map { Self.folded($0.1) } ?? ""
        }
        let standard = [
            "content-encoding", "content-language", "content-length", "content-md5", "content-type", "date",
            "if-modified-since", "if-match", "if-none-match", "if-unmodified-since", "range",
        ]
        var lines = [method.uppercased()] + standard.map { $0 == "content-length" && value($0) == "0" ? "" : value($0) }
        var headers: [String: String] = [:]
        for (name, field) in fields where name.lowercased().hasPrefix("x-ms-") {
            headers[name.lowercased()] = Self.folded(field)
        }
        lines += headers.keys.sorted().map { "\($0):\(headers[$0] ?? "")" }
        var resource = "/\(accountName)\(url.path(percentEncoded: true).isEmpty ? "/" : url.path(percentEncoded: true))"
        var parameters: [String: [String]] = [:]
        for item in URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? [] {
            parameters[item.name.lowercased(), default: []].append(item.value ?? "")
        }
        for name in parameters.keys.sorted() {
            resource += "\n\(name):\((parameters[name] ?? []).sorted().joined(separator: ","))"
        }
        lines.append(resource)
        return lines.joined(separator: "\n")
    }

    /// `value` trimmed, with each run of spaces and tabs inside it as one space.
    private static func folded(_ value: String) -> String {
        value.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ")
    }
}
