import CCurl
import Foundation
import ImagoCore

extension CurlDataLoader {
    /// Which HTTP version a transfer asks for.
    public enum HTTPVersion: Sendable, Hashable {
        /// HTTP/2 over TLS when the server offers it (ALPN), HTTP/1.1 otherwise and for plain `http` (the default).
        case http2OverTLS
        /// HTTP/1.1 only.
        case http1_1
    }

    /// The oldest TLS version accepted.
    public enum TLSVersion: Sendable, Hashable {
        /// TLS 1.2 (the default).
        case tls1_2
        /// TLS 1.3.
        case tls1_3
    }

    /// How certificates are checked. Verification of the peer and host name is always on.
    public struct TLSOptions: Sendable, Hashable {
        /// A PEM file of the certificate authorities to trust instead of the system's. Default `nil` (the system's).
        public var caBundlePath: String?
        /// SHA-256 hashes of the server public keys accepted, each base64 (`"sha256//…"` or the bare base64);
        /// when not empty, a server whose key is not listed is refused. Default none (no pinning).
        public var pinnedPublicKeys: [String] = []
        /// The oldest TLS version accepted. Default ``TLSVersion/tls1_2``.
        public var minimumVersion: TLSVersion = .tls1_2
        /// A PEM file of the client certificate to present, for servers that ask for one (mutual TLS). Default
        /// `nil`: none.
        public var clientCertificatePath: String?
        /// The PEM file of that certificate's private key (unencrypted). Default `nil`: in the certificate's file.
        public var clientKeyPath: String?
        /// The certificate authorities to trust instead of the system's, as PEM text rather than a file (imgproxy's
        /// `IMGPROXY_OPEN_TELEMETRY_SERVER_CERT`); it takes precedence over ``caBundlePath``. Default `nil`.
        public var caBundlePEM: String?
        /// The client certificate to present, as PEM text (imgproxy's `IMGPROXY_OPEN_TELEMETRY_CLIENT_CERT`), with
        /// ``clientKeyPEM``; it takes precedence over ``clientCertificatePath``. Default `nil`.
        public var clientCertificatePEM: String?
        /// That certificate's private key (unencrypted), as PEM text (`IMGPROXY_OPEN_TELEMETRY_CLIENT_KEY`). Default
        /// `nil`.
        public var clientKeyPEM: String?

        /// The defaults listed on each field.
        public init() {}

        /// These options on `handle`: peer and host verified, the minimum version, the CA bundle (file or text), the
        /// pins, the client certificate (files or text).
        func apply(to handle: UnsafeMutableRawPointer) {
            _ = imago_easy_setopt_long(handle, CURLOPT_SSL_VERIFYPEER, 1)
            _ = imago_easy_setopt_long(handle, CURLOPT_SSL_VERIFYHOST, 2)
            _ = imago_easy_setopt_long(
                handle, CURLOPT_SSLVERSION,
                minimumVersion == .tls1_3 ? imago_sslversion_tls1_3 : imago_sslversion_tls1_2)
            if let caBundlePath { _ = imago_easy_setopt_string(handle, CURLOPT_CAINFO, caBundlePath) }
            if !pinnedPublicKeys.isEmpty {
                let pins = pinnedPublicKeys.map { $0.hasPrefix("sha256//") ? $0 : "sha256//\($0)" }
                _ = imago_easy_setopt_string(handle, CURLOPT_PINNEDPUBLICKEY, pins.joined(separator: ";"))
            }
            if let clientCertificatePath {
                _ = imago_easy_setopt_string(handle, CURLOPT_SSLCERT, clientCertificatePath)
                _ = imago_easy_setopt_string(handle, CURLOPT_SSLKEY, clientKeyPath ?? clientCertificatePath)
            }
            for (option, text) in [
                (CURLOPT_CAINFO_BLOB, caBundlePEM), (CURLOPT_SSLCERT_BLOB, clientCertificatePEM),
                (CURLOPT_SSLKEY_BLOB, clientKeyPEM),
            ] {
                guard let text else { continue }
                _ = Array(text.utf8).withUnsafeBytes {
                    imago_easy_setopt_blob(handle, option, $0.baseAddress, $0.count)
                }
            }
        }
    }

    /// Whether and which proxy is used.
    public enum ProxyPolicy: Sendable, Hashable {
        /// The usual environment variables (`http_proxy`, `HTTPS_PROXY`, `ALL_PROXY`, `NO_PROXY`), as curl reads
        /// them (the default).
        case environment
        /// No proxy, whatever the environment says.
        case none
        /// This proxy URL (`http://proxy:3128`, `socks5h://…`), for every request.
        case url(String)
    }

    /// A fixed answer for a host name, like curl's `--resolve`: connections to `host:port` go to `addresses`
    /// without asking DNS. The address policy still applies to them.
    public struct ResolveOverride: Sendable, Hashable {
        /// The host name as written in URLs.
        public var host: String
        /// The port the override applies to.
        public var port: Int
        /// The addresses to use (IPv4 or IPv6 text).
        public var addresses: [String]

        /// An override of `host:port` to `addresses`.
        public init(host: String, port: Int, addresses: [String]) {
            self.host = host
            self.port = port
            self.addresses = addresses
        }

        var curlEntry: String {
            let written = addresses.map { $0.contains(":") && !$0.hasPrefix("[") ? "[\($0)]" : $0 }
            return "\(host):\(port):\(written.joined(separator: ","))"
        }
    }

    /// How a ``CurlDataLoader`` behaves. Every field documents its default.
    ///
    /// ```swift
    /// var configuration = CurlDataLoader.Configuration()
    /// configuration.addressPolicy = .publicOnly
    /// configuration.loading.maximumConcurrentTransfers = 8
    /// let loader = CurlDataLoader(configuration: configuration)
    /// ```
    public struct Configuration: Sendable {
        /// What every loader shares: queue, concurrency, timeouts, redirects, body limit, content types, retries,
        /// request modifiers, progress interval, coalescing. Default ``HTTPDataLoader/Configuration/init()``.
        /// The idle timeout is curl's low-speed time, in whole seconds (rounded up, at least 1 s).
        public var loading = HTTPDataLoader.Configuration()
        /// Which addresses may be connected to, checked for every connection and redirect hop. Default
        /// ``AddressPolicy/any``.
        public var addressPolicy: AddressPolicy = .any
        /// The HTTP version asked for. Default ``HTTPVersion/http2OverTLS``.
        public var httpVersion: HTTPVersion = .http2OverTLS
        /// The most connections open to one host (HTTP/2 streams share one). Default 6.
        public var maximumConnectionsPerHost: Int = 6
        /// The most connections open in total. Default 64.
        public var maximumConnections: Int = 64
        /// The longest time to establish a connection (DNS, TCP and TLS). Default 10 s.
        public var connectTimeout: Duration = .seconds(10)
        /// How long a connection may sit idle and still be reused for a later request to its host (imgproxy's
        /// `IMGPROXY_CLIENT_KEEP_ALIVE_TIMEOUT`; libcurl's `CURLOPT_MAXAGE_CONN`, in whole seconds, rounded up):
        /// shorter for origins or load balancers that close idle connections sooner, so a request does not meet
        /// one closed under it. Zero: every request opens a connection of its own and closes it. Default 118 s,
        /// libcurl's.
        public var idleConnectionLifetime: Duration = .seconds(118)
        /// Certificate checks. Default ``TLSOptions/init()``.
        public var tls = TLSOptions()
        /// The proxy. Default ``ProxyPolicy/environment``.
        public var proxy: ProxyPolicy = .environment
        /// Fixed DNS answers (like `curl --resolve`). Default none.
        public var resolveOverrides: [ResolveOverride] = []
        /// The most bytes of interrupted downloads kept in memory to resume them (resumable downloads, on by
        /// default): when a response with a strong `ETag` or a `Last-Modified` and `Accept-Ranges: bytes` is cut
        /// (reset, timeout, cancellation of its last caller), its bytes are kept and the next attempt asks for the
        /// rest with `Range` and `If-Range`; a `206` is appended, a `200` starts over. Oldest evicted first; 0
        /// turns resuming off. Default 32 MiB.
        public var resumableBytesLimit: Int = 32 << 20
        /// AWS Signature Version 4 for the requests to some hosts (private S3 objects); the first signing whose
        /// hosts match a request's URL signs it, and requests no signing matches go unsigned. Default none.
        public var awsSigning: [AWSSigning] = []
        /// Azure Storage Shared Key signatures for the requests to some hosts (private blobs); the first signing
        /// whose hosts match a request's URL signs it. Default none.
        public var azureSigning: [AzureSharedKeySigning] = []

        /// The defaults listed on each field.
        public init() {}

        /// The defaults, with `loading` as the shared loader settings.
        public init(loading: HTTPDataLoader.Configuration) {
            self.loading = loading
        }
    }
}
