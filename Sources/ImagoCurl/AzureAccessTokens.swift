import Foundation
import ImagoCore

/// Microsoft Entra ID access tokens for Azure Storage from ``AzureCredentials``: a client secret or a workload
/// identity's federated token traded at the tenant's token endpoint (a form POST), or a managed identity's token
/// from the instance metadata service (`Metadata: true`) or App Service's endpoint (`X-IDENTITY-HEADER`), each by
/// libcurl; kept until five minutes before it expires (half its life if that is shorter), one exchange at a time
/// however many loads ask at once.
///
/// ```swift
/// let tokens = AzureAccessTokens(credentials: credentials)
/// let header = try await tokens.authorization()      // "Bearer eyJ0…"
/// ```
public final class AzureAccessTokens: BearerTokens, Hashable {
    /// Where the tokens come from.
    public let credentials: AzureCredentials
    /// How long an exchange may take. Default 10 s.
    public let timeout: Duration

    private let tokens: ExpiringCredential<String>

    /// Tokens from `credentials`, each exchange bounded by `timeout` (default 10 s).
    public init(credentials: AzureCredentials, timeout: Duration = .seconds(10)) {
        self.credentials = credentials
        self.timeout = timeout
        tokens = ExpiringCredential(margin: .seconds(300)) {
            try await Self.exchange(credentials, timeout: timeout)
        }
    }

    /// `Bearer TOKEN`, from the token kept or a new exchange.
    ///
    /// - Throws: ``DataLoadingError/requestModifierFailed(url:reason:)`` naming the token URL when the exchange
    ///   fails (its status and OAuth error, or libcurl's; never a secret).
    public func authorization() async throws(DataLoadingError) -> String {
        try await tokens.bearer(tokenURL: credentials.tokenURL)
    }

    /// Drops the token kept if `authorization` (`Bearer TOKEN`) carries it, after Azure Storage refused it (HTTP
    /// 401), so the next load exchanges again.
    public func refused(authorization: String) {
        tokens.dropBearer(authorization)
    }

    /// Number of exchanges started (for tests).
    package var exchangeCount: Int { tokens.exchangeCount }

    /// Identity: two token keepers are equal only when they are the same object.
    public static func == (lhs: AzureAccessTokens, rhs: AzureAccessTokens) -> Bool { lhs === rhs }

    /// Hashes the identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    /// Why a workload identity's token file could not be used.
    struct UnreadableFile: Error, CustomStringConvertible {
        var path: String
        var description: String { "the federated token file '\(path)' could not be read" }
    }

    /// A token for `credentials`.
    private static func exchange(
        _ credentials: AzureCredentials, timeout: Duration
    ) async throws -> ExpiringCredential<String>.Issued {
        var exchange = CurlExchange(url: credentials.tokenURL, fields: ["Accept: application/json"], timeout: timeout)
        switch credentials {
        case .clientSecret(_, let client, let secret, _):
            exchange.body = PercentEncoding.form([
                ("grant_type", "client_credentials"), ("client_id", client), ("client_secret", secret),
                ("scope", AzureCredentials.storageScope),
            ])
        case .workloadIdentity(_, let client, let file, _):
            guard let assertion = FileContents.text(atPath: file.path, limit: 1 << 16) else {
                throw UnreadableFile(path: file.path)
            }
            exchange.body = PercentEncoding.form([
                ("grant_type", "client_credentials"), ("client_id", client), ("scope", AzureCredentials.storageScope),
                ("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"),
                ("client_assertion", assertion.trimmingCharacters(in: .whitespacesAndNewlines)),
            ])
        case .managedIdentity(_, let header, _):
            exchange.fields.append(header.map { "X-IDENTITY-HEADER: " + $0 } ?? "Metadata: true")
            exchange.bypassesProxy = true
        }
        if exchange.body != nil { exchange.fields.append("Content-Type: application/x-www-form-urlencoded") }
        let started = ContinuousClock.now
        return try OAuthTokenAnswer.token(in: try await exchange.perform(), startedAt: started)
    }
}
