import Foundation
import Testing

@testable import ImagoCore

@Suite struct URLRedactionTests {
    @Test(arguments: [
        ("https://cdn.example/a.jpg", "https://cdn.example/a.jpg"),
        ("https://cdn.example/a.jpg?w=200&h=100#top", "https://cdn.example/a.jpg?w=200&h=100#top"),
        ("http://alice:hunter2@127.0.0.1:8080/a.jpg", "http://127.0.0.1:8080/a.jpg"),
        ("http://alice@host/a.jpg", "http://host/a.jpg"),
        ("http://a%40b:p%3Aw@host/x@y.jpg?q=@", "http://host/x@y.jpg?q=@"),
        ("https://h/a.jpg?token=abc&w=1", "https://h/a.jpg?token=<redacted>&w=1"),
        (
            "https://h/a?TOKEN=1&Access_Token=2&key=3&api_key=4&apikey=5&signature=6&sig=7&password=8&secret=9&auth=10",
            "https://h/a?TOKEN=<redacted>&Access_Token=<redacted>&key=<redacted>&api_key=<redacted>"
                + "&apikey=<redacted>&signature=<redacted>&sig=<redacted>&password=<redacted>&secret=<redacted>"
                + "&auth=<redacted>"
        ),
        (
            "https://s3/b/o.png?X-Amz-Signature=abc&X-Amz-Security-Token=def&refresh_token=g&client.secret=h",
            "https://s3/b/o.png?X-Amz-Signature=<redacted>&X-Amz-Security-Token=<redacted>"
                + "&refresh_token=<redacted>&client.secret=<redacted>"
        ),
        ("https://h/a?%74oken=abc", "https://h/a?%74oken=<redacted>"),
        ("https://h/a?keys=1&monkey=2&tokens=3&token=", "https://h/a?keys=1&monkey=2&tokens=3&token="),
        ("https://h/a#access_token=xyz&state=1", "https://h/a#access_token=<redacted>&state=1"),
        ("https://u:p@h/a?token=t#sig=s", "https://h/a?token=<redacted>#sig=<redacted>"),
        ("not a url token=abc", "not a url token=abc"),
        ("http://bob:pw@host with space/a?token=zz", "http://host with space/a?token=<redacted>"),
        ("/relative?token=abc", "/relative?token=<redacted>"),
        ("", ""),
    ])
    func redactsUserInfoAndSensitiveValuesKeepingEverythingElse(_ input: String, _ expected: String) {
        #expect(URLRedaction.redacted(input) == expected)
    }

    @Test func urlRedactedStringUsesTheSameRules() throws {
        let url = try #require(URL(string: "https://bob:pw@cdn.example/a.jpg?token=abc&w=200"))
        #expect(url.redactedString == "https://cdn.example/a.jpg?token=<redacted>&w=200")
        let plain = try #require(URL(string: "https://cdn.example/a%20b.jpg?w=1"))
        #expect(plain.redactedString == plain.absoluteString)
    }

    @Test func keyTextReplacesSecretsWithTheirDigestsSoDifferentTokensStayDistinct() {
        let a = URLRedaction.keyText("https://u:p@h/a.jpg?token=SECRET-A&w=1")
        let b = URLRedaction.keyText("https://h/a.jpg?token=SECRET-B&w=1")
        #expect(a == "https://h/a.jpg?token=sha256-\(SHA256.hash("SECRET-A").hex)&w=1")
        #expect(a != b)
        #expect(!a.contains("SECRET") && !b.contains("SECRET") && !a.contains("u:p"))
        #expect(URLRedaction.keyText("https://h/a.jpg?w=1") == "https://h/a.jpg?w=1")
    }

    @Test func findsTheUserInfo() {
        #expect(URLRedaction.userInfo(in: "http://alice:pw@h/a") == "alice:pw")
        #expect(URLRedaction.userInfo(in: "http://h/a@b") == nil)
        #expect(URLRedaction.userInfo(in: "not a url") == nil)
    }

    @Test func requestsWithDifferentCredentialsShareTheCacheKeyButNotTheFailureKey() throws {
        let alice = ImageRequest(url: try #require(URL(string: "http://alice:pw1@h/a.jpg")))
        let bob = ImageRequest(url: try #require(URL(string: "http://bob:pw2@h/a.jpg")))
        let anonymous = ImageRequest(url: try #require(URL(string: "http://h/a.jpg")))
        #expect(alice.sourceKey == "http://h/a.jpg")
        #expect(alice.imageCacheKey == bob.imageCacheKey && bob.imageCacheKey == anonymous.imageCacheKey)
        #expect(alice.failureKey != bob.failureKey && alice.failureKey != anonymous.failureKey)
        #expect(alice.loadKey != bob.loadKey)
        #expect(anonymous.failureKey == FailureCache.Key(source: anonymous.sourceKey))
        for key in ["\(alice.failureKey)", "\(alice.loadKey)", alice.description] { #expect(!key.contains("pw1")) }
    }

    @Test func removesEverySecretFromTenThousandGeneratedURLsAndIsIdempotent() {
        // Given URL-like texts built from random pieces, with "SEKRET" only where a secret goes
        var state: UInt64 = 20_261_130
        func pick<T>(_ options: [T]) -> T {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return options[Int(state >> 33) % options.count]
        }
        let sensitive = ["token", "TOKEN", "X-Amz-Signature", "%74oken", "api_key", "client.secret", "sig", "Auth"]
        let plain = ["w", "h", "tokens", "monkey", "q", "key2", "x%20y", ""]
        func items() -> String {
            (0..<pick([0, 1, 2, 3, 4])).map { _ -> String in
                pick([true, false])
                    ? pick(sensitive) + "=" + pick(["SEKRET", "SEKRET%20x", "SEKRET=SEKRET"])
                    : pick(plain) + pick(["", "=", "=1", "=a@b", "=?", "=%3D"])
            }.joined(separator: "&")
        }
        for _ in 0..<10_000 {
            let scheme = pick(["http://", "https://", "HTTP://", "", "s3+x.y://", "://", "http:/"])
            let hasScheme = scheme.hasSuffix("://") && scheme != "://"
            var text = scheme
            text += pick(["", "alice:SEKRET@", "SEKRET@", "a@b:SEKRET@", ":SEKRET@"])
            text += pick(["127.0.0.1:80", "h", "[::1]:8080", ""])
            text += pick(["", "/", "/a.jpg", "/p@th/x", "/a?b"]).replacingOccurrences(of: "?", with: "%3F")
            if pick([true, false]) { text += "?" + items() }
            if pick([true, false]) { text += "#" + items() }
            // When it is redacted
            let once = URLRedaction.redacted(text)
            // Then no secret is left, and redacting again changes nothing
            if hasScheme { #expect(!once.contains("SEKRET"), "\(text) → \(once)") }
            #expect(URLRedaction.redacted(once) == once, "\(text)")
            #expect(!URLRedaction.keyText(text).contains("SEKRET") || !hasScheme, "\(text)")
        }
    }

    @Test func neverTrapsOnArbitraryText() {
        var state: UInt64 = 99
        let alphabet = Array("@?#&=:/%.-_tokenTOKENsig \u{0}é😀".unicodeScalars)
        for _ in 0..<20_000 {
            var scalars = String.UnicodeScalarView()
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            for _ in 0..<Int(state >> 59) * 3 {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                scalars.append(alphabet[Int(state >> 33) % alphabet.count])
            }
            let text = String(scalars)
            _ = URLRedaction.redacted(text)
            _ = URLRedaction.keyText(text)
            _ = URLRedaction.userInfo(in: text)
        }
    }
}
