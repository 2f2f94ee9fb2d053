import Foundation
import ImagoCore

/// Tokens for OpenStack Swift object storage: ``OpenStackCredentials`` traded at the identity service for a
/// token and the account's storage URL (Keystone v3's `POST /auth/tokens`, v2's `POST /tokens`, or v1's
/// `GET` with `X-Auth-User` and `X-Auth-Key`, by libcurl), kept until five minutes before the token expires (a v1
/// token without `X-Auth-Token-Expires`: until a request is refused with it), one sign-in at a time however many
/// loads ask at once.
///
/// ```swift
/// let tokens = OpenStackTokens(credentials: credentials)
/// let session = try await tokens.session()   // session.token for X-Auth-Token, session.storageURL
/// ```
public final class OpenStackTokens: Sendable {
    /// A token and the storage URL it is for.
    public struct Session: Sendable, Hashable {
        /// The `X-Auth-Token` value.
        public var token: String
        /// The account's storage URL (`https://swift.example/v1/AUTH_project`): objects are at
        /// `STORAGE/CONTAINER/OBJECT`.
        public var storageURL: URL
    }

    /// Who signs in.
    public let credentials: OpenStackCredentials
    /// How long a sign-in may take. Default 10 s.
    public let timeout: Duration

    private let sessions: ExpiringCredential<Session>

    /// Tokens for `credentials`, each sign-in bounded by `timeout` (default 10 s).
    public init(credentials: OpenStackCredentials, timeout: Duration = .seconds(10)) {
        self.credentials = credentials
        self.timeout = timeout
        sessions = ExpiringCredential(margin: .seconds(300)) {
            try await Self.signIn(credentials, timeout: timeout)
        }
    }

    /// The session kept, or one from a new sign-in.
    ///
    /// - Throws: ``DataLoadingError/requestModifierFailed(url:reason:)`` naming the auth URL when the sign-in
    ///   fails (its status, what the answer lacked, or libcurl's error; never the key).
    public func session() async throws(DataLoadingError) -> Session {
        do {
            return try await sessions.value()
        } catch {
            throw .requestModifierFailed(url: credentials.authURL, reason: "\(error)")
        }
    }

    /// Drops the session kept if its token is `token`, which the storage refused (HTTP 401), so the next load
    /// signs in again.
    public func refused(token: String) {
        sessions.drop { $0.token == token }
    }

    /// Number of sign-ins started (for tests).
    package var exchangeCount: Int { sessions.exchangeCount }

    /// Why a sign-in gave no session.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private static func signIn(
        _ credentials: OpenStackCredentials, timeout: Duration
    ) async throws -> ExpiringCredential<Session>.Issued {
        // Header fields are built from the credentials: no line breaks or other control characters in them.
        for text in [credentials.username, credentials.apiKey, credentials.domain, credentials.tenant]
        where text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            throw Failure(description: "the credentials hold a control character")
        }
        let started = ContinuousClock.now
        switch credentials.resolvedVersion {
        case 1: return try await signInV1(credentials, timeout: timeout, started: started)
        case 2: return try await signInV2(credentials, timeout: timeout, started: started)
        case 3: return try await signInV3(credentials, timeout: timeout, started: started)
        default:
            throw Failure(description: "the auth version is not 1, 2 or 3, and the auth URL does not name one")
        }
    }

    private static func signInV1(
        _ credentials: OpenStackCredentials, timeout: Duration, started: ContinuousClock.Instant
    ) async throws -> ExpiringCredential<Session>.Issued {
        let exchange = CurlExchange(
            url: credentials.authURL,
            fields: ["X-Auth-User: \(credentials.username)", "X-Auth-Key: \(credentials.apiKey)"], timeout: timeout,
            answerFields: ["X-Auth-Token", "X-Storage-Url", "X-Auth-Token-Expires"])
        let answer = try await exchange.perform()
        try checkStatus(answer)
        let session = try Self.session(
            token: answer.fields["X-Auth-Token"], storage: answer.fields["X-Storage-Url"], answer: answer)
        let lifetime = answer.fields["X-Auth-Token-Expires"].flatMap { Double($0) }
        return .init(value: session, expiresAt: lifetime.map { started + .seconds(max(60, $0)) })
    }

    private static func signInV2(
        _ credentials: OpenStackCredentials, timeout: Duration, started: ContinuousClock.Instant
    ) async throws -> ExpiringCredential<Session>.Issued {
        struct Request: Encodable {
            struct Auth: Encodable {
                struct Password: Encodable {
                    var username: String
                    var password: String
                }
                var passwordCredentials: Password
                var tenantName: String?
            }
            var auth: Auth
        }
        struct Answer: Decodable {
            struct Access: Decodable {
                struct Token: Decodable {
                    var id: String
                    var expires: String?
                }
                struct Endpoint: Decodable {
                    var publicURL: String?
                }
                var token: Token
                var serviceCatalog: [CatalogService<Endpoint>]?
            }
            var access: Access
        }
        let body = Request(
            auth: .init(
                passwordCredentials: .init(username: credentials.username, password: credentials.apiKey),
                tenantName: credentials.tenant.isEmpty ? nil : credentials.tenant))
        let answer = try await post(body, to: "tokens", credentials: credentials, timeout: timeout)
        try checkStatus(answer)
        let access = try decode(Answer.self, from: answer).access
        let storage = CatalogService.objectStoreEndpoints(in: access.serviceCatalog).lazy.compactMap(\.publicURL).first
        let session = try Self.session(token: access.token.id, storage: storage, answer: answer)
        return .init(value: session, expiresAt: access.token.expires.flatMap { instant($0, after: started) })
    }

    private static func signInV3(
        _ credentials: OpenStackCredentials, timeout: Duration, started: ContinuousClock.Instant
    ) async throws -> ExpiringCredential<Session>.Issued {
        struct Domain: Encodable {
            var name: String
        }
        struct Request: Encodable {
            struct Auth: Encodable {
                struct Identity: Encodable {
                    struct Password: Encodable {
                        struct User: Encodable {
                            var name: String
                            var password: String
                            var domain: Domain
                        }
                        var user: User
                    }
                    var methods = ["password"]
                    var password: Password
                }
                struct Scope: Encodable {
                    struct Project: Encodable {
                        var name: String
                        var domain: Domain
                    }
                    var project: Project
                }
                var identity: Identity
                var scope: Scope?
            }
            var auth: Auth
        }
        struct Answer: Decodable {
            struct Token: Decodable {
                struct Endpoint: Decodable {
                    var interface: String?
                    var url: String?
                }
                var expires_at: String?
                var catalog: [CatalogService<Endpoint>]?
            }
            var token: Token
        }
        let domain = Domain(name: credentials.domain.isEmpty ? "Default" : credentials.domain)
        let body = Request(
            auth: .init(
                identity: .init(
                    password: .init(
                        user: .init(name: credentials.username, password: credentials.apiKey, domain: domain))),
                scope: credentials.tenant.isEmpty
                    ? nil : .init(project: .init(name: credentials.tenant, domain: domain))))
        let answer = try await post(
            body, to: "auth/tokens", credentials: credentials, timeout: timeout, answerFields: ["X-Subject-Token"])
        try checkStatus(answer)
        let token = try decode(Answer.self, from: answer).token
        let storage = CatalogService.objectStoreEndpoints(in: token.catalog).first { $0.interface == "public" }?.url
        let session = try Self.session(token: answer.fields["X-Subject-Token"], storage: storage, answer: answer)
        return .init(value: session, expiresAt: token.expires_at.flatMap { instant($0, after: started) })
    }

    /// POSTs `body` as JSON to `path` under the auth URL.
    private static func post(
        _ body: some Encodable, to path: String, credentials: OpenStackCredentials, timeout: Duration,
        answerFields: [String] = []
    ) async throws -> CurlExchange.Answer {
        let url = credentials.authURL.appending(path: path)
        let json = String(decoding: try JSONEncoder().encode(body), as: UTF8.self)
        return try await CurlExchange(
            url: url, fields: ["Content-Type: application/json", "Accept: application/json"], body: json,
            timeout: timeout, answerFields: answerFields
        ).perform()
    }

    private static func checkStatus(_ answer: CurlExchange.Answer) throws {
        guard (200...299).contains(answer.status) else {
            throw Failure(description: "the identity service answered HTTP \(answer.status)")
        }
    }

    private static func decode<T: Decodable>(_ type: T.Type, from answer: CurlExchange.Answer) throws -> T {
        do {
            return try JSONDecoder().decode(type, from: answer.data)
        } catch {
            throw Failure(description: "the identity service's answer is not the JSON of a token")
        }
    }

    /// The session of `token` and `storage`, checked: a token of visible ASCII, an http or https storage URL.
    private static func session(token: String?, storage: String?, answer: CurlExchange.Answer) throws -> Session {
        guard let token, !token.isEmpty, token.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F })
        else { throw Failure(description: "the identity service answered HTTP \(answer.status) without a token") }
        guard let storage, let url = URL(string: storage), let scheme = url.scheme?.lowercased(),
            scheme == "http" || scheme == "https", url.host()?.isEmpty == false
        else {
            throw Failure(description: "the identity service named no object-store endpoint (public) for the account")
        }
        return Session(token: token, storageURL: url)
    }

    /// When an ISO 8601 time (`2026-12-05T01:00:00.000000Z`, Keystone's UTC form) comes, on the clock `started` is
    /// on; at least a minute after `started`. `nil` when `text` is not such a time.
    static func instant(_ text: String, after started: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        guard text.count >= 19 else { return nil }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        guard let date = formatter.date(from: String(text.prefix(19)) + "Z") else { return nil }
        let seconds = max(60, date.timeIntervalSinceNow)
        return started + .seconds(seconds)
    }
}

/// One service of an identity service's catalog (Keystone v2's `serviceCatalog`, v3's `catalog`): its type and
/// endpoints, whose fields differ by version.
private struct CatalogService<Endpoint: Decodable>: Decodable {
    var type: String
    var endpoints: [Endpoint]

    /// The endpoints of `catalog`'s first `object-store` service (Swift); none without one.
    static func objectStoreEndpoints(in catalog: [Self]?) -> [Endpoint] {
        catalog?.first { $0.type == "object-store" }?.endpoints ?? []
    }
}
