import Foundation

/// Remembers recently failed resources so they fail fast instead of hitting the network again (SDWebImage's
/// failed-URL list, with expiry). Only failures that retrying will not change are remembered (see
/// ``reason(for:)``):
///
/// - `404`/`410`: long (default 1 h) — the resource is gone.
/// - ``Reason/rejected(_:)`` (an invalid or unsupported URL, not an image, too large, too many redirects, a refused
///   address or certificate): medium (default 5 min).
/// - ``Reason/decode(_:)`` (the bytes arrived and do not decode): short, growing with each repeat (default 10 s, ×2
///   per repeat, capped at 10 min).
/// - `5xx`, `429`, `408`, timeouts, connection failures, truncation and cancellation are transient: never
///   remembered (the loader's ``RetryPolicy`` retries them, honouring `Retry-After`), as in SDWebImage. Other
///   statuses (`401`, `403` …) are not remembered either: another credential or token may succeed.
///
/// A remembered refusal or decode failure keeps the sentence it was first reported with, so the fast failure
/// that follows says why as the first one did.
///
/// Keys are typed (``Key``: a source and whose credentials), so the cache is independent of any loader. It holds at most
/// ``Configuration/countLimit`` keys, evicting the least recently used. Thread-safe; the clock is injectable.
///
/// ```swift
/// let failures = FailureCache()
/// if let failure = failures.failure(for: key) { throw MyError.failedRecently(failure) }
/// failures.record(.http(404), for: key)
/// ```
public final class FailureCache: Sendable {
    /// Why a resource failed.
    public enum Reason: Sendable, Hashable, CustomStringConvertible {
        /// The server answered with this HTTP status.
        case http(Int)
        /// The bytes arrived but could not be decoded; the text is why, as the decoder said it (a ``CodecError``'s
        /// sentence).
        case decode(String)
        /// The load was refused by a rule that will refuse it again (scheme, URL, address, certificate, content type,
        /// size, redirects); the text is the refusal as first reported (a ``DataLoadingError``'s sentence, its URL
        /// redacted).
        case rejected(String)
        /// Any other failure worth remembering briefly.
        case other

        /// A phrase naming the reason.
        public var description: String {
            switch self {
            case .http(let code): "HTTP \(code)"
            case .decode(let why): "undecodable data: \(why)"
            case .rejected(let why): why
            case .other: "failure"
            }
        }
    }

    /// One remembered failure.
    public struct Failure: Sendable, Hashable {
        /// Why it failed.
        public var reason: Reason
        /// When the entry stops counting as failed.
        public var expiresAt: Date
        /// How many times in a row it failed for a short-lived reason (1 for the first failure).
        public var repeatCount: Int
    }

    /// Lifetimes and size. Every field documents its default.
    public struct Configuration: Sendable, Hashable {
        /// How long a 404 or 410 is remembered. Default 1 hour.
        public var goneLifetime: Duration = .seconds(3600)
        /// How long other 4xx and ``Reason/rejected(_:)`` failures are remembered. Default 5 minutes.
        public var clientErrorLifetime: Duration = .seconds(300)
        /// The first lifetime of a 5xx, 429, decode or other failure. Default 10 s.
        public var transientLifetime: Duration = .seconds(10)
        /// The factor a transient lifetime grows by with each repeat. Default 2.
        public var transientGrowth: Double = 2
        /// The longest transient lifetime. Default 10 minutes.
        public var maximumTransientLifetime: Duration = .seconds(600)
        /// The most keys kept (least recently used evicted first). Default 1,000.
        public var countLimit: Int = 1000

        /// The defaults listed on each field.
        public init() {}
    }

    /// The settings this cache was created with.
    public let configuration: Configuration
    private let now: @Sendable () -> Date
    private let state: Locked<LRUCache<Key, Failure>>

    /// A cache with `configuration`, reading the time from `clock` (default: the system clock).
    public init(configuration: Configuration = Configuration(), clock: @escaping @Sendable () -> Date = { Date() }) {
        self.configuration = configuration
        self.now = clock
        self.state = Locked(LRUCache(countLimit: max(1, configuration.countLimit)))
    }

    /// The failure remembered for `key` if it has not expired (marks the key recently used).
    public func failure(for key: Key) -> Failure? {
        let date = now()
        return state.withLock { store in
            // Expiry is the failure's own `expiresAt` (kept past it, see `record`), not an LRU deadline.
            guard let failure = store.value(for: key, now: { nil }), failure.expiresAt > date else { return nil }
            return failure
        }
    }

    /// Remembers that `key` failed for `reason`; a repeat of a short-lived failure lengthens its lifetime.
    /// Returns the stored entry.
    @discardableResult
    public func record(_ reason: Reason, for key: Key) -> Failure {
        let date = now()
        return state.withLock { store in
            // Expired entries are kept (until evicted) so that a resource that keeps failing backs off further.
            var repeats = 1
            if let previous = store.peekValue(for: key), Self.isGrowing(previous.reason), Self.isGrowing(reason),
                previous.expiresAt.addingTimeInterval(configuration.maximumTransientLifetime.timeInterval)
                    > date
            {
                repeats = previous.repeatCount + 1
            }
            let failure = Failure(
                reason: reason, expiresAt: date.addingTimeInterval(lifetime(of: reason, repeat: repeats)),
                repeatCount: repeats)
            store.setValue(failure, for: key, cost: 0)
            return failure
        }
    }

    /// Remembers a loading error for `key` when it is worth remembering (see ``reason(for:)``); returns the entry,
    /// or `nil` when the error is not remembered.
    @discardableResult
    public func record(_ error: DataLoadingError, for key: Key) -> Failure? {
        guard let reason = Self.reason(for: error) else { return nil }
        return record(reason, for: key)
    }

    /// Forgets `key` (call it when the resource loaded successfully or the user asks to retry).
    public func removeFailure(for key: Key) {
        state.withLock { _ = $0.removeValue(for: key) }
    }

    /// Forgets every failure.
    public func removeAll() {
        state.withLock { _ = $0.removeAll() }
    }

    /// The number of keys held, expired or not.
    public var count: Int { state.withLock { $0.count } }

    /// The reason to remember a loading error under, or `nil` for failures that retrying may change: every
    /// status but 404 and 410 (5xx, 429 and 408 are transient; 401 and 403 depend on the credentials),
    /// cancellation, timeouts, connection failures, truncated bodies and unreadable sources.
    public static func reason(for error: DataLoadingError) -> Reason? {
        switch error {
        case .cancelled, .timedOut, .connectionFailed, .truncated: nil
        case .statusCode(let code, _) where code == 404 || code == 410: .http(code)
        case .statusCode: nil
        case .unsupportedScheme, .bodyTooLarge, .unacceptableContentType, .tooManyRedirects, .addressRefused,
            .invalidURL, .tlsRefused:
            .rejected(error.description)
        case .unreadable, .requestModifierFailed: nil
        }
    }

    private static func isGrowing(_ reason: Reason) -> Bool {
        switch reason {
        case .http(let code): code == 429 || code >= 500
        case .decode, .other: true
        case .rejected: false
        }
    }

    private func lifetime(of reason: Reason, repeat count: Int) -> TimeInterval {
        switch reason {
        case .http(404), .http(410): return configuration.goneLifetime.timeInterval
        case .rejected: return configuration.clientErrorLifetime.timeInterval
        case .http(let code) where code >= 400 && code < 500 && code != 429:
            return configuration.clientErrorLifetime.timeInterval
        default:
            let base = configuration.transientLifetime.timeInterval
            let grown = base * pow(max(1, configuration.transientGrowth), Double(min(count - 1, 62)))
            return min(grown, configuration.maximumTransientLifetime.timeInterval)
        }
    }
}
