import Foundation
import ImagoCore

/// OAuth 2.0 access tokens from ``GoogleCredentials``: a service account's RS256 assertion or a person's refresh
/// token traded at the token URI (a form POST), or the instance's token from the metadata server (a GET with
/// `Metadata-Flavor: Google`), each by libcurl; kept until five minutes before it expires (half its life if that
/// is shorter), one exchange at a time however many loads ask at once.
///
/// ```swift
/// let tokens = GoogleAccessTokens(account: account)   // scope: read-only Cloud Storage
/// let header = try await tokens.authorization()      // "Bearer ya29.…"
/// ```
public final class GoogleAccessTokens: BearerTokens {
    /// Where the tokens come from.
    public let credentials: GoogleCredentials
    /// The OAuth scope asked for. Default `https://www.googleapis.com/auth/devstorage.read_only`.
    public let scope: String
    /// How long an exchange may take. Default 10 s.
    public let timeout: Duration

    private let tokens: ExpiringCredential<String>

    /// Tokens from `credentials` in `scope` (default read-only Cloud Storage), each exchange bounded by `timeout`
    /// (default 10 s).
    public init(
        credentials: GoogleCredentials,
        scope: String = "https://www.googleapis.com/auth/devstorage.read_only", timeout: Duration = .seconds(10)
    ) {
        self.credentials = credentials
        self.scope = scope
        self.timeout = timeout
        tokens = ExpiringCredential(margin: .seconds(300)) {
            try await Self.exchange(credentials, scope: scope, timeout: timeout)
        }
    }

    /// Tokens for the service account `account` in `scope` (default read-only Cloud Storage), each exchange
    /// bounded by `timeout` (default 10 s).
    public convenience init(
        account: GoogleServiceAccount, scope: String = "https://www.googleapis.com/auth/devstorage.read_only",
        timeout: Duration = .seconds(10)
    ) {
        self.init(credentials: .serviceAccount(account), scope: scope, timeout: timeout)
    }

    /// The service account, when the credentials are one's key; `nil` otherwise.
    public var account: GoogleServiceAccount? {
        if case .serviceAccount(let account) = credentials { account } else { nil }
    }

    /// `Bearer TOKEN`, from the token kept or a new exchange.
    ///
    /// - Throws: ``DataLoadingError/requestModifierFailed(url:reason:)`` naming the token URL when the exchange
    ///   fails (its status or libcurl's error; never the assertion or a secret).
    public func authorization() async throws(DataLoadingError) -> String {
        try await tokens.bearer(tokenURL: credentials.tokenURL(scope: scope))
    }

    /// Drops the token kept if `authorization` (`Bearer TOKEN`) carries it, after Cloud Storage refused it
    /// (HTTP 401: revoked or expired early), so the next load exchanges again.
    public func refused(authorization: String) {
        tokens.dropBearer(authorization)
    }

    /// Number of exchanges started (for tests).
    package var exchangeCount: Int { tokens.exchangeCount }

    /// A token for `credentials` in `scope`.
    private static func exchange(
        _ credentials: GoogleCredentials, scope: String, timeout: Duration
    ) async throws -> ExpiringCredential<String>.Issued {
        let url = credentials.tokenURL(scope: scope)
        var exchange = CurlExchange(url: url, fields: ["Accept: application/json"], timeout: timeout)
        switch credentials {
        case .serviceAccount(let account):
            let assertion = try account.assertion(scope: scope)
            exchange.body = "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=" + assertion
        case .authorizedUser(let clientID, let clientSecret, let refreshToken, _):
            exchange.body = PercentEncoding.form([
                ("grant_type", "refresh_token"), ("client_id", clientID), ("client_secret", clientSecret),
                ("refresh_token", refreshToken),
            ])
        case .metadataServer:
            exchange.fields = ["Metadata-Flavor: Google"]
            exchange.bypassesProxy = true
            exchange.answerFields = ["Metadata-Flavor"]
        }
        if exchange.body != nil { exchange.fields.append("Content-Type: application/x-www-form-urlencoded") }
        let started = ContinuousClock.now
        let answered = try await exchange.perform()
        if case .metadataServer = credentials, answered.status == 200, answered.fields["Metadata-Flavor"] != "Google" {
            throw GoogleServiceAccount.Error.exchangeFailed(
                "the metadata server's answer lacks Metadata-Flavor: Google")
        }
        return try OAuthTokenAnswer.token(in: answered, startedAt: started)
    }
}
