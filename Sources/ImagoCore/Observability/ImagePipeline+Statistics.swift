extension ImagePipeline {
    /// Counters of what a pipeline has done since it was made (or since ``ImagePipeline/resetStatistics()``).
    public struct Statistics: Sendable, Hashable {
        /// Requests answered by the memory cache.
        public var memoryHits = 0
        /// Requests that looked in the memory cache and missed.
        public var memoryMisses = 0
        /// Disk-cache reads that found an entry (original or processed).
        public var diskHits = 0
        /// Disk-cache reads that found nothing.
        public var diskMisses = 0
        /// Of the disk hits, entries past their freshness (delivered, then revalidated).
        public var staleDiskHits = 0
        /// Loads started on the data loader (revalidations included).
        public var networkLoads = 0
        /// Bytes received from the data loader.
        public var networkBytes: Int64 = 0
        /// Requests (or stages) that joined work already in flight instead of starting their own.
        public var coalescedJoins = 0
        /// Decodes run (previews included).
        public var decodeCount = 0
        /// Time spent decoding.
        public var decodeTime: Duration = .zero
        /// Processor runs.
        public var processCount = 0
        /// Time spent processing.
        public var processTime: Duration = .zero
        /// Entries written to the disk cache.
        public var diskWrites = 0
        /// Time spent writing them (off the delivery path).
        public var diskWriteTime: Duration = .zero
        /// Revalidations answered with 304 Not Modified.
        public var revalidationsNotModified = 0
        /// Revalidations answered with a new body.
        public var revalidationsUpdated = 0
        /// Progressive previews delivered.
        public var previewsDelivered = 0
        /// Requests failed fast by the failure cache.
        public var failureCacheHits = 0
        /// Shared-tier reads that found an entry (``Configuration/sharedCache``), waits for another process's
        /// fetch included.
        public var sharedCacheHits = 0
        /// Shared-tier reads that found nothing.
        public var sharedCacheMisses = 0
        /// Values written to the shared tier.
        public var sharedCacheWrites = 0
        /// Shared-tier calls that failed (timed out, refused, circuit open): each read as a miss.
        public var sharedCacheErrors = 0
        /// Failed requests by ``ImagePipeline/Error/kind`` (cancellations counted as ``ImagePipeline/Error/Kind/cancelled``).
        public var failures: [ImagePipeline.Error.Kind: Int] = [:]

        /// Zeroed counters.
        public init() {}
    }
}
