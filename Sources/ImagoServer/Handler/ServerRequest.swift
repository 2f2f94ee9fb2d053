import Foundation

/// An HTTP request as the proxy needs it, whatever server received it.
public struct ServerRequest: Sendable, Hashable {
    /// The method (`GET`, `HEAD`, …).
    public var method: String
    /// The path exactly as sent (still percent-encoded), without the query.
    public var path: String
    /// Header fields, names lowercased.
    public var headers: [String: String]
    /// The address the request came from (IPv4 or IPv6 as text, `unix` for a Unix socket), when the server knows
    /// it. Default `nil`.
    public var clientAddress: String?

    /// A request from its parts (header names are lowercased here); `clientAddress` defaults to `nil`.
    public init(method: String, path: String, headers: [String: String] = [:], clientAddress: String? = nil) {
        self.method = method
        self.path = path
        self.clientAddress = clientAddress
        var lowered: [String: String] = [:]
        for (name, value) in headers { lowered[name.lowercased()] = value }
        self.headers = lowered
    }
}

/// The proxy's answer, for any server to send.
///
/// For `HEAD` the body is the one `GET` would send (so its length is known); the transport must not send it. A 304
/// has no body and a `Content-Length` header naming the length of the 200 it stands for, which the transport sends
/// as it is (RFC 9110 allows no other length there).
public struct ServerResponse: Sendable, Hashable {
    /// One header field.
    public struct Header: Sendable, Hashable {
        /// The field name.
        public var name: String
        /// The field value.
        public var value: String

        /// A field.
        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The HTTP status.
    public var status: Int
    /// Header fields in order, `Content-Length` included.
    public var headers: [Header]
    /// The body.
    public var body: Data

    /// A response from its parts.
    public init(status: Int, headers: [Header], body: Data) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The first value of header `name` (case-insensitive), if any.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}
