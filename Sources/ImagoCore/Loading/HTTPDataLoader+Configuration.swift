import Foundation

extension HTTPDataLoader {
    /// The default ``Configuration/userAgent``: `Imago/` and the library's version (``ImagoVersion/current``).
    public static let defaultUserAgent = "Imago/" + ImagoVersion.current

    /// Changes a request just before it goes out (for example to add a fresh access token); may suspend. A thrown
    /// error fails the load with ``DataLoadingError/requestModifierFailed(url:reason:)``.
    public typealias RequestModifier = @Sendable (DataRequest) async throws -> DataRequest

    /// Which `Content-Type`s a response may have.
    public enum ContentTypeValidation: Sendable {
        /// `image/*`, a missing or empty type, `application/octet-stream`, `binary/octet-stream` and other
        /// generic binary types; rejects text, HTML, JSON, video and the rest (the default).
        case imagesAndBinary
        /// Accepts any content type.
        case any
        /// Accepts a type when the closure returns `true` (it receives the lowercased media type without
        /// parameters, or `nil` when the header is absent).
        case custom(@Sendable (String?) -> Bool)

        /// Whether `contentType` (the raw header, or `nil`) is acceptable.
        public func accepts(_ contentType: String?) -> Bool {
            let mediaType = contentType.map(Self.mediaType)
            switch self {
            case .any: return true
            case .custom(let accepts): return accepts(mediaType)
            case .imagesAndBinary:
                guard let mediaType, !mediaType.isEmpty else { return true }
                if mediaType.hasPrefix("image/") || mediaType.hasPrefix("binary/") { return true }
                return Self.binaryTypes.contains(mediaType)
            }
        }

        /// The part before `;`, without surrounding blanks, ASCII-lowercased (bytes: this runs for every response).
        static func mediaType(_ value: String) -> String {
            var value = value
            return value.withUTF8 { bytes in
                var end = bytes.firstIndex(of: UInt8(ascii: ";")) ?? bytes.count
                var start = 0
                while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
                while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
                return String(unsafeUninitializedCapacity: end - start) { out in
                    for i in start..<end {
                        let byte = bytes[i]
                        out[i - start] = byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
                    }
                    return end - start
                }
            }
        }

        private static let binaryTypes: Set<String> = [
            "application/octet-stream", "application/binary", "application/x-binary", "binary",
            "application/unknown", "unknown/unknown", "application/x-octet-stream",
        ]
    }

    /// How an ``HTTPDataLoader`` behaves. Every field documents its default.
    ///
    /// ```swift
    /// var configuration = HTTPDataLoader.Configuration()
    /// configuration.maximumConcurrentTransfers = 4
    /// configuration.requestModifiers = [{ request in
    ///     var request = request
    ///     request.headers["Authorization"] = "Bearer \(try await tokens.fresh())"
    ///     return request
    /// }]
    /// let loader = HTTPDataLoader(configuration: configuration)
    /// ```
    public struct Configuration: Sendable {
        /// The most transfers on the network at once; further requests wait in a priority queue. Default 6.
        public var maximumConcurrentTransfers: Int = 6
        /// Which of the waiting requests of equal priority starts first. Default `.fifo`.
        public var queueOrder: QueueOrder = .fifo
        /// The longest time without receiving a byte before the load fails with `.timedOut`. Default 15 s.
        /// FoundationNetworking counts it in whole seconds: it is rounded up, to at least 1 s.
        public var idleTimeout: Duration = .seconds(15)
        /// The longest time one attempt may take in total before it fails with `.timedOut`. Default 60 s.
        public var resourceTimeout: Duration = .seconds(60)
        /// The most redirects followed; one more fails with `.tooManyRedirects`. Default 10.
        public var maximumRedirects: Int = 10
        /// The largest body accepted, enforced while streaming and against `Content-Length`; larger fails with
        /// `.bodyTooLarge`. Default 64 MiB.
        public var maximumBodySize: Int64 = 64 << 20
        /// The URL schemes loaded (lowercase); others fail with `.unsupportedScheme`. Default `http`, `https`.
        public var acceptedSchemes: Set<String> = ["http", "https"]
        /// Which response content types are accepted. Default ``ContentTypeValidation/imagesAndBinary``.
        public var contentTypeValidation: ContentTypeValidation = .imagesAndBinary
        /// When failed loads are retried. Default ``RetryPolicy/default`` (2 retries of transient failures).
        public var retryPolicy: RetryPolicy = .default
        /// Applied in order to every request when its transfer starts (after coalescing, so they run once per
        /// transfer). Default none.
        public var requestModifiers: [RequestModifier] = []
        /// The shortest interval between two `.progress` (and `.partialData`) events of one transfer. Default 50 ms.
        public var progressInterval: Duration = .milliseconds(50)
        /// Request headers (lowercase names) ignored when deciding whether two requests can share one transfer,
        /// because they do not change the response. Every other header, and the validators, must match.
        /// Default: `traceparent`, `tracestate`, `x-request-id`, `x-correlation-id`.
        public var coalescingIgnoredHeaders: Set<String> = [
            "traceparent", "tracestate", "x-request-id", "x-correlation-id",
        ]
        /// Headers sent with every request unless the request sets them. Default none.
        public var additionalHeaders: [String: String] = [:]
        /// The `User-Agent` of requests that name none, in their own headers or in ``additionalHeaders``. Many
        /// origins refuse or slow down requests without one (Wikimedia answers 403), so one is sent by default, as
        /// SDWebImage, imgproxy and thumbor do. `nil`: none. Default ``HTTPDataLoader/defaultUserAgent``.
        public var userAgent: String? = HTTPDataLoader.defaultUserAgent

        /// What every request is sent before its own headers: ``additionalHeaders``, with ``userAgent`` when they
        /// name no `User-Agent`.
        package var defaultHeaders: [String: String] {
            guard let userAgent, !additionalHeaders.keys.contains(where: { $0.lowercased() == "user-agent" }) else {
                return additionalHeaders
            }
            var headers = additionalHeaders
            headers["User-Agent"] = userAgent
            return headers
        }

        /// The defaults listed on each field.
        public init() {}
    }
}
