import Foundation

extension ImageRequest {
    /// How a request's cache key is made from its source. The same key drives the memory cache, the disk cache,
    /// coalescing of identical requests and the failure cache.
    public enum CacheKeyPolicy: Sendable, Hashable {
        /// The URL's absolute string (for a custom source: its id). The default.
        case url
        /// The URL without the named query items (for signed URLs whose tokens change on every request). Names are
        /// matched case-insensitively; a name ending in `*` matches every item with that prefix (`"X-Amz-*"`). The
        /// remaining items keep their order.
        ///
        /// ```swift
        /// request.cacheKeyPolicy = .droppingQueryItems(["token", "expires", "X-Amz-*"])
        /// ```
        case droppingQueryItems(Set<String>)
        /// Your own identifier, used as is in place of the URL.
        case custom(String)
    }

    /// The key of the encoded source bytes: the URL after the key policy, or the custom source's id.
    public var sourceKey: String {
        switch cacheKeyPolicy {
        case .custom(let id): return id
        case .url, .droppingQueryItems:
            switch source {
            case .data(let id, _), .loader(let id, _): return id
            case .url(let url):
                guard case .droppingQueryItems(let names) = cacheKeyPolicy else { return url.absoluteString }
                return Self.dropping(names, from: url)
            }
        }
    }

    /// The memory-cache key of the final image: source key, target size, first-frame flag and every processor.
    /// Computed once per request value and remembered (a copy shares it until either is changed).
    public var imageCacheKey: ImageCacheKey { cachedImageCacheKey }

    /// The disk-cache key of the processed image (equal to ``sourceKey`` when nothing changes the bytes).
    public var processedDataCacheKey: String { variantKey(processorCount: processors.count) }

    /// The key of the image after the first `processorCount` processors (0: the decoded image).
    func variantKey(processorCount: Int) -> String {
        let base = sourceKey
        if targetSize == nil, processorCount == 0, !options.contains(.decodesFirstFrameOnly) { return base }
        var parts: [String] = []
        if let size = targetSize { parts.append("size=\(size.width)x\(size.height)") }
        if options.contains(.decodesFirstFrameOnly) { parts.append("first-frame") }
        for p in processors.prefix(processorCount) { parts.append(p.identifier) }
        guard !parts.isEmpty else { return base }
        return base + Self.variantSeparator + parts.joined(separator: "|")
    }

    /// Separates a source key from its variant parts. A space never appears in an absolute URL string.
    static let variantSeparator = " |"

    /// Whether `key` is `sourceKey` itself or one of its variants (used by invalidation).
    static func key(_ key: String, belongsTo sourceKey: String) -> Bool {
        key == sourceKey || (key.hasPrefix(sourceKey) && key.dropFirst(sourceKey.count).hasPrefix(variantSeparator))
    }

    /// The key under which identical loads are shared: source key, headers and the options that change what the
    /// load does. Signed URLs that differ only in dropped query items share one load (made with the first URL).
    var loadKey: String {
        var key = sourceKey
        if !headers.isEmpty {
            key +=
                " #h:"
                + headers.sorted { $0.key < $1.key }.map { "\($0.key.lowercased())=\($0.value)" }
                .joined(separator: "&")
        }
        let affecting: Options = [
            .ignoreDiskCacheReads, .ignoreDiskCacheWrites, .cacheOnly, .reload, .retryFailed, .deliversPreviews,
            .skipsRevalidation, .ignoresFailureCache,
        ]
        let bits = options.intersection(affecting).rawValue
        if bits != 0 { key += " #o:\(bits)" }
        return key
    }

    static func dropping(_ names: Set<String>, from url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false),
            let items = components.percentEncodedQueryItems
        else { return url.absoluteString }
        let exact = Set(names.filter { !$0.hasSuffix("*") }.map { $0.lowercased() })
        let prefixes = names.filter { $0.hasSuffix("*") }.map { $0.dropLast().lowercased() }
        let kept = items.filter { item in
            let name = (item.name.removingPercentEncoding ?? item.name).lowercased()
            return !exact.contains(name) && !prefixes.contains { name.hasPrefix($0) }
        }
        components.percentEncodedQueryItems = kept.isEmpty ? nil : kept
        return components.string ?? url.absoluteString
    }
}
