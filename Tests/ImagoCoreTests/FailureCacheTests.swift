import Foundation
import ImagoCore
import Testing

@Suite struct FailureCacheTests {
    /// A clock the test moves by hand.
    final class FakeClock: Sendable {
        private let date = Locked(Date(timeIntervalSince1970: 1_000_000))
        var now: Date { date.value }
        func advance(_ seconds: TimeInterval) { date.withLock { $0 = $0.addingTimeInterval(seconds) } }
        var read: @Sendable () -> Date { { [self] in now } }
    }

    @Test func notFoundIsRememberedForAnHour() {
        let clock = FakeClock()
        let cache = FailureCache(clock: clock.read)
        cache.record(.http(404), for: "a")
        clock.advance(3599)
        #expect(cache.failure(for: "a")?.reason == .http(404))
        clock.advance(2)
        #expect(cache.failure(for: "a") == nil)
    }

    @Test func otherClientErrorsAreRememberedForMinutes() {
        let clock = FakeClock()
        let cache = FailureCache(clock: clock.read)
        cache.record(.http(403), for: "a")
        cache.record(.rejected("the address policy refused 10.0.0.1"), for: "b")
        clock.advance(299)
        #expect(cache.failure(for: "a") != nil && cache.failure(for: "b") != nil)
        clock.advance(2)
        #expect(cache.failure(for: "a") == nil && cache.failure(for: "b") == nil)
    }

    @Test func serverAndDecodeFailuresBackOffWithRepeatsUpToCap() {
        let clock = FakeClock()
        let cache = FailureCache(clock: clock.read)
        var lifetimes: [TimeInterval] = []
        for _ in 0..<8 {
            let failure = cache.record(.http(503), for: "a")
            lifetimes.append(failure.expiresAt.timeIntervalSince(clock.now))
            clock.advance(lifetimes.last! + 1)  // expired, then fails again
            #expect(cache.failure(for: "a") == nil)
        }
        #expect(lifetimes == [10, 20, 40, 80, 160, 320, 600, 600])
        let decode = cache.record(.decode("not a JPEG"), for: "d")
        #expect(decode.expiresAt.timeIntervalSince(clock.now) == 10)
        #expect(decode.repeatCount == 1)
    }

    @Test func transientLoadingFailuresAreNotRemembered() {
        let cache = FailureCache()
        let url = URL(string: "http://x/a")!
        for error: DataLoadingError in [
            .cancelled, .timedOut(url: url), .connectionFailed(url: url, reason: "offline"),
            .truncated(url: url, expected: 2, received: 1), .statusCode(408, url: url),
        ] {
            #expect(cache.record(error, for: "a") == nil, "\(error)")
        }
        #expect(cache.count == 0)
        #expect(cache.record(.statusCode(410, url: url), for: "a")?.reason == .http(410))
        // A refusal is remembered with its sentence, so the fast failures that follow say why
        let refusal = DataLoadingError.unacceptableContentType("text/html", url: url)
        #expect(cache.record(refusal, for: "b")?.reason == .rejected(refusal.description))
        #expect(
            "\(cache.failure(for: "b")!.reason)" == "http://x/a has content type 'text/html', which is not an image")
    }

    @Test func removalForgetsAndSuccessResetsBackoff() {
        let clock = FakeClock()
        let cache = FailureCache(clock: clock.read)
        cache.record(.http(500), for: "a")
        cache.record(.http(500), for: "a")
        cache.record(.http(404), for: "b")
        cache.removeFailure(for: "a")
        #expect(cache.failure(for: "a") == nil)
        #expect(cache.record(.http(500), for: "a").repeatCount == 1)
        cache.removeAll()
        #expect(cache.count == 0)
        #expect(cache.failure(for: "b") == nil)
    }

    @Test func evictsLeastRecentlyUsedBeyondCountLimit() {
        var configuration = FailureCache.Configuration()
        configuration.countLimit = 3
        let cache = FailureCache(configuration: configuration)
        cache.record(.http(404), for: "a")
        cache.record(.http(404), for: "b")
        cache.record(.http(404), for: "c")
        _ = cache.failure(for: "a")  // a becomes most recent
        cache.record(.http(404), for: "d")
        #expect(cache.count == 3)
        #expect(cache.failure(for: "b") == nil)
        #expect(cache.failure(for: "a") != nil && cache.failure(for: "c") != nil && cache.failure(for: "d") != nil)
        // many more keys: still bounded
        for i in 0..<100 { cache.record(.decode("not a JPEG"), for: FailureCache.Key(source: "k\(i)")) }
        #expect(cache.count == 3)
        #expect(cache.failure(for: "k99") != nil)
    }
}

extension FailureCacheTests {
    @Test("Issue 23 item 7: only failures that retrying cannot change are remembered")
    func onlyPermanentFailuresAreRemembered() {
        let url = URL(string: "http://127.0.0.1/a.jpg")!
        for code in [500, 502, 503, 504, 429, 408, 401, 403] {
            #expect(FailureCache.reason(for: .statusCode(code, url: url)) == nil, "\(code)")
        }
        #expect(FailureCache.reason(for: .timedOut(url: url)) == nil)
        #expect(FailureCache.reason(for: .statusCode(404, url: url)) == .http(404))
        #expect(FailureCache.reason(for: .statusCode(410, url: url)) == .http(410))
        #expect(
            FailureCache.reason(for: .unsupportedScheme(url: url))
                == .rejected("\(DataLoadingError.unsupportedScheme(url: url))"))
        // 5xx are retried instead, honouring Retry-After
        let policy = RetryPolicy()
        #expect(policy.delay(forRetry: 1, after: .statusCode(500, url: url), retryAfter: "3") == .seconds(3))
        #expect(policy.delay(forRetry: 1, after: .statusCode(503, url: url), retryAfter: "1") == .seconds(1))
    }
}
