import Foundation
import ImagoCore

/// Where a server's Google access tokens come from: the kinds of credentials Google's Application Default
/// Credentials find, and the same search (``applicationDefault(environment:productNameFile:)``), so that a server
/// on Compute Engine or GKE reads private buckets with no key given, as imgproxy does.
///
/// ```swift
/// if let credentials = try GoogleCredentials.applicationDefault(environment: ProcessInfo.processInfo.environment) {
///     let tokens = GoogleAccessTokens(credentials: credentials)
/// }
/// ```
public enum GoogleCredentials: Sendable, Hashable {
    /// A service account's key: signed assertions traded for tokens (``GoogleServiceAccount``).
    case serviceAccount(GoogleServiceAccount)
    /// A person's credentials, as `gcloud auth application-default login` writes them: a refresh token traded
    /// for access tokens at `tokenURI` with the OAuth client's identifier and secret.
    case authorizedUser(clientID: String, clientSecret: String, refreshToken: String, tokenURI: URL)
    /// The metadata server of the instance the server runs on (Compute Engine, GKE, Cloud Run), which hands out
    /// tokens of the service account attached to it. Its base URL, ``defaultMetadataServer`` unless
    /// `GCE_METADATA_HOST` says otherwise.
    case metadataServer(URL)

    /// The metadata server's link-local address, `http://169.254.169.254`.
    public static let defaultMetadataServer = URL(string: "http://169.254.169.254")!
    /// Where refresh tokens are traded when the file names no `token_uri`: `https://oauth2.googleapis.com/token`.
    public static let defaultTokenURI = URL(string: "https://oauth2.googleapis.com/token")!
    /// The file whose text names the machine's product on Linux; Google's VMs say `Google` or
    /// `Google Compute Engine` there.
    public static let defaultProductNameFile = URL(fileURLWithPath: "/sys/class/dmi/id/product_name")

    /// The credentials in a credentials file's JSON: a service account's key (`"type": "service_account"`) or a
    /// person's (`"type": "authorized_user"`).
    ///
    /// - Throws: ``GoogleServiceAccount/Error/invalidKey(_:)`` for other types (workload identity federation's
    ///   `external_account` is not supported), missing fields, or text over
    ///   ``GoogleServiceAccount/maximumKeyLength``; never with a secret in its text.
    public init(json: Data) throws(GoogleServiceAccount.Error) {
        guard json.count <= GoogleServiceAccount.maximumKeyLength else {
            throw .invalidKey("over \(GoogleServiceAccount.maximumKeyLength) bytes")
        }
        struct File: Decodable {
            var type: String?
            var client_id: String?
            var client_secret: String?
            var refresh_token: String?
            var token_uri: String?
        }
        guard let file = try? JSONDecoder().decode(File.self, from: json) else { throw .invalidKey("not JSON") }
        switch file.type {
        case "service_account":
            self = .serviceAccount(try GoogleServiceAccount(json: json))
        case "authorized_user":
            guard let id = file.client_id, !id.isEmpty, let secret = file.client_secret, !secret.isEmpty,
                let refresh = file.refresh_token, !refresh.isEmpty
            else { throw .invalidKey("authorized_user credentials need client_id, client_secret and refresh_token") }
            self = .authorizedUser(
                clientID: id, clientSecret: secret, refreshToken: refresh,
                tokenURI: try GoogleServiceAccount.tokenURI(parsing: file.token_uri))
        default:
            throw .invalidKey("its type is '\(file.type ?? "")', not 'service_account' or 'authorized_user'")
        }
    }

    /// The credentials in the file at `file`.
    ///
    /// - Throws: ``GoogleServiceAccount/Error/invalidKey(_:)`` when the file cannot be read, is over
    ///   ``GoogleServiceAccount/maximumKeyLength``, or holds no usable credentials.
    public init(contentsOf file: URL) throws(GoogleServiceAccount.Error) {
        let size = (try? file.resourceValues(forKeys: [.fileSizeKey]).fileSize) ?? .max
        guard size <= GoogleServiceAccount.maximumKeyLength, let data = try? Data(contentsOf: file) else {
            throw .invalidKey("'\(file.path)' is not a readable credentials file")
        }
        try self.init(json: data)
    }

    /// The credentials Google's Application Default Credentials would use, searched in their order:
    ///
    /// 1. the file `GOOGLE_APPLICATION_CREDENTIALS` names;
    /// 2. gcloud's `application_default_credentials.json` in `CLOUDSDK_CONFIG`, else in `HOME/.config/gcloud`;
    /// 3. the metadata server at `GCE_METADATA_HOST` (`host[:port]`) when it is set, else at
    ///    ``defaultMetadataServer`` when `productNameFile` says the machine is Google's (unless `NO_GCE_CHECK` is
    ///    `true` or `1`). No network probe: elsewhere on Google Cloud, set `GCE_METADATA_HOST` to
    ///    `metadata.google.internal`.
    ///
    /// `nil` when none applies (anonymous requests: public objects only).
    ///
    /// - Throws: ``GoogleServiceAccount/Error/invalidKey(_:)`` for a file named or found that holds no usable
    ///   credentials, or a `GCE_METADATA_HOST` that is not a host.
    public static func applicationDefault(
        environment: [String: String], productNameFile: URL = defaultProductNameFile
    ) throws(GoogleServiceAccount.Error) -> GoogleCredentials? {
        if let path = environment["GOOGLE_APPLICATION_CREDENTIALS"], !path.isEmpty {
            return try GoogleCredentials(contentsOf: URL(fileURLWithPath: path))
        }
        let gcloud =
            environment["CLOUDSDK_CONFIG"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
            ?? environment["HOME"].flatMap {
                $0.isEmpty ? nil : URL(fileURLWithPath: $0).appending(path: ".config/gcloud")
            }
        if let file = gcloud?.appending(path: "application_default_credentials.json"),
            FileManager.default.fileExists(atPath: file.path)
        {
            return try GoogleCredentials(contentsOf: file)
        }
        if let host = environment["GCE_METADATA_HOST"], !host.isEmpty {
            guard !host.contains("/"), let url = URL(string: "http://" + host), url.host?.isEmpty == false else {
                throw .invalidKey("GCE_METADATA_HOST '\(host)' is not a host or host:port")
            }
            return .metadataServer(url)
        }
        let skipsCheck = ["true", "1"].contains(environment["NO_GCE_CHECK"]?.lowercased() ?? "")
        if !skipsCheck, let name = try? String(contentsOf: productNameFile, encoding: .utf8),
            ["Google", "Google Compute Engine"].contains(name.trimmingCharacters(in: .whitespacesAndNewlines))
        {
            return .metadataServer(defaultMetadataServer)
        }
        return nil
    }

    /// Where these credentials are traded for tokens: the token URI, or the metadata server's token URL for
    /// `scope`.
    public func tokenURL(scope: String) -> URL {
        switch self {
        case .serviceAccount(let account): return account.tokenURI
        case .authorizedUser(_, _, _, let tokenURI): return tokenURI
        case .metadataServer(let base):
            var url = base.appending(path: "computeMetadata/v1/instance/service-accounts/default/token")
            url.append(queryItems: [URLQueryItem(name: "scopes", value: scope)])
            return url
        }
    }

    /// A sentence naming these credentials without a secret, for logs: the account's e-mail address, the OAuth
    /// client, or the metadata server.
    public var summary: String {
        switch self {
        case .serviceAccount(let account): "service account \(account.clientEmail)"
        case .authorizedUser(let clientID, _, _, _): "user credentials of OAuth client \(clientID)"
        case .metadataServer(let base): "the metadata server at \(base.absoluteString)"
        }
    }
}
