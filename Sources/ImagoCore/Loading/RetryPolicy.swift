import Foundation

/// When and how long to wait before retrying a failed load: only transient failures (connection lost, timeout,
/// truncated body, HTTP 408, 429 and every 5xx but 501), a bounded number of times, with exponential backoff and jitter, and
/// honouring a server's `Retry-After` (seconds or HTTP date), capped at ``maximumDelay``.
///
/// Defaults: 2 retries, first delay 0.25 s doubling each retry, ±20 % jitter, delays capped at 10 s.
///
/// ```swift
/// var configuration = HTTPDataLoader.Configuration()
/// configuration.retryPolicy = RetryPolicy(maximumRetries: 3, initialDelay: .milliseconds(100))
/// ```
public struct RetryPolicy: Sendable, Hashable {
    /// How many times a load is retried after its first attempt. Default 2; 0 disables retries.
    public var maximumRetries: Int
    /// The delay before the first retry. Default 0.25 s.
    public var initialDelay: Duration
    /// The factor the delay grows by with each retry. Default 2.
    public var multiplier: Double
    /// The longest delay, also the cap applied to a server's `Retry-After`. Default 10 s.
    public var maximumDelay: Duration
    /// The random spread applied to each computed delay, as a fraction (0.2 = ±20 %). Default 0.2.
    public var jitter: Double

    /// A policy with the defaults listed on each property.
    public init(
        maximumRetries: Int = 2, initialDelay: Duration = .milliseconds(250), multiplier: Double = 2,
        maximumDelay: Duration = .seconds(10), jitter: Double = 0.2
    ) {
        self.maximumRetries = max(0, maximumRetries)
        self.initialDelay = initialDelay
        self.multiplier = max(1, multiplier)
        self.maximumDelay = maximumDelay
        self.jitter = min(max(0, jitter), 1)
    }

    /// The default policy (2 retries, 0.25 s doubling, capped at 10 s).
    public static let `default` = RetryPolicy()

    /// Never retries.
    public static let none = RetryPolicy(maximumRetries: 0)

    /// The delay before retry number `retry` (1 for the first retry) after `error`, or `nil` when the load should
    /// not be retried (the error is not transient, or the retries are used up).
    ///
    /// - Parameters:
    ///   - retry: which retry this is, from 1.
    ///   - error: the failure of the attempt before.
    ///   - retryAfter: the response's `Retry-After` header, if any; it replaces the computed backoff (capped).
    ///   - now: the current date, to interpret an HTTP-date `Retry-After`.
    ///   - random: a value in 0…1 choosing where in the jitter range the delay falls (0.5 = no jitter).
    public func delay(
        forRetry retry: Int, after error: DataLoadingError, retryAfter: String? = nil, now: Date = Date(),
        random: Double = Double.random(in: 0...1)
    ) -> Duration? {
        guard retry >= 1, retry <= maximumRetries, error.isTransient else { return nil }
        let cap = maximumDelay.timeInterval
        if let retryAfter, let seconds = Self.retryAfterSeconds(retryAfter, now: now) {
            return .seconds(min(max(0, seconds), cap))
        }
        let base = initialDelay.timeInterval * pow(multiplier, Double(retry - 1))
        let spread = 1 + jitter * (min(max(random, 0), 1) * 2 - 1)
        return .seconds(min(max(0, base * spread), cap))
    }

    /// The seconds a `Retry-After` value asks to wait: a non-negative integer, or an HTTP date (RFC 9110 IMF-fixdate,
    /// also the obsolete RFC 850 and asctime forms) minus `now`. `nil` when the value is neither.
    public static func retryAfterSeconds(_ value: String, now: Date = Date()) -> Double? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if let seconds = Int(trimmed) { return seconds >= 0 ? Double(seconds) : nil }
        if let date = HTTPDateParser.date(from: trimmed) { return max(0, date.timeIntervalSince(now)) }
        return nil
    }
}
