import Foundation

/// A Google Cloud Secret Manager secret holding settings as `.env` text, read once at start (imgproxy's
/// `IMGPROXY_ENV_GCP_SECRET_*`): `GET …/v1/projects/PROJECT/secrets/SECRET/versions/VERSION:access` with a bearer
/// token from ``GoogleAccessTokens`` (scope `cloud-platform`), its `payload.data` decoded from base64.
///
/// ```swift
/// let secret = GoogleConfigurationSecret(project: "imago-prod", secret: "imago-env")
/// let text = try await secret.text(tokens: GoogleAccessTokens(credentials: credentials, scope: GoogleConfigurationSecret.scope))
/// ```
public struct GoogleConfigurationSecret: Sendable, Hashable {
    /// The project the secret is in.
    public var project: String
    /// The secret's name.
    public var secret: String
    /// Its version. Default `latest`.
    public var version: String
    /// Secret Manager's endpoint. Default `https://secretmanager.googleapis.com`.
    public var endpoint: URL

    /// The OAuth scope the tokens need: `https://www.googleapis.com/auth/cloud-platform`.
    public static let scope = "https://www.googleapis.com/auth/cloud-platform"

    /// The secret `secret` of `project` at `version` (default `latest`), at `endpoint` (default Google's).
    public init(project: String, secret: String, version: String = "latest", endpoint: URL? = nil) {
        self.project = project
        self.secret = secret
        self.version = version
        self.endpoint = endpoint ?? URL(string: "https://secretmanager.googleapis.com")!
    }

    /// Why the secret could not be read.
    public struct Error: Swift.Error, Sendable, Hashable, CustomStringConvertible {
        /// What went wrong, never with a token or the secret.
        public var description: String
    }

    /// The URL of the version's `:access` call, each name percent-encoded.
    public var accessURL: URL {
        let names = [project, secret, version].map(PercentEncoding.unreserved)
        var base = endpoint.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        return URL(string: "\(base)/v1/projects/\(names[0])/secrets/\(names[1])/versions/\(names[2]):access")!
    }

    /// The secret's text; `nil` when its payload is empty.
    ///
    /// - Throws: ``Error`` naming the status (and Google's error status) or what the answer lacks.
    public func text(tokens: any BearerTokens, timeout: Duration = .seconds(30)) async throws(Error) -> String? {
        let authorization: String
        do {
            authorization = try await tokens.authorization()
        } catch {
            throw Error(description: "no token for Secret Manager: \(error)")
        }
        let answer: CurlExchange.Answer
        do {
            answer = try await CurlExchange(
                url: accessURL, fields: ["Authorization: \(authorization)", "Accept: application/json"],
                timeout: timeout
            ).perform()
        } catch {
            throw Error(description: "Secret Manager at \(endpoint.absoluteString): \(error)")
        }
        struct Answer: Decodable {
            struct Payload: Decodable { var data: String? }
            struct Failure: Decodable { var status: String? }
            var payload: Payload?
            var error: Failure?
        }
        let decoded = try? JSONDecoder().decode(Answer.self, from: answer.data)
        guard answer.status == 200 else {
            let status = decoded?.error?.status.map { " (\($0))" } ?? ""
            throw Error(description: "Secret Manager answered HTTP \(answer.status)\(status) for '\(secret)'")
        }
        guard let payload = decoded?.payload else { throw Error(description: "Secret Manager's answer has no payload") }
        guard let data = payload.data, !data.isEmpty else { return nil }
        guard let bytes = Data(base64Encoded: data), let text = String(data: bytes, encoding: .utf8) else {
            throw Error(description: "the secret '\(secret)' is not base64 of UTF-8 text")
        }
        return text
    }
}
