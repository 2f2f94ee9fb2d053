import Foundation
import ImagoServer

/// The origin `imago demo` loads its gallery from: a fixed set of paths served over HTTP/1.1 on 127.0.0.1 by
/// ImagoServer's ``MicroHTTPServer``.
///
/// Not a test double: it has no fault injection and counts nothing. The tests' origin with those (the
/// `LoopbackServer`) stays in `ImagoTesting`, which no shipped binary links.
///
/// ```swift
/// let origin = try DemoOriginServer(resources: ["/a.jpg": .init(data: jpeg, contentType: "image/jpeg")])
/// defer { origin.stop() }
/// let url = origin.url(for: "/a.jpg")
/// ```
public final class DemoOriginServer: Sendable {
    /// The bytes served at one path, with the `Content-Type` sent for them.
    public struct Resource: Sendable {
        /// The response body.
        public var data: Data
        /// The `Content-Type` header's value.
        public var contentType: String

        /// A resource of `data`, sent as `contentType`.
        public init(data: Data, contentType: String) {
            self.data = data
            self.contentType = contentType
        }
    }

    private let server: MicroHTTPServer
    /// `http://127.0.0.1:<port>`, the port chosen by the system.
    public let baseURL: URL

    /// Starts serving `resources` (path → resource) on a free port of 127.0.0.1: a request for one of the paths
    /// answers 200 with its bytes, any other path 404.
    ///
    /// - Throws: ``MicroHTTPServer/Error`` when no port could be bound.
    public init(resources: [String: Resource]) throws {
        server = try MicroHTTPServer(host: "127.0.0.1", port: 0) { request in
            guard let resource = resources[request.path] else {
                return ServerResponse(
                    status: 404, headers: [.init("Content-Type", "text/plain")], body: Data("not found\n".utf8))
            }
            return ServerResponse(
                status: 200, headers: [.init("Content-Type", resource.contentType)], body: resource.data)
        }
        baseURL = URL(string: "http://127.0.0.1:\(server.port)") ?? URL(fileURLWithPath: "/")
    }

    /// The URL of `path` (which starts with `/`) on this server.
    public func url(for path: String) -> URL {
        let absolute = path.hasPrefix("/") ? path : "/" + path
        return URL(string: baseURL.absoluteString + absolute) ?? baseURL.appendingPathComponent(absolute)
    }

    /// Stops listening and closes every connection. Idempotent.
    public func stop() {
        server.stop()
    }
}
