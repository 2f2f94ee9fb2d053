import Foundation
import Imago
import ImagoTesting
import Testing

@testable import ImagoServer

@Suite("ImageProxy: local:/// sources under --local-root, as imgproxy's IMGPROXY_LOCAL_FILESYSTEM_ROOT")
struct ImageProxyLocalSourceTests {
    /// A scratch directory with `root/photos/a.jpg` (the fixture's 400 × 200 JPEG), `secret.jpg` beside `root`, and
    /// a symbolic link `root/link.jpg` to it; removed after `body`.
    func withRoot(_ body: (_ root: URL, _ proxy: ProxyFixture) async throws -> Void) async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("imago-local-\(UUID().uuidString)")
        let root = scratch.appendingPathComponent("root")
        try FileManager.default.createDirectory(
            at: root.appendingPathComponent("photos"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let jpeg = try ServerTestImages.jpeg()
        try jpeg.write(to: root.appendingPathComponent("photos/a.jpg"))
        try jpeg.write(to: scratch.appendingPathComponent("secret.jpg"))
        try FileManager.default.createSymbolicLink(
            at: root.appendingPathComponent("link.jpg"),
            withDestinationURL: scratch.appendingPathComponent("secret.jpg"))
        let fixture = try ProxyFixture {
            $0.localRoot = root
            $0.sourcePolicy = SourcePolicy(allowedHosts: ["images.example.com"])  // no host matters for files
        }
        try await body(root, fixture)
    }

    @Test func aFileUnderTheRootIsRendered() async throws {
        try await withRoot { _, fixture in
            let response = await fixture.get("/_/rs:fit:100:100/plain/local:///photos/a.jpg@png")
            #expect(response.status == 200, "\(errorMessage(response))")
            let image = try ServerTestImages.decode(response.body)
            #expect(image.size == PixelSize(width: 100, height: 50))
            #expect(response.header("Content-Disposition") == "inline; filename=\"a.png\"")
            let encoded = Base64URL.encode(Array("local:///photos/a.jpg".utf8))
            #expect(await fixture.get("/_/rs:fit:10:10/" + encoded + ".png").status == 200)
        }
    }

    @Test func pathsNeverLeaveTheRoot() async throws {
        try await withRoot { _, fixture in
            for source in [
                "local:///photos/missing.jpg", "local:///../secret.jpg", "local:///photos/%2E%2E/%2E%2E/secret.jpg",
                "local:///link.jpg", "local:///photos",
            ] {
                let response = await fixture.get("/_/rs:fit:10:10/plain/" + source)
                #expect(response.status == 404, "\(source): \(response.status) \(errorMessage(response))")
            }
        }
    }

    /// imgproxy's `IMGPROXY_SOURCE_URL_QUERY_SEPARATOR`: `#` is always part of a file name; `?` starts the query
    /// (ignored for files) by default, and is part of the name with no separator or another one.
    @Test func hashesAndQuestionMarksInFileNames() async throws {
        let root = try makeTemporaryDirectory("imago-local-names")
        defer { try? FileManager.default.removeItem(at: root) }
        let jpeg = try ServerTestImages.jpeg()
        try jpeg.write(to: root.appendingPathComponent("cat#1.jpg"))
        try jpeg.write(to: root.appendingPathComponent("a?b.jpg"))
        try jpeg.write(to: root.appendingPathComponent("a"))
        for separator in ["?", "", "|"] {
            let fixture = try ProxyFixture {
                $0.localRoot = root
                $0.sourceQuerySeparator = separator
            }
            func status(_ source: String) async -> Int {
                await fixture.get("/_/rs:fit:10:10/plain/" + source + "@png").status
            }
            // Percent-encoded in the plain form, as a client encodes any source
            #expect(await status("local:///cat%231.jpg") == 200, "'\(separator)'")
            let encoded = Base64URL.encode(Array("local:///cat#1.jpg".utf8))
            #expect(await fixture.get("/_/rs:fit:10:10/" + encoded + ".png").status == 200, "'\(separator)'")
            // With "?", the file is "a" and "b.jpg" its (ignored) query; else the name holds the "?"
            let question = try #require(
                ProxyPath.storeSourceURL("local:///a?b.jpg", querySeparator: separator)?.path(percentEncoded: false))
            #expect(question == (separator == "?" ? "/a" : "/a?b.jpg"))
            #expect(await status("local:///a%3Fb.jpg") == 200)
            #expect(await status("local:///a%7Cv1") == (separator == "|" ? 200 : 404), "'\(separator)'")
        }
    }

    @Test func storeSourcesReadTheirQueryAfterTheSeparator() throws {
        func parts(_ text: String, _ separator: String) -> [String?] {
            let url = ProxyPath.storeSourceURL(text, querySeparator: separator)
            return [url?.host(), url?.path(percentEncoded: false), url?.query(percentEncoded: false)]
        }
        #expect(parts("s3://media/cat#1.jpg?v2", "?") == ["media", "/cat#1.jpg", "v2"])
        #expect(parts("s3://media/a?b.jpg", "") == ["media", "/a?b.jpg", nil])
        #expect(parts("s3://media/a?b.jpg|v2?x", "|") == ["media", "/a?b.jpg", "v2?x"])
        #expect(parts("gs://media/a%20b.jpg", "?") == ["media", "/a b.jpg", nil], "escapes stay escapes")
        #expect(ProxyPath.storeSourceURL("https://a.example/b?c", querySeparator: "?") == nil)
        #expect(ProxyPath.storeSourceURL("no-scheme", querySeparator: "?") == nil)
        // The S3 version after another separator
        let s3 = S3Sources(region: "eu-west-1")
        let url = try #require(ProxyPath.storeSourceURL("s3://media/a?b.jpg|v/1", querySeparator: "|"))
        #expect(
            s3.httpURL(for: url)?.absoluteString
                == "https://media.s3.eu-west-1.amazonaws.com/a%3Fb.jpg?versionId=v%2F1")
    }

    @Test func localSourcesNeedARoot() async throws {
        let fixture = try ProxyFixture()
        let response = await fixture.get("/_/rs:fit:10:10/plain/local:///photos/a.jpg")
        #expect(response.status == 400)
        #expect(errorMessage(response).contains("local"))
        #expect(throws: ProxyError.self) { try ProxyPath(parsing: "/_/plain/local://host/a.jpg", allowsLocal: true) }
    }
}
