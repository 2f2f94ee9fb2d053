import ImagoCore

/// Why the proxy answered with an error, each case with the HTTP status that says whose fault it is. Nothing a
/// client or an origin can send ends in a 500: only ``internalFailure(_:)`` does.
public enum ProxyError: Error, Sendable, Hashable, CustomStringConvertible {
    /// 400: the URL is not of imgproxy's form.
    case malformedURL(String)
    /// 400: an option is not one the proxy knows (`name` as given).
    case unknownOption(name: String)
    /// 400: an option's arguments are invalid (`name` as given; `reason` says what it accepts).
    case invalidOption(name: String, reason: String)
    /// 403: an option the server does not allow in URLs (`name` as given; imgproxy's
    /// `IMGPROXY_ALLOWED_PROCESSING_OPTIONS`, ``ImageProxy/Configuration/allowedProcessingOptions``).
    case forbiddenOption(name: String)
    /// 400: the source is not an absolute `http` or `https` URL.
    case invalidSource(String)
    /// 400: the output format asked for has no encoder here.
    case formatNotAvailable(ImageFormat)
    /// 403: the signature does not match.
    case badSignature
    /// 403: an unsigned URL (`insecure`, `_`) while the server requires signatures.
    case unsignedURL
    /// 403: the server requires `Authorization: Bearer` with its secret and the request did not carry it.
    case unauthorized
    /// 403: the source's host is not on the allow list or is a private address.
    case sourceNotAllowed(host: String)
    /// 404: the origin has no such image (or the route does not exist).
    case notFound(String)
    /// 405: only GET and HEAD are served.
    case methodNotAllowed(String)
    /// 413: the source is larger than the byte limit.
    case sourceTooLarge(limit: Int64)
    /// 415: the source is not an image the decoders know.
    case unsupportedSource(String)
    /// 415: the source is not a valid `format` image: its decoder refused it, or the decoder's child process ended
    /// on it. `reason` (the decoder's sentence, or the child's signal) goes to the access log only
    /// (``logDescription``): it names the server's libraries, not the client's request.
    case undecodableSource(format: ImageFormat, reason: String)
    /// 422: the image is over the pixel (or frame) limit.
    case imageTooLarge(String)
    /// 422: the output format asked for cannot be made from the source's format (`svg` from a raster source).
    case outputFormatUnavailable(ImageFormat, source: ImageFormat)
    /// The origin's own 4xx (other than 404, 407, 408 and 416), passed on as imgproxy does: the origin refused the
    /// image (`403`), it is gone (`410`), or the origin is limiting this server (`429`).
    case originRefused(status: Int)
    /// 502: the origin failed (connection, a 5xx or 3xx it did not follow, broken body).
    case upstreamFailed(String)
    /// 502: the request to the origin could not be made: its store's credentials could not be had (a token
    /// exchange refused, no instance role). `reason` goes to the access log only (``logDescription``), since it
    /// names the server's own set-up (files, endpoints), not the client's request.
    case originRequestFailed(reason: String)
    /// 504: the origin did not answer in time.
    case upstreamTimedOut
    /// 503: the render queue is full; retry after `retryAfterSeconds`.
    case overloaded(retryAfterSeconds: Int)
    /// 503 with `Retry-After`: the request waited longer than ``ImageProxy/Configuration/requestTimeout`` for its
    /// output (imgproxy's `IMGPROXY_TIMEOUT`); the render goes on and caches it for the retry.
    case requestTimedOut(after: Duration)
    /// 500: the proxy itself failed (an encoder error).
    case internalFailure(String)

    /// The HTTP status.
    public var status: Int {
        switch self {
        case .malformedURL, .unknownOption, .invalidOption, .invalidSource, .formatNotAvailable: 400
        case .badSignature, .unsignedURL, .unauthorized, .sourceNotAllowed, .forbiddenOption: 403
        case .notFound: 404
        case .methodNotAllowed: 405
        case .sourceTooLarge: 413
        case .unsupportedSource, .undecodableSource: 415
        case .imageTooLarge, .outputFormatUnavailable: 422
        case .originRefused(let status): status
        case .upstreamFailed, .originRequestFailed: 502
        case .upstreamTimedOut: 504
        case .overloaded, .requestTimedOut: 503
        case .internalFailure: 500
        }
    }

    /// A sentence for the JSON body (never contains a source URL's secrets).
    public var description: String {
        switch self {
        case .malformedURL(let reason): "malformed URL: \(reason)"
        case .unknownOption(let name): "unknown option '\(name)'"
        case .invalidOption(let name, let reason): "invalid option '\(name)': \(reason)"
        case .forbiddenOption(let name): "option '\(name)' is not allowed on this server"
        case .invalidSource(let reason): "invalid source URL: \(reason)"
        case .formatNotAvailable(let format): "option 'format': no encoder for \(format) is available on this server"
        case .badSignature: "invalid signature"
        case .unsignedURL: "unsigned URLs are not accepted (sign the URL, or start the server with --unsigned)"
        case .unauthorized: "missing or wrong Authorization: Bearer secret"
        case .sourceNotAllowed(let host): "source host '\(host)' is not allowed"
        case .notFound(let what): "not found: \(what)"
        case .methodNotAllowed(let method): "method \(method) is not allowed (use GET or HEAD)"
        case .sourceTooLarge(let limit): "the source is larger than the limit of \(limit) bytes"
        case .unsupportedSource(let reason): "the source is not a supported image: \(reason)"
        case .undecodableSource(let format, _):
            "the source is not a supported image: the source is not a valid \(format) image"
        case .imageTooLarge(let reason): "the image is too large: \(reason)"
        case .outputFormatUnavailable(let format, let source):
            "option 'format': \(format) cannot be made from a \(source) source"
        case .originRefused(let status): "the origin answered HTTP \(status)"
        case .upstreamFailed(let reason): "the origin failed: \(reason)"
        case .originRequestFailed: "the origin failed: the request to the origin could not be made"
        case .upstreamTimedOut: "the origin timed out"
        case .overloaded: "the server is busy; retry later"
        case .requestTimedOut(let after):
            "the output took longer than \(after.readableText); it is still being made, retry later"
        case .internalFailure(let reason): "internal error: \(reason)"
        }
    }

    /// The sentence for the access log: ``description``, with the reason the client is not told when there is
    /// one (``originRequestFailed(reason:)``, ``undecodableSource(format:reason:)``), so that an operator sees why a
    /// store's credentials failed, or that a decoder's child process crashed.
    public var logDescription: String {
        switch self {
        case .originRequestFailed(let reason), .undecodableSource(_, let reason): description + " (\(reason))"
        default: description
        }
    }
}
