import CCurl
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

    private struct Token {
        var value: String
        var expiresAt: ContinuousClock.Instant
    }

    private struct State {
        var token: Token?
        var exchange: Task<Token, any Error>?
        var exchangeCount = 0
    }

    private let state = Locked(State())

    /// What a call finds: a token still good, or the exchange to wait for.
    private enum Lookup {
        case kept(Token)
        case exchange(Task<Token, any Error>)
    }

    /// Tokens for `account` in `scope` (default read-only Cloud Storage), each exchange bounded by `timeout`
    /// (default 10 s).
    public init(
        account: GoogleServiceAccount, scope: String = "https://www.googleapis.com/auth/devstorage.read_only",
        timeout: Duration = .seconds(10)
    ) {
        self.account = account
        self.scope = scope
        self.timeout = timeout
    }

    /// `Bearer TOKEN`, from the token kept or a new exchange.
    ///
    /// - Throws: ``DataLoadingError/requestModifierFailed(url:reason:)`` naming the token URI when the exchange
    ///   fails (its status or libcurl's error; never the assertion).
    public func authorization() async throws(DataLoadingError) -> String {
        let now = ContinuousClock.now
        // The token kept while it has five minutes left, else the exchange in flight or a new one.
        let lookup = state.withLock { state -> Lookup in
            if let token = state.token, now < token.expiresAt - .seconds(300) { return .kept(token) }
            if let exchange = state.exchange { return .exchange(exchange) }
            let exchange = Task { [self] in try await exchangeAssertion() }
            state.exchange = exchange
            state.exchangeCount += 1
            return .exchange(exchange)
        }
        let exchange: Task<Token, any Error>
        switch lookup {
        case .kept(let token): return "Bearer " + token.value
        case .exchange(let running): exchange = running
        }
        do {
            let token = try await exchange.value
            state.withLock { state in
                if state.token.map({ $0.expiresAt < token.expiresAt }) ?? true { state.token = token }
                state.exchange = nil
            }
            return "Bearer " + token.value
        } catch {
            state.withLock { $0.exchange = nil }
            throw .requestModifierFailed(url: account.tokenURI, reason: "\(error)")
        }
    }

    /// Number of exchanges started (for tests).
    package var exchangeCount: Int { state.withLock { $0.exchangeCount } }

    private func exchangeAssertion() async throws -> Token {
        let assertion = try account.assertion(scope: scope)
        let body = "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=" + assertion
        let started = ContinuousClock.now
        let (status, data) = try await Self.post(body, to: account.tokenURI, timeout: timeout)
        struct Answer: Decodable {
            var access_token: String?
            var expires_in: Double?
            var error: String?
        }
        let answer = try? JSONDecoder().decode(Answer.self, from: data)
        guard status == 200, let value = answer?.access_token, !value.isEmpty,
            value.allSatisfy({ $0.isASCII && !$0.isNewline && $0 != " " })
        else {
            throw GoogleServiceAccount.Error.signingFailed(
                "the token exchange answered HTTP \(status)\(answer?.error.map { " (\($0))" } ?? "")")
        }
        let lifetime = max(60, min(answer?.expires_in ?? 3600, 86_400))
        return Token(value: value, expiresAt: started + .seconds(lifetime))
    }

    /// The most bytes of a token exchange's answer kept (Google's are about 1 KB).
    static let maximumAnswerLength = 64 * 1024

    /// POSTs the form `body` to `url` with libcurl (no redirects, `timeout` for the whole exchange) on a thread
    /// of its own; the status and at most ``maximumAnswerLength`` bytes of the answer.
    static func post(_ body: String, to url: URL, timeout: Duration) async throws -> (Int, Data) {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { try postNow(body, to: url, timeout: timeout) })
            }
        }
    }

    private final class Answer {
        var data = Data()
    }

    private static func postNow(_ body: String, to url: URL, timeout: Duration) throws -> (Int, Data) {
        guard let handle = curl_easy_init() else { throw CurlPostError.failed("libcurl could not start") }
        defer { curl_easy_cleanup(handle) }
        let answer = Answer()
        let context = Unmanaged.passUnretained(answer).toOpaque()
        _ = imago_easy_setopt_string(handle, CURLOPT_URL, url.absoluteString)
        _ = imago_easy_setopt_string(handle, CURLOPT_COPYPOSTFIELDS, body)
        _ = imago_easy_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
        _ = imago_easy_setopt_long(handle, CURLOPT_TIMEOUT_MS, CurlEasy.milliseconds(timeout))
        _ = imago_easy_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https")
        _ = imago_easy_setopt_long(handle, CURLOPT_SSL_VERIFYPEER, 1)
        _ = imago_easy_setopt_long(handle, CURLOPT_SSL_VERIFYHOST, 2)
        var fields: UnsafeMutablePointer<curl_slist>?
        fields = curl_slist_append(fields, "Content-Type: application/x-www-form-urlencoded")
        fields = curl_slist_append(fields, "Accept: application/json")
        defer { curl_slist_free_all(fields) }
        _ = imago_easy_setopt_slist(handle, CURLOPT_HTTPHEADER, fields)
        _ = imago_easy_setopt_pointer(handle, CURLOPT_WRITEDATA, context)
        _ = imago_easy_setopt_writefunction(handle, tokenAnswerCallback)
        let code = withExtendedLifetime(answer) { curl_easy_perform(handle) }
        guard code == CURLE_OK else {
            throw CurlPostError.failed(String(cString: curl_easy_strerror(code)))
        }
        var status = 0
        _ = imago_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        return (status, answer.data)
    }

    private enum CurlPostError: Swift.Error, CustomStringConvertible {
        case failed(String)
        var description: String {
            switch self {
            case .failed(let reason): "the token exchange failed: \(reason)"
            }
        }
    }

    private static let tokenAnswerCallback: imago_data_callback = { buffer, size, count, userdata in
        guard let userdata, let buffer else { return 0 }
        let answer = Unmanaged<Answer>.fromOpaque(userdata).takeUnretainedValue()
        let length = size * count
        guard answer.data.count + length <= maximumAnswerLength else { return 0 }  // too long: the transfer fails
        answer.data.append(UnsafeRawPointer(buffer).assumingMemoryBound(to: UInt8.self), count: length)
        return length
    }
}
