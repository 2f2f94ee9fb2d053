import Foundation

/// What to load: a source (URL or your own bytes), the processors to apply, how large to decode, how urgently,
/// and how caches are used.
///
/// A small value type: copying it copies a reference to shared storage (copy-on-write), so passing requests
/// around is cheap. Defaults: no processors, full-size decode, `.normal` priority, no options, key policy `.url`.
///
/// ```swift
/// var request = ImageRequest(url: url, processors: [.resize(width: 256, height: 256)])
/// request.priority = .high
/// request.options = [.reloadsIgnoringCaches]
/// let image = try await pipeline.image(for: request)
/// ```
public struct ImageRequest: Sendable, CustomStringConvertible {
    /// Where the encoded bytes come from.
    public enum Source: Sendable {
        /// Loaded by the pipeline's ``DataLoading`` (HTTP by default).
        case url(URL)
        /// Bytes you already have; `id` names them in cache keys (two different images need two ids).
        case data(id: String, Data)
        /// Bytes produced by your closure (a database, an archive, …); `id` names them in cache keys. The closure
        /// runs once per coalesced load, off the caller's thread, and is cancelled with the request.
        case loader(id: String, @Sendable () async throws -> Data)
        /// Text that is not a URL, from a string literal (``init(stringLiteral:)``): loading it fails at once with
        /// ``ImagePipeline/Error/invalidURL(_:)``.
        case invalidURL(String)
    }

    private final class Storage: @unchecked Sendable {
        // @unchecked Sendable: never mutated after being shared; `mutate` copies it first unless uniquely owned.
        var source: Source
        var processors: [any ImageProcessing]
        var targetSize: PixelSize?
        var options: Options
        var headers: [String: String]
        var cacheKeyPolicy: CacheKeyPolicy
        var decodingOptions: DecodingOptions?
        var userInfo: String?
        /// The memory-cache key, made on first use (hashing a URL-sized key is not free, see BENCHMARKS.md
        /// `url-key`); cleared on mutation. Behind a ``Locked``, which ThreadSanitizer follows (see ``Locked`` on
        /// why not `Mutex`).
        let imageCacheKey = Locked<ImageCacheKey?>(nil)

        init(source: Source, processors: [any ImageProcessing], targetSize: PixelSize?) {
            self.source = source
            self.processors = processors
            self.targetSize = targetSize
            options = []
            headers = [:]
            cacheKeyPolicy = .url
            decodingOptions = nil
            userInfo = nil
        }

        func copy() -> Storage {
            let c = Storage(source: source, processors: processors, targetSize: targetSize)
            c.options = options
            c.headers = headers
            c.cacheKeyPolicy = cacheKeyPolicy
            c.decodingOptions = decodingOptions
            c.userInfo = userInfo
            return c
        }
    }

    private var storage: Storage
    /// How urgently to run; can also be changed on a running ``ImageTask``. Default `.normal`.
    public var priority: RequestPriority

    /// A request for the image at `url`.
    ///
    /// - Parameters:
    ///   - url: the image's address.
    ///   - processors: applied in order after decoding (default none).
    ///   - targetSize: decode downsampled to fit this size (default `nil`: full size).
    ///   - priority: default `.normal`.
    ///   - options: default none.
    public init(
        url: URL, processors: [any ImageProcessing] = [], targetSize: PixelSize? = nil,
        priority: RequestPriority = .normal, options: Options = []
    ) {
        self.init(
            source: .url(url), processors: processors, targetSize: targetSize, priority: priority, options: options)
    }

    /// A request for an image from any ``Source`` (see ``init(url:processors:targetSize:priority:options:)``).
    public init(
        source: Source, processors: [any ImageProcessing] = [], targetSize: PixelSize? = nil,
        priority: RequestPriority = .normal, options: Options = []
    ) {
        storage = Storage(source: source, processors: processors, targetSize: targetSize)
        storage.options = options
        self.priority = priority
    }

    private mutating func mutate(_ body: (Storage) -> Void) {
        if isKnownUniquelyReferenced(&storage) {
            storage.imageCacheKey.withLock { $0 = nil }
        } else {
            storage = storage.copy()
        }
        body(storage)
    }

    /// The memory-cache key, computed once per request value (see ``imageCacheKey``).
    var cachedImageCacheKey: ImageCacheKey {
        if let key = storage.imageCacheKey.withLock({ $0 }) { return key }
        let key = imageCacheKey(processorCount: storage.processors.count)
        storage.imageCacheKey.withLock { $0 = key }
        return key
    }

    /// Where the bytes come from.
    public var source: Source {
        get { storage.source }
        set { mutate { $0.source = newValue } }
    }

    /// The URL, when the source is ``Source/url(_:)``.
    public var url: URL? {
        if case .url(let url) = storage.source { return url }
        return nil
    }

    /// Processors applied in order after decoding; each one's identifier extends the cache key. Default none.
    public var processors: [any ImageProcessing] {
        get { storage.processors }
        set { mutate { $0.processors = newValue } }
    }

    /// Decode downsampled to fit within this size (aspect kept, never upscaled). Default `nil`: full size.
    public var targetSize: PixelSize? {
        get { storage.targetSize }
        set { mutate { $0.targetSize = newValue } }
    }

    /// How caches, the network and delivery behave for this request. Default none.
    public var options: Options {
        get { storage.options }
        set { mutate { $0.options = newValue } }
    }

    /// Extra HTTP header fields sent with the load (authentication, `Accept`, …). Requests with different headers
    /// never share a download, but do share cache entries (the key follows ``cacheKeyPolicy``). Default none.
    public var headers: [String: String] {
        get { storage.headers }
        set { mutate { $0.headers = newValue } }
    }

    /// How the cache key is made from the source. Default ``CacheKeyPolicy/url``.
    public var cacheKeyPolicy: CacheKeyPolicy {
        get { storage.cacheKeyPolicy }
        set { mutate { $0.cacheKeyPolicy = newValue } }
    }

    /// Decoding options for this request (pixel limit, frame limits, orientation …) replacing the pipeline's
    /// ``ImagePipeline/Configuration/decodingOptions``; ``targetSize`` and ``Options/decodesFirstFrameOnly`` still
    /// apply on top. Their fields that change pixels (``ImageCacheKey/Decoding``) are part of the cache keys, so an
    /// image decoded another way is never answered from the default decode's entry. Default `nil`: the pipeline's.
    public var decodingOptions: DecodingOptions? {
        get { storage.decodingOptions }
        set { mutate { $0.decodingOptions = newValue } }
    }

    /// A free-form tag carried through to events and log records (never part of a key). Default `nil`.
    public var userInfo: String? {
        get { storage.userInfo }
        set { mutate { $0.userInfo = newValue } }
    }

    /// The source (redacted URL or id) and processors, for logs.
    public var description: String {
        let ids = processors.map(\.identifier).joined(separator: ", ")
        let size = targetSize.map { " target=\($0)" } ?? ""
        return "ImageRequest(\(sourceDescription)\(size)\(ids.isEmpty ? "" : " processors=[\(ids)]"))"
    }

    /// Whether the bytes are already on this machine (`file:` or `data:` URL, or ``Source/data(id:_:)``): such
    /// sources are never copied into the disk cache (the memory cache still holds their images).
    public var isLocalSource: Bool {
        switch storage.source {
        case .url(let url):
            let scheme = url.scheme?.lowercased()
            return scheme == "file" || scheme == "data"
        case .data: return true
        case .loader, .invalidURL: return false
        }
    }

    /// The URL with credentials removed, or the custom source's id.
    var sourceDescription: String {
        switch storage.source {
        case .url(let url): url.redactedString
        case .data(let id, _): "data:\(id)"
        case .loader(let id, _): "loader:\(id)"
        case .invalidURL(let text): "invalid URL '\(text)'"
        }
    }
}

extension ImageRequest: ExpressibleByStringLiteral {
    /// A request for the URL in the literal. Text that is not a URL makes a request whose source is
    /// ``Source/invalidURL(_:)``: loading it fails with ``ImagePipeline/Error/invalidURL(_:)``.
    public init(stringLiteral value: String) {
        guard let url = URL(string: value) else {
            self.init(source: .invalidURL(value))
            return
        }
        self.init(url: url)
    }
}
