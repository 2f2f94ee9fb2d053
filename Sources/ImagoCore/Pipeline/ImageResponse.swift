import Foundation

/// A delivered image with where it came from and what it cost.
public struct ImageResponse: Sendable {
    /// The cache layer or origin an image came from.
    public enum Source: String, Sendable, Hashable, CustomStringConvertible {
        /// The memory cache: no decoding, no I/O.
        case memory
        /// The disk cache (decoded, and processed unless the processed image itself was stored).
        case disk
        /// The shared tier (``ImagePipeline/Configuration/sharedCache``), decoded.
        case sharedCache
        /// The network (the pipeline's ``DataLoading``).
        case network
        /// The request's own ``ImageRequest/Source/data(id:_:)`` or ``ImageRequest/Source/loader(id:_:)``.
        case custom

        /// The case name.
        public var description: String { rawValue }
    }

    /// Time spent in each stage of the work that produced this image (`nil`: the stage did not run). Shared work
    /// reports the same figures to every request that joined it.
    public struct Metrics: Sendable, Hashable {
        /// Reading the disk cache.
        public var diskRead: Duration?
        /// Loading from the network or the custom source.
        public var load: Duration?
        /// Decoding.
        public var decode: Duration?
        /// All processors together.
        public var process: Duration?
        /// From the request's start to its delivery.
        public var total: Duration = .zero

        /// Empty metrics.
        public init() {}
    }

    /// The image.
    public var image: ImageContainer
    /// The request it answers.
    public var request: ImageRequest
    /// Where it came from.
    public var source: Source
    /// Whether the request joined work already in flight for an identical request.
    public var isCoalesced: Bool
    /// Whether this came from a disk entry past its freshness that is being revalidated in the background
    /// (requests with ``ImageRequest/Options/deliversUpdates`` then receive the new image, if any).
    public var isStale: Bool
    /// Time in each stage.
    public var metrics: Metrics

    /// A response from its parts (not coalesced, not stale, empty metrics by default).
    public init(
        image: ImageContainer, request: ImageRequest, source: Source, isCoalesced: Bool = false,
        isStale: Bool = false, metrics: Metrics = Metrics()
    ) {
        self.image = image
        self.request = request
        self.source = source
        self.isCoalesced = isCoalesced
        self.isStale = isStale
        self.metrics = metrics
    }
}
