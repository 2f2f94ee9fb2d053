extension ImageRequest {
    /// Switches for one request: which caches it reads and writes, whether it may use the network, and what it
    /// delivers. Default: none (read and write every cache, load from the network, deliver only the final image).
    ///
    /// Every member is named as what the request does, in the third person (`skips…`, `delivers…`, `keeps…`):
    /// `request.options.contains(.skipsMemoryCacheReads)` reads as a sentence.
    public struct Options: OptionSet, Sendable, Hashable {
        /// The raw bits.
        public let rawValue: UInt32
        /// Options from raw bits.
        public init(rawValue: UInt32) { self.rawValue = rawValue }

        /// Skips reading the memory cache; the result is still stored there.
        public static let skipsMemoryCacheReads = Options(rawValue: 1 << 0)
        /// Does not store the result in the memory cache.
        public static let skipsMemoryCacheWrites = Options(rawValue: 1 << 1)
        /// Skips reading the disk cache; the loaded bytes are still stored there.
        public static let skipsDiskCacheReads = Options(rawValue: 1 << 2)
        /// Does not store anything in the disk cache.
        public static let skipsDiskCacheWrites = Options(rawValue: 1 << 3)
        /// Never loads from the source (network or custom loader): answers from the caches, or fails with
        /// ``ImagePipeline/Error/notCached(_:)`` when no cache holds the image.
        public static let skipsLoading = Options(rawValue: 1 << 4)
        /// Loads from the source again, ignoring both caches' contents; the result is still stored in both.
        public static let reloadsIgnoringCaches = Options(rawValue: 1 << 5)
        /// Loads even when the failure cache remembers a recent failure for this source (its own failure is still
        /// remembered, and a success clears the entry).
        public static let skipsFailureCacheReads = Options(rawValue: 1 << 6)
        /// Also stores the processed image, encoded, in the disk cache (whatever the pipeline's
        /// ``ImagePipeline/DataCachePolicy``), so that the next cold start skips decoding the original and processing.
        public static let storesProcessedImageOnDisk = Options(rawValue: 1 << 7)
        /// Never shares work with identical requests in flight (it still uses the caches).
        public static let disablesCoalescing = Options(rawValue: 1 << 8)
        /// Delivers progressive previews (``ImageTask/Event/preview(_:)``) while a progressive JPEG arrives.
        /// Previews are never cached.
        public static let deliversPreviews = Options(rawValue: 1 << 9)
        /// Keeps the encoded bytes in ``ImageContainer/originalData`` of the result (costs memory in the cache).
        public static let keepsOriginalData = Options(rawValue: 1 << 10)
        /// Decodes only the first frame of an animated image (a still thumbnail); part of the cache key.
        public static let decodesFirstFrameOnly = Options(rawValue: 1 << 11)
        /// After delivering a stale disk entry, also delivers the revalidated image when the server sends a new
        /// one (``ImageTask/Event/updated(_:)`` and the `updated` callback).
        public static let deliversUpdates = Options(rawValue: 1 << 12)
        /// Does not revalidate a stale disk entry in the background (delivers it as it is).
        public static let skipsRevalidation = Options(rawValue: 1 << 13)
        /// Does not remember this request's failures in the failure cache. With ``skipsFailureCacheReads``, the
        /// failure cache is neither consulted nor updated.
        public static let skipsFailureCacheWrites = Options(rawValue: 1 << 14)
        /// Revalidates a stale disk entry before delivering it, instead of delivering it and revalidating in the
        /// background (URLSession's `reloadRevalidatingCacheData` for stale entries; SDWebImage's
        /// `refreshCached`): the result is the entry with its freshness renewed when the origin answers 304, the
        /// new bytes (``ImageResponse/Source/network``) when it sends them, the origin's 404 or 410
        /// (``ImagePipeline/Error/dataLoadingFailed(url:underlying:)``) when the source is gone (the entry removed),
        /// its other 4xx that retrying does not change (401, 403, 451 …) when it refuses (the entry kept), and the
        /// stale entry (``ImageResponse/isStale``) when the conditional request fails otherwise (5xx, 429, timeout,
        /// connection). One conditional request serves
        /// every request for the source at once, whichever of the two ways they wait.
        public static let revalidatesBeforeDelivery = Options(rawValue: 1 << 15)

        /// Whether the memory cache may be read.
        var readsMemory: Bool { isDisjoint(with: [.skipsMemoryCacheReads, .reloadsIgnoringCaches]) }
        /// Whether the disk cache may be read.
        var readsDisk: Bool { isDisjoint(with: [.skipsDiskCacheReads, .reloadsIgnoringCaches]) }
    }
}
