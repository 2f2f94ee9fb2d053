import Foundation
import ImagoTesting
import Testing

@testable import ImagoServer

/// imgproxy's `IMGPROXY_URL_REPLACEMENTS`: source URLs' starts rewritten before the base URL and the policy.
@Suite("URLReplacement: rewriting source URLs")
struct URLReplacementTests {
    func replaced(_ url: String, _ rules: String) throws -> String {
        try URLReplacement.list(parsing: rules).applied(to: url)
    }

    @Test func prefixesWildcardsAndCaptures() throws {
        // imgproxy's examples
        #expect(
            try replaced("mys3://image01.jpg", "mys3://=s3://my_bucket/images/") == "s3://my_bucket/images/image01.jpg")
        #expect(
            try replaced("mys3://lorem/ipsum/image01.jpg", "mys3://*/=s3://my_bucket/${1}/")
                == "s3://my_bucket/lorem/ipsum/image01.jpg")
        // A star never crosses a slash, and takes the longest run that lets the rest match
        #expect(try replaced("img://a-b-c/x.jpg", "img://*-*/=https://h/${2}/${1}/") == "https://h/c/a-b/x.jpg")
        #expect(try replaced("img://a/b/c.jpg", "img://*c=X") == "img://a/b/c.jpg", "no match across /")
        #expect(try replaced("img://a/b/c.jpg", "img://*/*/=https://h/${2}${1}/") == "https://h/ba/c.jpg")
        // Only the start: a match further in is not one
        #expect(try replaced("https://cdn/img://x", "img://=http://no/") == "https://cdn/img://x")
        // In order, each to the result of the ones before; an unknown ${N} is empty, a bare $ stays
        #expect(try replaced("a://x", "a://=b://;b://=c://") == "c://x")
        #expect(try replaced("a://x/y", "a://*/=p/${3}${1}$/") == "p/x$/y")
        // Bad lists
        for bad in ["nopair", "=x", "*********=x"] {
            #expect(throws: ProxyError.self, "\(bad)") { try URLReplacement.list(parsing: bad) }
        }
        #expect(try URLReplacement.list(parsing: " ; ").isEmpty)
    }

    @Test func aLongSegmentIsMatchedInLinearTime() throws {
        // Many stars over a long run without a slash: the table is pattern × text, not exponential
        let text = "img://" + String(repeating: "a", count: 16_000) + "/x"
        let rule = try URLReplacement(pattern: "img://*a*a*a*a*a*a*b", replacement: "z")
        #expect(rule.applied(to: text) == nil)
        let matching = try URLReplacement(pattern: "img://*a*a*/", replacement: "https://h/")
        #expect(matching.applied(to: text) == "https://h/x")
    }

    @Test func theProxyFetchesTheRewrittenURLUnderItsPolicy() async throws {
        let origin = try LoopbackServer()
        defer { origin.stop() }
        origin.setRoute("/photos/a.jpg", .bytes(try ServerTestImages.jpeg(), contentType: "image/jpeg"))
        let base = origin.url(for: "/").absoluteString
        let fixture = try ProxyFixture {
            $0.urlReplacements = try URLReplacement.list(parsing: "img://*/=\(base)${1}/")
        }
        let response = await fixture.get("/_/w:40/plain/img://photos/a.jpg@png")
        #expect(response.status == 200, "\(errorMessage(response))")
        #expect(try ServerTestImages.decode(response.body).size.width == 40)
        #expect(origin.requestCount(for: "/photos/a.jpg") == 1)
        // The policy sees the rewritten URL: a private origin is refused where the policy says so
        let strict = try ProxyFixture {
            $0.urlReplacements = try URLReplacement.list(parsing: "img://*/=\(base)${1}/")
            $0.sourcePolicy = SourcePolicy()
        }
        #expect(await strict.get("/_/w:40/plain/img://photos/a.jpg@png").status == 403)
        // The base URL is put in front only where the URL does not already start with it
        let based = try ProxyFixture { $0.baseURL = base }
        #expect(await based.get("/_/w:40/plain/photos/a.jpg@png").status == 200)
        #expect(await based.get("/_/w:40/plain/\(base)photos/a.jpg@png").status == 200)
    }
}
