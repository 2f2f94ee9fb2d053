import Foundation

/// A source's encoded bytes as ``ImagePipeline/data(for:)`` delivers them: never decoded, processed or re-encoded.
public struct ImageDataResponse: Sendable {
    /// The bytes, exactly as the source sent them.
    public var data: Data
    /// Their format, recognised from the bytes by the pipeline's decoders (``ImageFormat/unknown`` when none of
    /// them knows it; bytes that no decoder claims are delivered but never stored on disk).
    public var format: ImageFormat
    /// Where they came from: ``ImageResponse/Source/disk``, ``ImageResponse/Source/sharedCache``,
    /// ``ImageResponse/Source/network`` or ``ImageResponse/Source/custom`` (never the memory cache, which holds
    /// decoded images).
    public var source: ImageResponse.Source
    /// What the disk cache keeps beside them: validators, content type, freshness (`nil` for bytes the request
    /// carried itself, and for a response that said `no-store`).
    public var metadata: DataCacheMetadata?
    /// Whether the request joined a load already in flight for the same source.
    public var isCoalesced: Bool
    /// Whether they came from a disk entry past its freshness that is being revalidated in the background.
    public var isStale: Bool
    /// Time spent reading the disk or loading (``ImageResponse/Metrics/diskRead``, ``ImageResponse/Metrics/load``
    /// and ``ImageResponse/Metrics/total``).
    public var metrics: ImageResponse.Metrics

    /// A response from its parts (not coalesced, not stale, empty metrics by default).
    public init(
        data: Data, format: ImageFormat, source: ImageResponse.Source, metadata: DataCacheMetadata? = nil,
        isCoalesced: Bool = false, isStale: Bool = false, metrics: ImageResponse.Metrics = ImageResponse.Metrics()
    ) {
        self.data = data
        self.format = format
        self.source = source
        self.metadata = metadata
        self.isCoalesced = isCoalesced
        self.isStale = isStale
        self.metrics = metrics
    }
}
