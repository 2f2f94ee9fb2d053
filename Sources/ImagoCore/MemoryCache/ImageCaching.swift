/// A cache of decoded images, looked up synchronously on the request's hot path.
///
/// Implementations are thread-safe and fast (a lookup must not block on I/O). ``MemoryCache`` is the default.
public protocol ImageCaching: AnyObject, Sendable {
    /// The image stored for `key`, or `nil`. A hit may refresh the entry's recency.
    func image(for key: ImageCacheKey) -> ImageContainer?

    /// Stores `image` for `key`, replacing any previous entry; an implementation may decline (too large).
    func store(_ image: ImageContainer, for key: ImageCacheKey)

    /// Removes the entry for `key`, if any.
    func removeImage(for key: ImageCacheKey)

    /// Removes every entry whose key satisfies `predicate` (the pipeline drops every variant of a source with
    /// `removeImages { $0.source == sourceKey }`).
    func removeImages(where predicate: (ImageCacheKey) -> Bool)

    /// Removes every entry.
    func removeAll()
}
