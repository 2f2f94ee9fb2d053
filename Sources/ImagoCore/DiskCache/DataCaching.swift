import Foundation

/// A cache of encoded image bytes and their HTTP metadata, usually on disk.
///
/// Implementations are thread-safe. Reads are synchronous and fast; writes may be staged and flushed in the
/// background, but a read after a write in the same process sees the written data. ``DiskCache`` is the default.
public protocol DataCaching: AnyObject, Sendable {
    /// The bytes and metadata stored for `key`, or `nil` (absent, expired by age, or found corrupt and removed).
    func entry(for key: String) -> DataCacheEntry?

    /// Stores `data` for `key` with `metadata`, replacing any previous entry.
    func store(_ data: Data, for key: String, metadata: DataCacheMetadata)

    /// Replaces the metadata of an existing entry (after a 304 revalidation); does nothing if absent.
    func updateMetadata(_ metadata: DataCacheMetadata, for key: String)

    /// Whether an entry exists for `key`, without reading its bytes.
    func containsData(for key: String) -> Bool

    /// Removes the entry for `key`, if any.
    func removeData(for key: String)

    /// Removes every entry.
    func removeAll()
}

extension DataCaching {
    /// The bytes stored for `key`, or `nil`.
    public func data(for key: String) -> Data? { entry(for: key)?.data }

    /// Stores `data` for `key` with metadata saying only "stored now".
    public func store(_ data: Data, for key: String) {
        store(data, for: key, metadata: DataCacheMetadata())
    }
}

/// The bytes of one disk-cache entry with their metadata.
public struct DataCacheEntry: Sendable, Hashable {
    /// The stored bytes, exactly as given to `store`.
    public var data: Data
    /// What is known about them.
    public var metadata: DataCacheMetadata

    /// An entry from its parts.
    public init(data: Data, metadata: DataCacheMetadata) {
        self.data = data
        self.metadata = metadata
    }
}

/// What a cache keeps beside an entry's bytes: times and HTTP validators, so that the pipeline can revalidate.
public struct DataCacheMetadata: Sendable, Hashable, Codable {
    /// When the bytes were stored (or last revalidated). Default: now.
    public var storedAt: Date
    /// When the entry stops being fresh and should be revalidated (from `Cache-Control: max-age`, `Expires` or a
    /// configured TTL). `nil` (the default): fresh until evicted.
    public var expiresAt: Date?
    /// The HTTP validators to send in a conditional request. Default: none.
    public var validators: HTTPValidators
    /// The response's `Content-Type`, if known. Default `nil`.
    public var contentType: String?
    /// Bytes the cache's user keeps beside the entry, opaque to the cache and returned as stored: facts about
    /// what the bytes were made from, for instance (`imago serve` keeps its outputs' source facts here). At most
    /// ``maximumExtraLength`` bytes; a cache refuses an entry with more, and empty is stored as `nil`. Default
    /// `nil`.
    public var extra: Data?

    /// The most bytes ``extra`` may hold: 16 KiB.
    public static let maximumExtraLength = 16 * 1024

    /// Metadata with the defaults listed on each property.
    public init(
        storedAt: Date = Date(), expiresAt: Date? = nil, validators: HTTPValidators = HTTPValidators(),
        contentType: String? = nil, extra: Data? = nil
    ) {
        self.storedAt = storedAt
        self.expiresAt = expiresAt
        self.validators = validators
        self.contentType = contentType
        self.extra = extra
    }

    /// Whether the entry is past its freshness at `now` (never, when `expiresAt` is `nil`).
    public func isStale(at now: Date = Date()) -> Bool {
        guard let expiresAt else { return false }
        return now >= expiresAt
    }
}

/// HTTP validators of a stored response, sent back as `If-None-Match` / `If-Modified-Since`.
public struct HTTPValidators: Sendable, Hashable, Codable {
    /// The `ETag` header, verbatim (with quotes and any `W/`). Default `nil`.
    public var etag: String?
    /// The `Last-Modified` header, verbatim. Default `nil`.
    public var lastModified: String?

    /// Validators from the two headers (both default `nil`).
    public init(etag: String? = nil, lastModified: String? = nil) {
        self.etag = etag
        self.lastModified = lastModified
    }

    /// Whether there is anything to revalidate with.
    public var isEmpty: Bool { etag == nil && lastModified == nil }
}
