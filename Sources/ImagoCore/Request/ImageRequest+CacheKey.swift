import Foundation

extension ImageRequest {
    /// How a request's cache key is made from its source. The same key drives the memory cache, the disk cache,
    /// coalescing of identical requests and the failure cache.
    public enum CacheKeyPolicy: Sendable, Hashable {
        /// The URL's absolute string without its secrets (for a custom source: its id). The default; see
        /// ``ImageRequest/sourceKey``.
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
    ///
    /// A URL's key holds no secret, because keys are written into disk cache entries and may be printed:
    /// - the user-info is dropped: `http://alice:pw@host/a.jpg` and `http://host/a.jpg` are one resource and share
    ///   their cache entries (the load itself still sends the credentials, and requests with different
    ///   credentials neither share a load in flight nor a remembered failure: see `failureKey`);
    /// - the value of each query or fragment item named like a secret (`token`, `access_token`, `key`, `api_key`,
    ///   `apikey`, `signature`, `sig`, `password`, `secret`, `auth`, case-insensitive, also as the last part of a
    ///   name like `X-Amz-Signature`; see `URL.redactedString`) is replaced by `sha256-` and its SHA-256 digest,
    ///   so URLs with different tokens keep different entries (a token may select what is served) while the
    ///   token never reaches the disk. Only a SHA-256 collision could make two such keys equal. (A digest of a
    ///   short password can be brute-forced offline by whoever reads the cache; so can the entry file names,
    ///   which were always the SHA-256 of the key. Signed URLs whose signature changes on every request should
    ///   use ``CacheKeyPolicy/droppingQueryItems(_:)``.)
    ///
    /// Every other byte of the URL's absolute string is kept as is. SDWebImage and Nuke use the URL string as
    /// is, credentials and tokens included.
    public var sourceKey: String {
        switch cacheKeyPolicy {
        case .custom(let id): return id
        case .url, .droppingQueryItems:
            switch source {
            case .data(let id, _), .loader(let id, _), .invalidURL(let id): return id
            case .url(let url):
                guard case .droppingQueryItems(let names) = cacheKeyPolicy else {
                    return URLRedaction.keyText(url.absoluteString)
                }
                return URLRedaction.keyText(Self.dropping(names, from: url))
            }
        }
    }

    /// The key of remembered failures: ``sourceKey``, plus the SHA-256 of the URL's user-info when it has one, so
    /// that a load refused for wrong credentials never fails a request made with the right ones.
    var failureKey: FailureCache.Key {
        guard case .url(let url) = source, let userInfo = URLRedaction.userInfo(in: url.absoluteString) else {
            return FailureCache.Key(source: sourceKey)
        }
        return FailureCache.Key(source: sourceKey, credentialDigest: SHA256.hash(String(userInfo)).hex)
    }

    /// The memory-cache key of the final image: source key, target size, first-frame flag, the pixel-changing fields
    /// of the request's own ``decodingOptions`` and every processor.
    /// Computed once per request value and remembered (a copy shares it until either is changed).
    public var imageCacheKey: ImageCacheKey { cachedImageCacheKey }

    /// The disk-cache key of the processed image: ``imageCacheKey``'s ``ImageCacheKey/dataCacheKey`` (equal to
    /// ``sourceKey`` when nothing changes the bytes).
    public var processedDataCacheKey: String { imageCacheKey.dataCacheKey }

    /// The key of the image after the first `processorCount` processors (0: the decoded image).
    ///
    /// The decoded image (0 processors) of a request whose first processor sets the decode target (see
    /// ``derivedDecodeTarget``) is smaller than the full decode, so its key says so (the variant's
    /// `decodeTarget`): it never shares a node or a memory entry with the full-size image. The keys after the first
    /// processor need no such part, since that processor's identifier determines the target.
    func imageCacheKey(processorCount: Int) -> ImageCacheKey {
        let derived = processorCount == 0 ? derivedDecodeTarget : nil
        let isFirstFrameOnly = options.contains(.decodesFirstFrameOnly)
        let decoding = decodingOptions.map(ImageCacheKey.Decoding.init)
        if targetSize == nil, derived == nil, processorCount == 0, !isFirstFrameOnly, decoding == nil {
            return ImageCacheKey(sourceKey)
        }
        let variant = ImageCacheKey.Variant(
            targetSize: targetSize, decodeTarget: derived, isFirstFrameOnly: isFirstFrameOnly, decoding: decoding,
            processors: processors.prefix(processorCount).map(\.identifier))
        return ImageCacheKey(source: sourceKey, variant: variant)
    }

    /// The decode target taken from the first processor (``ImageProcessing/decodeTarget``) when the request gives
    /// no ``targetSize``, else `nil`.
    var derivedDecodeTarget: DecodeTarget? {
        guard targetSize == nil, let first = processors.first else { return nil }
        return first.decodeTarget
    }

    /// The key under which identical loads are shared: the failure key, the full URL (when the key policy dropped
    /// part of it), the headers and the options that change what the load does. Signed URLs that differ only in
    /// dropped query items share cache entries but never a load: each caller's load is made with its own URL (its
    /// own credentials), so a refused token fails only its own caller.
    var loadKey: DataLoadKey {
        var url: URL?
        if case .url(let full) = source, cacheKeyPolicy != .url { url = full }
        let affecting: Options = [
            .skipsDiskCacheReads, .skipsDiskCacheWrites, .skipsLoading, .reloadsIgnoringCaches, .skipsFailureCacheReads,
            .deliversPreviews,
            .skipsRevalidation, .skipsFailureCacheWrites, .revalidatesBeforeDelivery,
        ]
        return DataLoadKey(
            failure: failureKey, url: url,
            headers: headers.sorted { $0.key < $1.key }.map {
                DataLoadKey.Header(name: $0.key.lowercased(), value: $0.value)
            },
            options: options.intersection(affecting))
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
