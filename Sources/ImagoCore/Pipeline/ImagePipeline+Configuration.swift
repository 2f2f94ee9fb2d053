import Dispatch
import Foundation

extension ImagePipeline {
    /// What a pipeline stores in its disk cache.
    public enum DataCachePolicy: Sendable, Hashable {
        /// The original bytes as loaded: every variant can be made from them, but each rerun decodes and
        /// processes them again.
        case storeOriginalData
        /// For requests with processors, the processed image, encoded; for requests without, the original bytes
        /// (the default, Nuke's `.automatic`). A rerun then reads the small processed image instead of decoding
        /// the original and processing it. Local sources (`file:` and `data:` URLs, ``ImageRequest/Source/data(id:_:)``)
        /// are never stored on disk.
        case storeEncodedImages
        /// Both the original bytes and the encoded processed images.
        case storeAll

        /// Nuke's name for ``storeEncodedImages``, the default.
        public static var automatic: Self { .storeEncodedImages }
    }

    /// Which partial downloads are decoded as previews for requests with ``ImageRequest/Options/deliversPreviews``.
    public enum PreviewPolicy: Sendable, Hashable {
        /// Only progressive JPEGs, whose every scan refines the whole image (the default, as Nuke): a baseline
        /// JPEG or another format arrives top-down, and its partial decode is a grey-filled bottom.
        case progressiveOnly
        /// Every format a decoder can decode partially, baseline JPEGs included: the top-down partial image.
        case incremental
        /// No previews.
        case disabled
    }

    /// How long a disk entry stays fresh before it is revalidated.
    public enum Freshness: Sendable, Hashable {
        /// As the HTTP headers say (`Cache-Control: max-age`, `no-cache`, `Expires`); without such headers, for
        /// `fallback` (`nil`: fresh until evicted). The default is `.httpHeaders(fallback: nil)`.
        case httpHeaders(fallback: Duration?)
        /// For this long after storing, whatever the headers say.
        case fixed(Duration)
        /// Always fresh: never revalidated (was `.never`).
        case alwaysFresh
    }

    /// Everything a pipeline is made of and how it behaves. Each field's default is given on it.
    ///
    /// ```swift
    /// var configuration = ImagePipeline.Configuration(dataLoader: HTTPDataLoader())
    /// configuration.imageCache = MemoryCache()
    /// configuration.dataCachePolicy = .storeAll
    /// let pipeline = ImagePipeline(configuration: configuration)
    /// ```
    public struct Configuration: Sendable {
        /// Loads bytes for URL requests. Default: a new ``HTTPDataLoader``.
        public var dataLoader: any DataLoading
        /// The memory cache of decoded (and processed) images. Default: a new ``MemoryCache`` (`nil`: none).
        public var imageCache: (any ImageCaching)?
        /// The disk cache of encoded bytes. Default `nil` (none).
        public var dataCache: (any DataCaching)?
        /// Decoders, chosen by the sniffed format. Default: every decoder of the program's
        /// ``DefaultCodecsProviding`` (every format Imago ships when the program links `Imago`); ImagoCore alone
        /// has no codecs, so without `Imago` the registry is empty.
        public var decoders: ImageDecoderRegistry
        /// Encoders, used to store processed images on disk. Default: every encoder of the program's
        /// ``DefaultCodecsProviding`` (empty with ImagoCore alone).
        public var encoders: ImageEncoderRegistry
        /// What goes to the disk cache. Default ``DataCachePolicy/automatic`` (``DataCachePolicy/storeEncodedImages``:
        /// processed requests store the processed image, encoded; unprocessed ones the original bytes).
        public var dataCachePolicy: DataCachePolicy
        /// The format processed images are stored in (when the policy stores them). Default `nil`: the source
        /// format when an encoder for it is registered, otherwise PNG. Animated images are stored only by an
        /// encoder that keeps every frame (``ImageEncoding/encodesAnimation``): with `nil`, the source format's
        /// when it keeps frames (an animated GIF stays a GIF, a WebP a WebP), else the newest such encoder
        /// registered (animated WebP, for APNG, AVIF and JPEG XL); with a format whose encoder writes stills, they
        /// are not stored.
        public var processedImageFormat: ImageFormat?
        /// Options for encoding processed images. Default `EncodingOptions()` (quality 0.85).
        public var encodingOptions: EncodingOptions
        /// Whether identical requests in flight share their work (load, decode, each processor prefix). Default
        /// `true`.
        public var isCoalescingEnabled: Bool
        /// How many decodes run at once. Default: ``ProcessorQuota/cores`` (the processors, held to the container's CPU
        /// quota).
        public var maximumConcurrentDecodes: Int
        /// How many processors run at once. Default: ``ProcessorQuota/cores`` (the processors, held to the container's CPU
        /// quota).
        public var maximumConcurrentProcessorRuns: Int
        /// One queue that runs the decodes and the processor runs both, in its own number of slots, instead of a
        /// queue each sized by ``maximumConcurrentDecodes`` and ``maximumConcurrentProcessorRuns``: for an embedder
        /// that bounds all of its CPU work with one queue (`imago serve` encodes its outputs on it too). Default
        /// `nil` (a queue each).
        package var cpuQueue: WorkQueue? = nil
        /// How many encodes (of processed images for the disk) run at once. Default: ``ProcessorQuota/cores``.
        public var maximumConcurrentEncodes: Int
        /// How many disk-cache reads and writes run at once. Default 2.
        public var maximumConcurrentDiskOperations: Int
        /// The defaults for decoding (pixel limit, frame limits, orientation); a request may replace them with
        /// ``ImageRequest/decodingOptions``. Default `DecodingOptions()` (100 megapixels, 10,000 frames).
        public var decodingOptions: DecodingOptions
        /// When disk entries go stale. Default ``Freshness/httpHeaders(fallback:)`` with no fallback.
        public var freshness: Freshness
        /// Whether a stale disk entry is delivered and revalidated in the background with a conditional request
        /// (`If-None-Match` / `If-Modified-Since`). When `false`, a stale entry is delivered as is. Default `true`.
        public var isRevalidationEnabled: Bool
        /// Remembers failed loads (and undecodable downloads) by cache key, so that requests for the same source
        /// fail fast with ``ImagePipeline/Error/failedRecently(url:until:reason:)`` until the entry expires
        /// (lifetimes by reason: see ``FailureCache``). `nil`: no failure cache. Default: a new ``FailureCache``.
        public var failureCache: FailureCache?
        /// Where callbacks of the callback API (`loadImage(with:…)`) run. It must be serial: a task's callbacks run
        /// on it in order. Default: one private serial queue per pipeline (a command-line program has no main run
        /// loop; pass `.main` in an app that runs one).
        public var callbackQueue: DispatchQueue
        /// How many bytes must arrive between two progressive previews, as a fraction of the expected size (or of
        /// 100 KB when the size is unknown). Default 0.2.
        public var previewInterval: Double
        /// Which partial downloads become previews. Default ``PreviewPolicy/progressiveOnly``.
        public var previewPolicy: PreviewPolicy
        /// A cache shared by a fleet of processes (``SharedDataCaching``, e.g. `RedisCache` of ImagoRedis), asked
        /// after the disk cache and before the loader; its hits fill the disk cache, loads are written to it in the
        /// background. Default `nil` (none).
        public var sharedCache: (any SharedDataCaching)?
        /// How long values written to ``sharedCache`` live. Default `nil`: the shared cache's own default.
        public var sharedCacheTimeToLive: Duration?
        /// Receives a record for every pipeline event (URLs redacted), to connect to your logger. Called on an
        /// arbitrary thread, never under a lock. Default `nil`.
        public var logger: (@Sendable (LogRecord) -> Void)?

        /// A configuration with every field at its default; pass your own loader and caches here or set them after.
        /// Its codec registries hold every codec of the program's ``DefaultCodecsProviding`` (with `Imago`: every
        /// format Imago ships; with ImagoCore alone: none).
        ///
        /// - Parameters:
        ///   - dataLoader: default a new ``HTTPDataLoader``.
        ///   - imageCache: default a new ``MemoryCache``.
        ///   - dataCache: default `nil` (no disk cache).
        public init(
            dataLoader: any DataLoading = HTTPDataLoader(), imageCache: (any ImageCaching)? = MemoryCache(),
            dataCache: (any DataCaching)? = nil
        ) {
            let cores = ProcessorQuota.cores
            self.dataLoader = dataLoader
            self.imageCache = imageCache
            self.dataCache = dataCache
            decoders = DefaultCodecs.makeDecoderRegistry()
            encoders = DefaultCodecs.makeEncoderRegistry()
            dataCachePolicy = .automatic
            processedImageFormat = nil
            encodingOptions = EncodingOptions()
            isCoalescingEnabled = true
            maximumConcurrentDecodes = cores
            maximumConcurrentProcessorRuns = cores
            maximumConcurrentEncodes = cores
            maximumConcurrentDiskOperations = 2
            decodingOptions = DecodingOptions()
            freshness = .httpHeaders(fallback: nil)
            isRevalidationEnabled = true
            failureCache = FailureCache()
            callbackQueue = DispatchQueue(label: "imago.pipeline.callbacks")
            previewInterval = 0.2
            previewPolicy = .progressiveOnly
            logger = nil
            sharedCache = nil
            sharedCacheTimeToLive = nil
        }
    }
}
