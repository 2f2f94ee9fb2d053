import Foundation
import ImagoCore
import Testing

@Suite struct RetryPolicyTests {
    let url = URL(string: "http://127.0.0.1/a.jpg")!

    @Test func retriesOnlyTransientFailures() {
        let policy = RetryPolicy()
        #expect(policy.delay(forRetry: 1, after: .timedOut(url: url), random: 0.5) != nil)
        #expect(policy.delay(forRetry: 1, after: .connectionFailed(url: url, reason: "reset"), random: 0.5) != nil)
        #expect(policy.delay(forRetry: 1, after: .truncated(url: url, expected: 10, received: 5), random: 0.5) != nil)
        for code in [429, 500, 502, 503, 504] {
            #expect(policy.delay(forRetry: 1, after: .statusCode(code, url: url), random: 0.5) != nil)
        }
        for error: DataLoadingError in [
            .statusCode(404, url: url), .statusCode(501, url: url), .cancelled, .bodyTooLarge(url: url, limit: 1),
            .unacceptableContentType("text/html", url: url),
        ] {
            #expect(policy.delay(forRetry: 1, after: error, random: 0.5) == nil, "\(error)")
        }
    }

    @Test func boundsTheNumberOfRetries() {
        let policy = RetryPolicy(maximumRetries: 2)
        #expect(policy.delay(forRetry: 2, after: .timedOut(url: url)) != nil)
        #expect(policy.delay(forRetry: 3, after: .timedOut(url: url)) == nil)
        #expect(RetryPolicy.none.delay(forRetry: 1, after: .timedOut(url: url)) == nil)
    }

    @Test func backsOffExponentiallyWithJitterAndCap() {
        let policy = RetryPolicy(
            maximumRetries: 10, initialDelay: .milliseconds(100), multiplier: 2, maximumDelay: .seconds(1), jitter: 0.2)
        let error = DataLoadingError.timedOut(url: url)
        #expect(policy.delay(forRetry: 1, after: error, random: 0.5) == .milliseconds(100))
        #expect(policy.delay(forRetry: 3, after: error, random: 0.5) == .milliseconds(400))
        // jitter spreads ±20 %
        let low = policy.delay(forRetry: 2, after: error, random: 0)!
        let high = policy.delay(forRetry: 2, after: error, random: 1)!
        #expect(abs(Double(low.components.attoseconds) / 1e18 - 0.16) < 1e-9)
        #expect(abs(Double(high.components.attoseconds) / 1e18 - 0.24) < 1e-9)
        // capped
        #expect(policy.delay(forRetry: 8, after: error, random: 1) == .seconds(1))
    }

    @Test func honoursRetryAfterSecondsAndDateCapped() {
        let policy = RetryPolicy(maximumDelay: .seconds(30))
        let error = DataLoadingError.statusCode(503, url: url)
        #expect(policy.delay(forRetry: 1, after: error, retryAfter: "7") == .seconds(7))
        #expect(policy.delay(forRetry: 1, after: error, retryAfter: "3600") == .seconds(30))
        let now = Date(timeIntervalSince1970: 1_445_412_480)  // Wed, 21 Oct 2015 07:28:00 GMT
        #expect(
            policy.delay(forRetry: 1, after: error, retryAfter: "Wed, 21 Oct 2015 07:28:12 GMT", now: now)
                == .seconds(12))
        #expect(RetryPolicy.retryAfterSeconds("Wednesday, 21-Oct-15 07:28:05 GMT", now: now) == 5)
        #expect(RetryPolicy.retryAfterSeconds("Wed Oct 21 07:28:09 2015", now: now) == 9)
        #expect(RetryPolicy.retryAfterSeconds("soon") == nil)
        #expect(RetryPolicy.retryAfterSeconds("-1") == nil)
        // an unparseable Retry-After falls back to the backoff
        #expect(policy.delay(forRetry: 1, after: error, retryAfter: "soon", random: 0.5) == .milliseconds(250))
    }
}
