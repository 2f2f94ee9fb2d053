import Foundation
import ImagoCore

/// OAuth 2.0 access tokens for a Google service account (``GoogleServiceAccount``): an RS256 assertion traded at
/// the account's `token_uri` (a form POST, by libcurl), kept until five minutes before it expires, one exchange
/// at a time however many loads ask at once.
///
/// ```swift
/// let tokens = GoogleAccessTokens(account: account)   // scope: read-only Cloud Storage
/// let header = try await tokens.authorization()      // "Bearer ya29.…"
/// ```
public final class GoogleAccessTokens: Sendable {
    /// The account whose tokens these are.
    public let account: GoogleServiceAccount
    /// The OAuth scope asked for. Default `https://www.googleapis.com/auth/devstorage.read_only`.
    public let scope: String
    /// How long an exchange may take. Default 10 s.
    public let timeout: Duration

    private let tokens: ExpiringCredential<String>

    /// Tokens for `account` in `scope` (default read-only Cloud Storage), each exchange bounded by `timeout`
    /// (default 10 s).
    public init(
        account: GoogleServiceAccount, scope: String = "https://www.googleapis.com/auth/devstorage.read_only",
        timeout: Duration = .seconds(10)
    ) {
        self.account = account
        self.scope = scope
        self.timeout = timeout
        tokens = ExpiringCredential(margin: .seconds(300)) {
            try await Self.exchangeAssertion(account: account, scope: scope, timeout: timeout)
        }
    }

    /// `Bearer TOKEN`, from the token kept or a new exchange.
    ///
    /// - Throws: ``DataLoadingError/requestModifierFailed(url:reason:)`` naming the token URI when the exchange
    ///   fails (its status or libcurl's error; never the assertion).
    public func authorization() async throws(DataLoadingError) -> String {
        do {
            return "Bearer " + (try await tokens.value())
        } catch {
            throw .requestModifierFailed(url: account.tokenURI, reason: "\(error)")
        }
    }

    /// Drops the token kept if `authorization` (`Bearer TOKEN`) carries it, after Cloud Storage refused it
    /// (HTTP 401: revoked or expired early), so the next load exchanges again.
    public func refused(authorization: String) {
        tokens.drop { "Bearer " + $0 == authorization }
    }

    /// Number of exchanges started (for tests).
    package var exchangeCount: Int { tokens.exchangeCount }

    /// A token for `account` in `scope`, from its token URI.
    private static func exchangeAssertion(
        account: GoogleServiceAccount, scope: String, timeout: Duration
    ) async throws -> ExpiringCredential<String>.Issued {
        let assertion = try account.assertion(scope: scope)
        let body = "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=" + assertion
        let started = ContinuousClock.now
        let exchange = CurlExchange(
            url: account.tokenURI,
            fields: ["Content-Type: application/x-www-form-urlencoded", "Accept: application/json"], body: body,
            timeout: timeout)
        let answered = try await exchange.perform()
        struct Answer: Decodable {
            var access_token: String?
            var expires_in: Double?
            var error: String?
        }
        let answer = try? JSONDecoder().decode(Answer.self, from: answered.data)
        guard answered.status == 200, let value = answer?.access_token, !value.isEmpty,
            value.allSatisfy({ $0.isASCII && !$0.isNewline && $0 != " " })
        else {
            throw GoogleServiceAccount.Error.signingFailed(
                "the token exchange answered HTTP \(answered.status)\(answer?.error.map { " (\($0))" } ?? "")")
        }
        let lifetime = max(60, min(answer?.expires_in ?? 3600, 86_400))
        return .init(value: value, expiresAt: started + .seconds(lifetime))
    }
}
