import Foundation
import ImagoCore

/// Signs the requests a ``CurlDataLoader`` sends to some hosts with AWS Signature Version 4, through libcurl's
/// `CURLOPT_AWS_SIGV4`: private objects of S3 and of S3-compatible stores (MinIO, Ceph, R2, …).
///
/// curl computes the signature for every request it sends, retries and resumed ranges included, over the
/// request's host, `x-amz-date` and every header the request carries. This type adds `x-amz-content-sha256` (the
/// hash of the empty body of a `GET`, which S3 requires and libcurl 7.88 does not add) and, with a session token,
/// `x-amz-security-token`. Requests to hosts ``hosts`` does not match are sent unsigned, and a signed request
/// follows no redirect (its fields, the session token among them, would go to the host the answer names).
///
/// ```swift
/// var configuration = CurlDataLoader.Configuration()
/// configuration.awsSigning = [
///     AWSSigning(credentials: credentials, region: "eu-west-1", hosts: ["*.s3.eu-west-1.amazonaws.com"])
/// ]
/// ```
public struct AWSSigning: Sendable, Hashable {
    /// An access key and its secret, with the session token of temporary credentials.
    public struct Credentials: Sendable, Hashable {
        /// The access key ID (`AKIA…`).
        public var accessKeyID: String
        /// The secret access key.
        public var secretAccessKey: String
        /// The session token of temporary credentials (STS, instance roles), sent as `x-amz-security-token`.
        /// Default `nil`.
        public var sessionToken: String?

        /// Credentials from their parts; `sessionToken` defaults to `nil`.
        public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
            self.accessKeyID = accessKeyID
            self.secretAccessKey = secretAccessKey
            self.sessionToken = sessionToken
        }

        /// The credentials of the AWS tools' environment variables (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
        /// `AWS_SESSION_TOKEN`); `nil` unless both the key and its secret are set and not empty.
        public init?(environment: [String: String]) {
            guard let key = environment.nonEmpty("AWS_ACCESS_KEY_ID"),
                let secret = environment.nonEmpty("AWS_SECRET_ACCESS_KEY")
            else { return nil }
            self.init(
                accessKeyID: key, secretAccessKey: secret, sessionToken: environment.nonEmpty("AWS_SESSION_TOKEN"))
        }
    }

    /// The hex SHA-256 of an empty body: the `x-amz-content-sha256` of a request without one.
    static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    /// The key that signs, unless ``provider`` has fetched some.
    public var credentials: Credentials
    /// Where temporary credentials come from (an instance role, a container's, an assumed role); the ones it
    /// fetched last sign (``signingCredentials``). Default `nil`: ``credentials`` always.
    public var provider: AWSCredentialProvider?
    /// The region in the credential scope (`us-east-1`, `eu-west-1`, …; MinIO's default is `us-east-1`).
    public var region: String
    /// The service in the credential scope. Default `s3`.
    public var service: String
    /// The hosts whose requests are signed: `host` (any port), `host:port`, or `*.domain` (any name below
    /// `domain`, not `domain` itself), compared without case.
    public var hosts: [String]

    /// Signing with `credentials` for `region` and `service` (default `s3`) of the requests to `hosts`.
    public init(credentials: Credentials, region: String, service: String = "s3", hosts: [String]) {
        self.credentials = credentials
        self.region = region
        self.service = service
        self.hosts = hosts
    }

    /// Signing with the credentials `provider` fetches (fetch them before the first request: ``AWSCredentialProvider/credentials()``)
    /// for `region` and `service` (default `s3`) of the requests to `hosts`.
    public init(provider: AWSCredentialProvider, region: String, service: String = "s3", hosts: [String]) {
        self.init(
            credentials: Credentials(accessKeyID: "", secretAccessKey: ""), region: region, service: service,
            hosts: hosts)
        self.provider = provider
    }

    /// The credentials a request is signed with now: ``provider``'s latest, else ``credentials``.
    public var signingCredentials: Credentials { provider?.current ?? credentials }

    /// Whether requests to `url` are signed: an http or https URL whose host (or `host:port`, the scheme's
    /// default port filled in) one of ``hosts`` matches.
    public func signs(_ url: URL) -> Bool { HostPatterns.match(hosts, url) }

    /// curl's `CURLOPT_AWS_SIGV4` value: `aws:amz:REGION:SERVICE`.
    var curlProvider: String { "aws:amz:\(region):\(service)" }

    /// The header fields this signing adds to a request without a body signed with `credentials` (read once, so
    /// that the token and the key are of one fetch).
    func headerFields(for credentials: Credentials) -> [(String, String)] {
        var fields = [("x-amz-content-sha256", Self.emptyPayloadHash)]
        if let token = credentials.sessionToken { fields.append(("x-amz-security-token", token)) }
        return fields
    }
}
