import Foundation
import ImagoCore

/// AWS credentials from an ``AWSCredentialSource``, fetched by libcurl (the STS exchange, the container endpoint,
/// EC2's metadata service with an IMDSv2 session token), kept until five minutes before they expire (half their
/// life if that is shorter), one fetch at a time however many loads ask at once. ``AWSSigning`` signs with the
/// ones kept (``current``); `imago serve --s3` fetches them before each load that needs them.
///
/// ```swift
/// let provider = AWSCredentialProvider(source: .instanceMetadata(endpoint: AWSCredentialSource.defaultInstanceMetadataEndpoint))
/// _ = try await provider.credentials()            // fetched once, then kept
/// let signing = AWSSigning(provider: provider, region: "eu-west-1", hosts: ["*.s3.eu-west-1.amazonaws.com"])
/// ```
public final class AWSCredentialProvider: Sendable, Hashable {
    /// Where the credentials come from.
    public let source: AWSCredentialSource
    /// How long a fetch may take. Default 10 s.
    public let timeout: Duration

    private let kept: ExpiringCredential<AWSSigning.Credentials>

    /// Credentials from `source`, each fetch bounded by `timeout` (default 10 s).
    public init(source: AWSCredentialSource, timeout: Duration = .seconds(10)) {
        self.source = source
        self.timeout = timeout
        kept = ExpiringCredential(margin: .seconds(300)) {
            try await Self.fetch(source, timeout: timeout)
        }
    }

    /// The credentials kept, or new ones.
    ///
    /// - Throws: ``DataLoadingError/requestModifierFailed(url:reason:)`` naming the endpoint when the fetch fails
    ///   (its status or libcurl's error; never a secret).
    public func credentials() async throws(DataLoadingError) -> AWSSigning.Credentials {
        do {
            return try await kept.value()
        } catch {
            throw .requestModifierFailed(url: endpoint, reason: "\(error)")
        }
    }

    /// The credentials last fetched (still good or not: ``credentials()`` renews them); `nil` before the first.
    public var current: AWSSigning.Credentials? { kept.latest }

    /// Number of fetches started (for tests).
    package var fetchCount: Int { kept.exchangeCount }

    /// Identity: two providers are equal only when they are the same object.
    public static func == (lhs: AWSCredentialProvider, rhs: AWSCredentialProvider) -> Bool { lhs === rhs }

    /// Hashes the identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    /// Where fetches go, for errors.
    private var endpoint: URL {
        switch source {
        case .fixed: URL(string: "about:blank")!
        case .webIdentity(_, _, _, let sts): sts
        case .container(let url, _, _): url
        case .instanceMetadata(let endpoint): endpoint
        case .assumedRole(_, _, _, let sts, _, _): sts
        case .process: URL(string: "about:credential-process")!
        }
    }

    /// What a fetch failed on, in words without a secret.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Credentials from `source`.
    private static func fetch(
        _ source: AWSCredentialSource, timeout: Duration
    ) async throws -> ExpiringCredential<AWSSigning.Credentials>.Issued {
        switch source {
        case .fixed(let credentials):
            return .init(value: credentials, expiresAt: nil)
        case .process(let command):
            return try await AWSCredentialProcess.credentials(of: command, timeout: timeout)
        case .webIdentity(let role, let tokenFile, let sessionName, let sts):
            guard let token = FileContents.text(atPath: tokenFile.path, limit: 1 << 16) else {
                throw Failure(description: "the web identity token file '\(tokenFile.path)' could not be read")
            }
            let form = PercentEncoding.form([
                ("Action", "AssumeRoleWithWebIdentity"), ("Version", "2011-06-15"), ("RoleArn", role),
                ("RoleSessionName", sessionName),
                ("WebIdentityToken", token.trimmingCharacters(in: .whitespacesAndNewlines)),
            ])
            return try stsCredentials(
                from: try await CurlExchange(
                    url: sts, fields: ["Content-Type: application/x-www-form-urlencoded"], body: form, timeout: timeout
                ).perform())
        case .assumedRole(let role, let externalID, let sessionName, let sts, let region, let base):
            // The base credentials (an instance's, a key) sign the request; they are fetched again with each
            // assumption, which happens once in the assumed credentials' life.
            let signer = try await fetch(base, timeout: timeout).value
            var pairs = [
                ("Action", "AssumeRole"), ("Version", "2011-06-15"), ("RoleArn", role),
                ("RoleSessionName", sessionName), ("DurationSeconds", "3600"),
            ]
            if let externalID { pairs.append(("ExternalId", externalID)) }
            let exchange = CurlExchange.awsPOST(
                sts, fields: ["Content-Type: application/x-www-form-urlencoded"], body: PercentEncoding.form(pairs),
                region: region, service: "sts", credentials: signer, timeout: timeout)
            return try stsCredentials(from: try await exchange.perform())
        case .container(let url, let authorization, let authorizationFile):
            var fields = ["Accept: application/json"]
            if let authorizationFile {
                guard let value = FileContents.text(atPath: authorizationFile.path, limit: 16384) else {
                    throw Failure(description: "'\(authorizationFile.path)' could not be read")
                }
                fields.append("Authorization: " + value.trimmingCharacters(in: .whitespacesAndNewlines))
            } else if let authorization {
                fields.append("Authorization: " + authorization)
            }
            var exchange = CurlExchange(url: url, fields: fields, timeout: timeout)
            exchange.bypassesProxy = true
            return try roleCredentials(from: try await exchange.perform(), service: "the container endpoint")
        case .instanceMetadata(let endpoint):
            // IMDSv2: a session token (PUT), the role's name, then its credentials; each request carries the token.
            let token = try await instanceMetadataToken(at: endpoint, lifetimeSeconds: 21_600, timeout: timeout)
            let base = endpoint.appending(path: "latest/meta-data/iam/security-credentials/")
            var names = CurlExchange(url: base, fields: ["X-aws-ec2-metadata-token: " + token], timeout: timeout)
            names.bypassesProxy = true
            let listed = try await names.perform()
            let role = String(decoding: listed.data, as: UTF8.self).split(whereSeparator: \.isNewline).first
                .map { $0.trimmingCharacters(in: .whitespaces) }
            guard listed.status == 200, let role, !role.isEmpty, !role.contains("/") else {
                throw Failure(
                    description: "the instance has no role (the metadata service answered HTTP \(listed.status))")
            }
            var credentials = names
            credentials.url = base.appending(path: role)
            return try roleCredentials(from: try await credentials.perform(), service: "the instance metadata service")
        }
    }

    /// An IMDSv2 session token from the instance metadata service at `endpoint` (a PUT, no proxy), valid for
    /// `lifetimeSeconds`: what every later request to the service carries as `X-aws-ec2-metadata-token`.
    ///
    /// - Throws: ``Failure`` when the service answers without one; ``CurlExchange/Failure`` when it does not answer.
    static func instanceMetadataToken(at endpoint: URL, lifetimeSeconds: Int, timeout: Duration) async throws -> String
    {
        var session = CurlExchange(
            url: endpoint.appending(path: "latest/api/token"),
            fields: ["X-aws-ec2-metadata-token-ttl-seconds: \(lifetimeSeconds)"], timeout: timeout)
        session.method = "PUT"
        session.bypassesProxy = true
        let issued = try await session.perform()
        let token = String(decoding: issued.data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard issued.status == 200, !token.isEmpty, !token.contains(where: \.isNewline) else {
            throw Failure(description: "the instance metadata service answered HTTP \(issued.status) for a token")
        }
        return token
    }

    /// The credentials in an STS answer's XML (`AccessKeyId`, `SecretAccessKey`, `SessionToken`, `Expiration`).
    ///
    /// - Throws: ``Failure`` naming the status and STS's error `Code`.
    private static func stsCredentials(
        from answer: CurlExchange.Answer
    ) throws -> ExpiringCredential<AWSSigning.Credentials>.Issued {
        let xml = String(decoding: answer.data, as: UTF8.self)
        guard answer.status == 200, let key = element("AccessKeyId", in: xml),
            let secret = element("SecretAccessKey", in: xml), let session = element("SessionToken", in: xml)
        else {
            let code = element("Code", in: xml).map { " (\($0))" } ?? ""
            throw Failure(description: "STS answered HTTP \(answer.status)\(code)")
        }
        return issued(key, secret, session, expiration: element("Expiration", in: xml))
    }

    /// The credentials in the JSON the container endpoint and the metadata service answer (`AccessKeyId`,
    /// `SecretAccessKey`, `Token`, `Expiration`).
    private static func roleCredentials(
        from answer: CurlExchange.Answer, service: String
    ) throws -> ExpiringCredential<AWSSigning.Credentials>.Issued {
        struct Role: Decodable {
            var AccessKeyId: String?
            var SecretAccessKey: String?
            var Token: String?
            var Expiration: String?
            var Code: String?
        }
        let role = try? JSONDecoder().decode(Role.self, from: answer.data)
        guard answer.status == 200, let key = role?.AccessKeyId, let secret = role?.SecretAccessKey,
            role?.Code == nil || role?.Code == "Success"
        else {
            throw Failure(
                description: "\(service) answered HTTP \(answer.status)\(role?.Code.map { " (\($0))" } ?? "")")
        }
        return issued(key, secret, role?.Token, expiration: role?.Expiration)
    }

    /// Credentials kept until `expiration` (ISO 8601; an hour when it is missing or unreadable).
    private static func issued(
        _ key: String, _ secret: String, _ token: String?, expiration: String?
    ) -> ExpiringCredential<AWSSigning.Credentials>.Issued {
        let expires = expiration.flatMap { try? Date($0, strategy: .iso8601) } ?? Date().addingTimeInterval(3600)
        let lifetime = max(60, min(expires.timeIntervalSinceNow, 43_200))
        let credentials = AWSSigning.Credentials(
            accessKeyID: key, secretAccessKey: secret, sessionToken: token?.isEmpty == false ? token : nil)
        return .init(value: credentials, expiresAt: .now + .seconds(lifetime))
    }

    /// The text of the first `<name>` element of `xml`, its five predefined entities decoded.
    static func element(_ name: String, in xml: String) -> String? {
        guard let open = xml.range(of: "<\(name)>"),
            let close = xml.range(of: "</\(name)>", range: open.upperBound..<xml.endIndex)
        else { return nil }
        return String(xml[open.upperBound..<close.lowerBound])
            .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&apos;", with: "'")
            .replacingOccurrences(of: "&amp;", with: "&")
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
