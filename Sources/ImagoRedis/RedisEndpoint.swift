import Foundation

/// Where one Redis node listens and how to log in: parsed from `redis://[[user]:password@]host[:port][/db]` or
/// `unix:///path/to/redis.sock[?db=N&password=SECRET]`.
///
/// ```swift
/// let node = try RedisEndpoint(url: "redis://:s3cret@10.0.0.7:6379/2")
/// ```
public struct RedisEndpoint: Sendable, Hashable, CustomStringConvertible {
    /// How to reach the server.
    public enum Address: Sendable, Hashable {
        /// A TCP host (name or address) and port (default 6379).
        case tcp(host: String, port: Int)
        /// A unix-domain socket path.
        case unix(path: String)
    }

    /// How to reach the server.
    public var address: Address
    /// The ACL user name for `AUTH` (Redis 6+). Default `nil`: `AUTH password` alone.
    public var username: String?
    /// The password for `AUTH`. Default `nil`: no `AUTH`.
    public var password: String?
    /// The logical database selected with `SELECT`. Default 0.
    public var database: Int

    /// An endpoint from its parts (no password, database 0 by default).
    public init(address: Address, username: String? = nil, password: String? = nil, database: Int = 0) {
        self.address = address
        self.username = username
        self.password = password
        self.database = database
    }

    /// Parses a `redis://` or `unix://` URL.
    ///
    /// - Throws: ``RedisCache/Error/invalidURL(_:reason:)`` saying what to write instead.
    public init(url text: String) throws(RedisCache.Error) {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased() else {
            throw .invalidURL(text, reason: "expected redis://[:password@]host:port/db or unix:///path")
        }
        let redacted = Self.redacted(text)
        var query: [String: String] = [:]
        for item in components.queryItems ?? [] { query[item.name] = item.value ?? "" }
        switch scheme {
        case "redis":
            guard let host = components.host, !host.isEmpty else {
                throw .invalidURL(redacted, reason: "no host (write redis://host:6379)")
            }
            let port = components.port ?? 6379
            guard (1...65535).contains(port) else {
                throw .invalidURL(redacted, reason: "port \(port) is out of range")
            }
            address = .tcp(host: host, port: port)
            let path = components.path.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
            if path.isEmpty {
                database = 0
            } else if let db = Int(path), db >= 0 {
                database = db
            } else {
                throw .invalidURL(redacted, reason: "the path must be a database number (got '/\(path)')")
            }
            username = components.user.flatMap { $0.isEmpty ? nil : $0.removingPercentEncoding ?? $0 }
            password = components.password.map { $0.removingPercentEncoding ?? $0 }
        case "unix":
            let path = components.path
            guard path.hasPrefix("/") else {
                throw .invalidURL(redacted, reason: "the socket path must be absolute (write unix:///run/redis.sock)")
            }
            address = .unix(path: path)
            if let text = query["db"] {
                guard let db = Int(text), db >= 0 else {
                    throw .invalidURL(redacted, reason: "db must be a database number (got '\(text)')")
                }
                database = db
            } else {
                database = 0
            }
            username = query["user"]
            password = query["password"]
        default:
            throw .invalidURL(redacted, reason: "the scheme must be redis or unix (got '\(scheme)')")
        }
    }

    /// The URL without its password, for logs and node identity.
    public var description: String {
        switch address {
        case .tcp(let host, let port):
            let shownHost = host.contains(":") ? "[\(host)]" : host
            return "redis://\(shownHost):\(port)/\(database)"
        case .unix(let path): return "unix://\(path)" + (database == 0 ? "" : "?db=\(database)")
        }
    }

    /// `text` with any password replaced by `***`.
    static func redacted(_ text: String) -> String {
        guard var components = URLComponents(string: text) else { return "(unparseable URL)" }
        if components.password != nil { components.password = "***" }
        if let items = components.queryItems {
            components.queryItems = items.map {
                $0.name == "password" ? URLQueryItem(name: "password", value: "***") : $0
            }
        }
        return components.string ?? "(unparseable URL)"
    }
}
