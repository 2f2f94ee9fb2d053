import Foundation
import Imago

/// The image answered instead of an error when a source cannot be had (imgproxy's `IMGPROXY_FALLBACK_IMAGE_PATH`,
/// `IMGPROXY_FALLBACK_IMAGE_HTTP_CODE` and `IMGPROXY_FALLBACK_IMAGE_TTL`): a placeholder for missing avatars or
/// photos.
///
/// It stands in for the source when the origin answers 404 or fails, times out, sends too much, or sends something
/// that is not an image the decoders know or is over the pixel limit: it is then rendered with the URL's own options
/// and format, and its outputs are cached like any other (under the image's digest). A bad URL, a bad signature, a
/// source the policy refuses, and an overloaded server are still answered with their errors.
///
/// ```swift
/// var configuration = ImageProxy.Configuration()
/// configuration.fallbackImage = try FallbackImage(data: Data(contentsOf: placeholderURL), status: 404)
/// ```
public struct FallbackImage: Sendable {
    /// The encoded image, rendered like a source.
    public let data: Data
    /// Names the image in cache keys: a digest of its bytes, so that a new file never reuses old outputs.
    public let id: String
    /// The status of responses that carry it; `nil` keeps the failure's own status. Default 200.
    public let status: Int?
    /// `Cache-Control: public, max-age=` of responses that carry it; `nil` (the default) keeps the proxy's
    /// ``ImageProxy/Configuration/maxAge``. A shorter one lets caches ask again once the source exists.
    public let maxAge: Duration?

    /// The fallback image in `data` (any format `decoders` read, checked by decoding its first frame, at most
    /// `pixelLimit` pixels, default 50 megapixels), sent with `status` (default 200; `nil` keeps the failure's
    /// status) and `maxAge` (default `nil`: the proxy's).
    ///
    /// - Throws: the decoder's ``CodecError``, or ``ProxyError/invalidOption(name:reason:)`` for a status outside
    ///   200…599 or a negative `maxAge`.
    public init(
        data: Data, status: Int? = 200, maxAge: Duration? = nil, decoders: ImageDecoderRegistry = .makeDefault(),
        pixelLimit: Int = 50_000_000
    ) throws {
        if let status, !(200...599).contains(status) {
            throw ProxyError.invalidOption(name: "fallback status", reason: "must be from 200 to 599")
        }
        if let maxAge, maxAge < .zero {
            throw ProxyError.invalidOption(name: "fallback max-age", reason: "must not be negative")
        }
        let options = DecodingOptions(pixelLimit: pixelLimit, decodesFirstFrameOnly: true)
        _ = try decoders.decode(data, options: options)
        self.data = data
        id = String(data.withUnsafeBytes { SHA256.hash($0) }.hex.prefix(32))
        self.status = status
        self.maxAge = maxAge
    }

    /// The source URL the image is rendered under (its cache keys): `imago-fallback:` and the digest.
    var sourceURL: URL { URL(string: "imago-fallback:\(id)") ?? URL(fileURLWithPath: "/imago-fallback/\(id)") }

    /// Whether a render that failed with `error` is answered with this image: the source could not be had (the
    /// origin's fault or the source's), not the client's URL, the policy or the server's load.
    static func replaces(_ error: ProxyError) -> Bool {
        switch error {
        case .notFound, .originRefused, .upstreamFailed, .originRequestFailed, .upstreamTimedOut, .sourceTooLarge,
            .unsupportedSource, .undecodableSource, .imageTooLarge:
            true
        default: false
        }
    }
}
