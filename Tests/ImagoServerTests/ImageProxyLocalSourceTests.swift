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

    @Test func localSourcesNeedARoot() async throws {
        let fixture = try ProxyFixture()
        let response = await fixture.get("/_/rs:fit:10:10/plain/local:///photos/a.jpg")
        #expect(response.status == 400)
        #expect(errorMessage(response).contains("local"))
        #expect(throws: ProxyError.self) { try ProxyPath(parsing: "/_/plain/local://host/a.jpg", allowsLocal: true) }
    }
}
