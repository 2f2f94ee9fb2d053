import Foundation

extension LoopbackServer {
    /// What the server answers on one path: the content, the status and headers, and any faults in delivery.
    ///
    /// Build one with a static constructor and chain modifiers:
    /// ```swift
    /// server.setRoute("/a.jpg", .bytes(jpeg, contentType: "image/jpeg").withETag("\"v1\"").dripping(bytes: 1024, every: .milliseconds(5)))
    /// ```
    /// Defaults: status 200, `Content-Length` framing, no validators, no faults.
    public struct Route: Sendable {
        /// Where the body comes from.
        public enum Content: Sendable {
            /// These bytes, from memory.
            case bytes(Data)
            /// Files under this folder; the route's path is a prefix (`/static` serves `/static/a/b.png`).
            case directory(URL)
            /// This pattern repeated forever (no `Content-Length`), until the client closes the connection.
            case endless(pattern: Data)
            /// The closure's response; it runs on the connection's thread, never under a lock.
            case handler(@Sendable (Request) -> Response)
        }

        /// How the body is framed on the wire.
        public enum Framing: Sendable, Equatable {
            /// `Content-Length` equal to the body size (the default).
            case contentLength
            /// `Transfer-Encoding: chunked`, chunks of at most `chunkSize` bytes.
            case chunked(chunkSize: Int)
            /// `Content-Length: declared` whatever the body size; the connection closes after the body, so a larger
            /// value leaves the client short and a smaller one sends extra bytes.
            case declaredContentLength(Int)
            /// No length at all: the body ends when the server closes the connection.
            case closeDelimited
        }

        /// A fault that cuts the body short.
        public enum Interruption: Sendable, Equatable {
            /// After `afterBytes` body bytes the server sends nothing more but keeps the connection open (until the
            /// client closes it or the server stops).
            case stall(afterBytes: Int)
            /// After `afterBytes` body bytes the server resets the connection (SO_LINGER 0, close → RST).
            case reset(afterBytes: Int)
            /// After `afterBytes` body bytes the server closes the connection normally (FIN).
            case close(afterBytes: Int)
        }

        /// Slow delivery: `bytes` at a time with a pause of `interval` between writes.
        public struct Drip: Sendable, Equatable {
            /// Bytes per write (at least 1).
            public var bytes: Int
            /// Pause between writes.
            public var interval: Duration

            /// Creates a drip of `bytes` every `interval`.
            public init(bytes: Int, interval: Duration) {
                self.bytes = max(1, bytes)
                self.interval = interval
            }
        }

        /// The body source.
        public var content: Content
        /// The status code; 200 by default (ignored for `.handler`, whose response carries its own).
        public var status: Int = 200
        /// The `Content-Type`; nil sends none (for `.directory` nil means "from the file extension").
        public var contentType: String?
        /// Extra header fields sent as given (after the ones below); empty by default.
        public var headers: Headers = [:]
        /// The `ETag` sent, and compared with `If-None-Match` (→ 304); nil by default.
        public var etag: String?
        /// The `Last-Modified` sent, and compared with `If-Modified-Since` (→ 304); nil by default.
        public var lastModified: Date?
        /// The `Cache-Control` sent; nil by default.
        public var cacheControl: String?
        /// The `Content-Encoding` sent (e.g. `gzip` with pre-compressed bytes); nil by default.
        public var contentEncoding: String?
        /// How the body is framed; `.contentLength` by default (`.endless` content is always close-delimited
        /// unless chunked).
        public var framing: Framing = .contentLength
        /// Slow delivery; nil (as fast as possible) by default.
        public var drip: Drip?
        /// A fault cutting the body short; nil by default.
        public var interruption: Interruption?
        /// A pause after the request is read and before the response head is sent; nil by default.
        public var headerDelay: Duration?

        /// Creates a route serving `content` with the defaults above.
        public init(content: Content, status: Int = 200, contentType: String? = nil) {
            self.content = content
            self.status = status
            self.contentType = contentType
        }
    }
}

// MARK: - Constructors

extension LoopbackServer.Route {
    /// Serves `data` from memory with status 200 and `contentType` (`application/octet-stream` by default).
    public static func bytes(_ data: Data, contentType: String = "application/octet-stream") -> Self {
        Self(content: .bytes(data), contentType: contentType)
    }

    /// Serves UTF-8 `text` with `status` (200 by default) and `Content-Type: text/plain; charset=utf-8`.
    public static func text(_ text: String, status: Int = 200) -> Self {
        Self(content: .bytes(Data(text.utf8)), status: status, contentType: "text/plain; charset=utf-8")
    }

    /// Answers `status` with `body` (empty by default) and `contentType` (`text/plain` by default).
    public static func status(_ status: Int, body: Data = Data(), contentType: String = "text/plain") -> Self {
        Self(content: .bytes(body), status: status, contentType: contentType)
    }

    /// Serves the files under `folder`; the route's path is used as a prefix. Content type comes from the file
    /// extension; `..` components and missing files answer 404.
    public static func directory(_ folder: URL) -> Self {
        Self(content: .directory(folder))
    }

    /// Redirects to `location` (a path like `/b` or an absolute URL) with `status` (302 by default; 301, 303,
    /// 307 and 308 also make sense). Chains and loops are several redirect routes pointing at each other.
    public static func redirect(to location: String, status: Int = 302) -> Self {
        Self(content: .bytes(Data()), status: status, contentType: nil).withHeader("Location", location)
    }

    /// Sends `pattern` over and over, forever, until the client closes the connection (counted as an abort).
    public static func endless(
        pattern: Data = Data(repeating: 0x55, count: 64 * 1024),
        contentType: String = "application/octet-stream"
    ) -> Self {
        Self(content: .endless(pattern: pattern), contentType: contentType)
    }

    /// Answers with whatever `body` returns for each request; it runs on the connection's thread, off any lock.
    public static func handler(
        _ body: @escaping @Sendable (LoopbackServer.Request) -> LoopbackServer.Response
    )
        -> Self
    {
        Self(content: .handler(body))
    }
}

// MARK: - Modifiers

extension LoopbackServer.Route {
    private func with(_ change: (inout Self) -> Void) -> Self {
        var copy = self
        change(&copy)
        return copy
    }

    /// Adds a header field sent with every response of this route.
    public func withHeader(_ name: String, _ value: String) -> Self { with { $0.headers.add(name, value) } }
    /// Sends `etag` (quote it yourself: `"\"v1\""`) and answers a matching `If-None-Match` with 304.
    public func withETag(_ etag: String) -> Self { with { $0.etag = etag } }
    /// Sends `Last-Modified` and answers `If-Modified-Since` at or after it with 304.
    public func withLastModified(_ date: Date) -> Self { with { $0.lastModified = date } }
    /// Sends `Cache-Control: value`.
    public func withCacheControl(_ value: String) -> Self { with { $0.cacheControl = value } }
    /// Sends `Content-Encoding: encoding` (the body must already be encoded, e.g. gzip bytes).
    public func withContentEncoding(_ encoding: String) -> Self { with { $0.contentEncoding = encoding } }
    /// Replaces the `Content-Type` (e.g. a wrong one on purpose).
    public func withContentType(_ type: String?) -> Self { with { $0.contentType = type } }
    /// Replaces the status code.
    public func withStatus(_ status: Int) -> Self { with { $0.status = status } }
    /// Sends the body with `Transfer-Encoding: chunked` in chunks of at most `chunkSize` bytes (4096 by default).
    public func chunked(chunkSize: Int = 4096) -> Self { with { $0.framing = .chunked(chunkSize: max(1, chunkSize)) } }
    /// Declares `Content-Length: length` whatever the real size, then closes the connection after the body.
    public func declaringContentLength(_ length: Int) -> Self { with { $0.framing = .declaredContentLength(length) } }
    /// Sends no length; the body ends when the connection closes.
    public func closeDelimited() -> Self { with { $0.framing = .closeDelimited } }
    /// Sends `bytes` at a time with `interval` between writes.
    public func dripping(bytes: Int, every interval: Duration) -> Self {
        with { $0.drip = Drip(bytes: bytes, interval: interval) }
    }
    /// Sends `afterBytes` body bytes and then nothing more, keeping the connection open.
    public func stalling(afterBytes: Int) -> Self { with { $0.interruption = .stall(afterBytes: afterBytes) } }
    /// Sends `afterBytes` body bytes and then resets the connection (RST).
    public func resetting(afterBytes: Int) -> Self { with { $0.interruption = .reset(afterBytes: afterBytes) } }
    /// Sends `afterBytes` body bytes and then closes the connection (FIN) although the length promised more.
    public func closing(afterBytes: Int) -> Self { with { $0.interruption = .close(afterBytes: afterBytes) } }
    /// Waits `delay` before sending the response head.
    public func delayed(by delay: Duration) -> Self { with { $0.headerDelay = delay } }
}
