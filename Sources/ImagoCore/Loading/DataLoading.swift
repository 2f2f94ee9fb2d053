import Foundation

/// Loads the bytes of a resource (over HTTP, from a file, from a `data:` URL …).
///
/// A loader reports a request's life as ``DataLoadEvent``s to one handler: zero or more `.progress` (and
/// `.partialData` when asked), then exactly one terminal `.finished` or `.failed`. After ``DataLoadTask/cancel()``
/// the handler receives `.failed(.cancelled)` at once and nothing after it. Handlers are called on an arbitrary
/// thread, never while the loader holds a lock. ``HTTPDataLoader`` is the default.
public protocol DataLoading: Sendable {
    /// Starts (or queues) loading `request`; returns a handle to cancel it or change its priority.
    func load(_ request: DataRequest, handler: @escaping @Sendable (DataLoadEvent) -> Void) -> any DataLoadTask
}

/// A handle on one load started by a ``DataLoading``.
public protocol DataLoadTask: AnyObject, Sendable {
    /// Cancels the load; the handler receives `.failed(.cancelled)` (once) unless it already finished.
    func cancel()

    /// Changes the priority while the load waits in a queue (no effect once it has started).
    func setPriority(_ priority: RequestPriority)
}

/// What to load.
public struct DataRequest: Sendable, Hashable {
    /// The resource.
    public var url: URL
    /// Extra HTTP header fields (authentication, `Accept`, …). Default: none.
    public var headers: [String: String]
    /// Queue priority. Default `.normal`.
    public var priority: RequestPriority
    /// Validators for a conditional request; with them, a `304` ends in a `.finished` response whose
    /// ``DataResponse/isNotModified`` is `true`. Default `nil` (unconditional).
    public var validators: HTTPValidators?
    /// Deliver `.partialData` events with the bytes received so far (for progressive previews). Default `false`.
    public var reportsPartialData: Bool

    /// A request with the defaults listed on each property.
    public init(
        url: URL, headers: [String: String] = [:], priority: RequestPriority = .normal,
        validators: HTTPValidators? = nil, reportsPartialData: Bool = false
    ) {
        self.url = url
        self.headers = headers
        self.priority = priority
        self.validators = validators
        self.reportsPartialData = reportsPartialData
    }
}

/// A completed load.
public struct DataResponse: Sendable, Hashable {
    /// The body (empty for a `304`).
    public var data: Data
    /// The final URL, after redirects.
    public var url: URL
    /// The HTTP status (200 for non-HTTP loaders).
    public var statusCode: Int
    /// The response headers, names lowercased.
    public var headers: [String: String]
    /// How the transfer went on the wire, when the loader measures it (``TransferMetrics``); default `nil`.
    public var metrics: TransferMetrics?

    /// A response from its parts (headers default to none, status to 200).
    public init(data: Data, url: URL, statusCode: Int = 200, headers: [String: String] = [:]) {
        self.data = data
        self.url = url
        self.statusCode = statusCode
        var lowered: [String: String] = [:]
        for (k, v) in headers { lowered[k.lowercased()] = v }
        self.headers = lowered
    }

    /// A response whose header names are already lowercase (a loader's fast path).
    package init(data: Data, url: URL, statusCode: Int, lowercasedHeaders: [String: String]) {
        self.data = data
        self.url = url
        self.statusCode = statusCode
        self.headers = lowercasedHeaders
    }

    /// Whether this answers a conditional request with "not modified" (status 304).
    public var isNotModified: Bool { statusCode == 304 }

    /// The validators this response carries (`ETag`, `Last-Modified`).
    public var validators: HTTPValidators {
        HTTPValidators(etag: headers["etag"], lastModified: headers["last-modified"])
    }
}

/// One step in the life of a load.
public enum DataLoadEvent: Sendable {
    /// Bytes received so far, and the total expected when the server said (`Content-Length`).
    case progress(received: Int64, expected: Int64?)
    /// All bytes received so far (only when ``DataRequest/reportsPartialData`` is set; throttled).
    case partialData(Data)
    /// The load completed.
    case finished(DataResponse)
    /// The load failed or was cancelled.
    case failed(DataLoadingError)
}

/// Why a load failed.
public enum DataLoadingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Cancelled by the caller.
    case cancelled
    /// The URL's scheme has no loader (only `http` and `https` by default).
    case unsupportedScheme(url: URL)
    /// The server answered with a status outside 200…299 (and not a 304 to a conditional request).
    case statusCode(Int, url: URL)
    /// No byte arrived for longer than the idle timeout.
    case timedOut(url: URL)
    /// The connection failed or broke (`reason` says how).
    case connectionFailed(url: URL, reason: String)
    /// The body ended before `Content-Length` was reached.
    case truncated(url: URL, expected: Int64, received: Int64)
    /// The body is larger than the loader's maximum.
    case bodyTooLarge(url: URL, limit: Int64)
    /// The `Content-Type` is not an image (nor unknown / octet-stream).
    case unacceptableContentType(String, url: URL)
    /// More redirects than the limit.
    case tooManyRedirects(url: URL, limit: Int)
    /// A file or data URL could not be read.
    case unreadable(url: URL, reason: String)
    /// A request modifier (``HTTPDataLoader/Configuration/requestModifiers``) threw instead of returning a request.
    case requestModifierFailed(url: URL, reason: String)
    /// The address policy (``AddressPolicy``) refused every address `host` resolved to; `address` is the last one
    /// tried. Carries the host only, never the URL with its query.
    case addressRefused(host: String, address: String)
    /// The URL cannot be requested as written: its host is no name a resolver takes (a control character, a space,
    /// a `!` …), checked before any lookup, or the transport refused its form (a redirect's `Location` included,
    /// then `url` is that target). Retrying cannot help.
    case invalidURL(url: URL, reason: String)
    /// The TLS handshake was refused over trust: the server's certificate did not verify (no trusted authority,
    /// expired, another name), its key matched no pinned key, or the client's own certificate or CA bundle could not
    /// be used. Retrying cannot help until the server or the trust settings change.
    case tlsRefused(url: URL, reason: String)

    /// Whether retrying later may succeed (connection loss, timeout, 429, 503 …).
    public var isTransient: Bool {
        switch self {
        case .timedOut, .connectionFailed, .truncated: true
        case .statusCode(let code, _): code == 408 || code == 429 || (code >= 500 && code <= 599 && code != 501)
        default: false
        }
    }

    /// A sentence naming the URL and what to do.
    public var description: String {
        switch self {
        case .cancelled: "the load was cancelled"
        case .unsupportedScheme(let url):
            "unsupported URL scheme '\(url.scheme ?? "")' in \(url.redactedString) (only http and https are loaded by default)"
        case .statusCode(let code, let url): "the server answered HTTP \(code) for \(url.redactedString)"
        case .timedOut(let url): "timed out waiting for data from \(url.redactedString)"
        case .connectionFailed(let url, let reason): "connection to \(url.redactedString) failed: \(reason)"
        case .truncated(let url, let expected, let received):
            "\(url.redactedString) ended after \(received) of \(expected) bytes"
        case .bodyTooLarge(let url, let limit): "\(url.redactedString) is larger than the limit of \(limit) bytes"
        case .unacceptableContentType(let type, let url):
            "\(url.redactedString) has content type '\(type)', which is not an image"
        case .tooManyRedirects(let url, let limit): "\(url.redactedString) redirected more than \(limit) times"
        case .unreadable(let url, let reason): "could not read \(url.redactedString): \(reason)"
        case .requestModifierFailed(let url, let reason):
            "the request modifier failed for \(url.redactedString): \(reason) (check the token or header it adds)"
        case .addressRefused(let host, let address):
            "the address policy refused \(address) for host \(host) (allow the host or its network to load it)"
        case .invalidURL(let url, let reason): "\(url.redactedString) cannot be requested: \(reason)"
        case .tlsRefused(let url, let reason):
            "the TLS connection to \(url.redactedString) was refused: \(reason) (check the server's certificate, or the"
                + " trusted authorities and pins)"
        }
    }
}

extension URL {
    /// The URL as text for logs, errors and events, with its secrets removed: no user name or password, and the
    /// values of query and fragment items named like secrets (`token`, `access_token`, `key`, `api_key`, `apikey`,
    /// `signature`, `sig`, `password`, `secret`, `auth`, case-insensitive, also as the last part of a longer
    /// name such as `X-Amz-Signature`) replaced by `<redacted>`. A URL without any is its `absoluteString`.
    ///
    /// ```swift
    /// URL(string: "https://bob:pw@cdn.example/a.jpg?token=abc&w=200")!.redactedString
    /// // "https://cdn.example/a.jpg?token=<redacted>&w=200"
    /// ```
    public var redactedString: String {
        URLRedaction.redacted(absoluteString)
    }
}
