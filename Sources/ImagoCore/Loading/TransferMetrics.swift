import Foundation

/// How one HTTP transfer went on the wire, as measured by a loader that can see it (``DataResponse/metrics``).
/// Every phase is measured from the start of the attempt; a phase that did not happen (a reused connection needs
/// no DNS, connect or TLS) is `nil`.
public struct TransferMetrics: Sendable, Hashable, CustomStringConvertible {
    /// The HTTP version of the final response.
    public enum HTTPVersion: Sendable, Hashable, CustomStringConvertible {
        /// HTTP/1.0.
        case http1_0
        /// HTTP/1.1.
        case http1_1
        /// HTTP/2.
        case http2
        /// HTTP/3 over QUIC.
        case http3
        /// A version the loader could not name.
        case unknown

        /// `HTTP/1.1`, `HTTP/2` …
        public var description: String {
            switch self {
            case .http1_0: "HTTP/1.0"
            case .http1_1: "HTTP/1.1"
            case .http2: "HTTP/2"
            case .http3: "HTTP/3"
            case .unknown: "HTTP/?"
            }
        }
    }

    /// Until the host name was resolved.
    public var nameLookup: Duration?
    /// Until the TCP connection was established.
    public var connect: Duration?
    /// Until the TLS handshake completed (`nil` for plain HTTP).
    public var tlsHandshake: Duration?
    /// Until the first byte of the response arrived.
    public var firstByte: Duration?
    /// The whole attempt, including redirects.
    public var total: Duration
    /// The protocol of the final response.
    public var httpVersion: HTTPVersion
    /// The address connected to last (`127.0.0.1`, `::1`), or `nil` when unknown.
    public var remoteAddress: String?
    /// The port connected to last, or `nil` when unknown.
    public var remotePort: Int?
    /// The number of redirects followed.
    public var redirectCount: Int
    /// Whether the transfer reused a connection opened before it.
    public var reusedConnection: Bool

    /// Metrics from their parts (the optional phases default to `nil`, the rest to none).
    public init(
        nameLookup: Duration? = nil, connect: Duration? = nil, tlsHandshake: Duration? = nil,
        firstByte: Duration? = nil, total: Duration, httpVersion: HTTPVersion, remoteAddress: String? = nil,
        remotePort: Int? = nil, redirectCount: Int = 0, reusedConnection: Bool = false
    ) {
        self.nameLookup = nameLookup
        self.connect = connect
        self.tlsHandshake = tlsHandshake
        self.firstByte = firstByte
        self.total = total
        self.httpVersion = httpVersion
        self.remoteAddress = remoteAddress
        self.remotePort = remotePort
        self.redirectCount = redirectCount
        self.reusedConnection = reusedConnection
    }

    /// One line: version, address and phases.
    public var description: String {
        func ms(_ d: Duration?) -> String {
            guard let d else { return "-" }
            return String(
                format: "%.1f ms", Double(d.components.seconds) * 1e3 + Double(d.components.attoseconds) / 1e15)
        }
        return "\(httpVersion) \(remoteAddress ?? "?"):\(remotePort.map(String.init) ?? "?") dns \(ms(nameLookup)) "
            + "connect \(ms(connect)) tls \(ms(tlsHandshake)) first byte \(ms(firstByte)) total \(ms(total))"
            + (reusedConnection ? " (reused)" : "")
    }
}
