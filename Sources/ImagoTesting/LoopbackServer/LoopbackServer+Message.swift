import Foundation

extension LoopbackServer {
    /// An ordered list of HTTP header fields with case-insensitive lookup by name.
    ///
    /// Empty by default. Setting a name through the subscript replaces every field of that name.
    public struct Headers: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
        /// The fields in the order they were received or added.
        public private(set) var fields: [Field]

        /// One header field as it appears on the wire.
        public struct Field: Sendable, Equatable {
            /// The field name as written (compare case-insensitively).
            public var name: String
            /// The field value, with surrounding whitespace trimmed.
            public var value: String
        }

        /// Creates an empty header list.
        public init() { fields = [] }

        /// Creates a header list from literal pairs, in order.
        public init(dictionaryLiteral elements: (String, String)...) {
            fields = elements.map { Field(name: $0.0, value: $0.1) }
        }

        /// The first value of the field named `name` (any case), or nil; setting replaces all fields of that name
        /// (nil removes them).
        public subscript(name: String) -> String? {
            get { fields.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value }
            set {
                fields.removeAll { $0.name.caseInsensitiveCompare(name) == .orderedSame }
                if let newValue { fields.append(Field(name: name, value: newValue)) }
            }
        }

        /// Appends a field without removing others of the same name.
        public mutating func add(_ name: String, _ value: String) {
            fields.append(Field(name: name, value: value))
        }

        /// Iterates the fields in order.
        public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }
    }

    /// A request as the server parsed it: request line, headers and (for requests with Content-Length) the body.
    public struct Request: Sendable {
        /// The method as sent (`GET`, `HEAD`, `POST` …).
        public var method: String
        /// The request target as sent, including any query (`/a.jpg?v=2`).
        public var target: String
        /// The path part of the target, without the query (`/a.jpg`); counters are kept per path.
        public var path: String
        /// The query after `?`, or nil when there is none.
        public var query: String?
        /// The protocol version (`HTTP/1.1`).
        public var version: String
        /// The header fields as received.
        public var headers: Headers
        /// The body read by Content-Length (empty for GET and HEAD without one).
        public var body: Data
    }

    /// A response produced by a `.handler` route: status, headers and a body held in memory.
    ///
    /// The server adds `Content-Length` (or the route's framing) and `Connection`; set `Content-Type` yourself.
    public struct Response: Sendable {
        /// The status code; 200 by default.
        public var status: Int
        /// Extra header fields; empty by default.
        public var headers: Headers
        /// The body; empty by default.
        public var body: Data

        /// Creates a response; by default `200` with no headers and an empty body.
        public init(status: Int = 200, headers: Headers = [:], body: Data = Data()) {
            self.status = status
            self.headers = headers
            self.body = body
        }

        /// Creates a response whose body is UTF-8 text, with `Content-Type: text/plain; charset=utf-8`.
        public init(status: Int = 200, text: String) {
            self.init(status: status, headers: ["Content-Type": "text/plain; charset=utf-8"], body: Data(text.utf8))
        }
    }
}

extension LoopbackServer.Request {
    /// Parses a request head (request line and header lines, without the blank line); nil when malformed.
    static func parse(head: ArraySlice<UInt8>) -> Self? {
        let text = String(decoding: head, as: UTF8.self)
        var lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)[...]
        guard let requestLine = lines.popFirst() else { return nil }
        let parts = requestLine.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 3, parts[2].hasPrefix("HTTP/"), parts[1].first == "/" || parts[1] == "*" else {
            return nil
        }
        var headers = LoopbackServer.Headers()
        for line in lines where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { return nil }
            let name = line[..<colon].trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty else { return nil }
            headers.add(name, line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        let target = String(parts[1])
        let queryStart = target.firstIndex(of: "?")
        return Self(
            method: String(parts[0]), target: target,
            path: String(target[..<(queryStart ?? target.endIndex)]),
            query: queryStart.map { String(target[target.index(after: $0)...]) },
            version: String(parts[2]), headers: headers, body: Data())
    }

    /// Whether the connection stays open after this request: HTTP/1.1 unless `Connection: close`, HTTP/1.0 only
    /// with `Connection: keep-alive`.
    var wantsKeepAlive: Bool {
        let connection = headers["Connection"]?.lowercased() ?? ""
        if version == "HTTP/1.0" { return connection.contains("keep-alive") }
        return !connection.contains("close")
    }
}
