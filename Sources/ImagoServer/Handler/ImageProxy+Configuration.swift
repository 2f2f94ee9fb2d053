import Foundation
import Imago

extension ImageProxy {
    /// Everything a proxy is made of. Each field's default is given on it.
    ///
    /// ```swift
    /// var configuration = ImageProxy.Configuration()
    /// configuration.signer = try URLSigner(keyHex: key, saltHex: salt)
    /// configuration.sourcePolicy = SourcePolicy(allowedHosts: ["*.example.com"])
    /// let proxy = ImageProxy(configuration: configuration)
    /// ```
    public struct Configuration: Sendable {
        /// Loads source images. Inject the loader whose address policy refuses private addresses (redirects
        /// included) here. Default: a new ``HTTPDataLoader``, which refuses responses labelled as text, HTML or JSON
        /// before their body; `imago serve`'s loader accepts any label and lets the decoders judge the bytes, as
        /// imgproxy does.
        public var dataLoader: any DataLoading
        /// Decoders. Default: every codec Imago ships.
        public var decoders: ImageDecoderRegistry
        /// Encoders the output can be made with; a format without one is never negotiated. Default: every
        /// encoder Imago ships, AVIF at libavif speed ``defaultAVIFSpeed`` (9, imgproxy's `IMGPROXY_AVIF_SPEED`)
        /// rather than the library's 6: a browser's `Accept` picks AVIF, and speed 6 costs about five times the
        /// CPU per output for a few percent fewer bytes (BENCHMARKS.md, "AVIF speed in imago serve"); JPEG XL at
        /// effort ``defaultJPEGXLEffort`` (4, imgproxy's `IMGPROXY_JXL_EFFORT`) rather than libjxl's 7. Output keys
        /// name each encoder's ``ImageEncoding/settingsIdentifier`` where it differs from the encoders the first
        /// keys were made with, so outputs cached under other encoders are not answered. The proxy takes a copy when it is made: register encoders
        /// before making it (one registered afterwards would encode outputs the keys do not name).
        public var encoders: ImageEncoderRegistry
        /// The pipeline's disk cache of original bytes. Default `nil` (none).
        public var originalCache: (any DataCaching)?
        /// A cache tier shared with the other processes of a fleet (`RedisCache` of ImagoRedis): the pipeline
        /// keeps originals there (one origin fetch per image across the fleet) and the output cache encoded
        /// outputs. Give the same tier to ``outputCache`` (``OutputCache/init(memoryCostLimit:disk:shared:)``).
        /// Default `nil` (none).
        public var sharedCache: (any SharedDataCaching)?
        /// Bytes of decoded, processed images the pipeline keeps in memory. Default 64 MiB.
        public var imageMemoryLimit: Int
        /// The cache of encoded outputs. Default: 64 MiB in memory, nothing on disk.
        public var outputCache: OutputCache
        /// The largest image (width × height) decoded; larger sources are answered 422. Default 50 megapixels.
        public var pixelLimit: Int
        /// Whether URLs may set imgproxy's security options (``SecurityLimits``: `max_src_resolution`,
        /// `max_src_file_size`, `max_animation_frames`, `max_result_dimension`), which only tighten this server's
        /// limits (imgproxy's `IMGPROXY_ALLOW_SECURITY_OPTIONS`). Default `false`: such URLs are answered 400.
        public var allowsSecurityOptions: Bool
        /// Whether URLs that do not say `enforce_thumbnail` render a source's embedded thumbnail (HEIC) instead of its
        /// image whatever the size asked for (imgproxy's `IMGPROXY_ENFORCE_THUMBNAIL`). A thumbnail large enough for
        /// the result is used either way. Default `false`.
        public var enforcesThumbnail: Bool
        /// Whether results of URLs that do not say `strip_color_profile` keep the source's colour profile, their
        /// pixels left in its space, in formats that can carry one (imgproxy's `IMGPROXY_STRIP_COLOR_PROFILE=false`):
        /// wide-gamut photographs (Display P3) keep their gamut. Background colours and watermarks are then
        /// painted in the source's space unconverted. Default `false`: every result is sRGB, without a profile.
        public var keepsColorProfile: Bool
        /// Whether results of URLs that do not say `strip_metadata` lose the source's EXIF, XMP and IPTC blocks
        /// (imgproxy's `IMGPROXY_STRIP_METADATA`). Default `true`.
        public var stripsMetadata: Bool
        /// Whether results of URLs that do not say `keep_copyright` keep, when their metadata is stripped, who made
        /// the image and its rights (``ImageMetadata/copyrightOnly``; imgproxy's `IMGPROXY_KEEP_COPYRIGHT`). Default
        /// `true`, as imgproxy's.
        public var keepsCopyright: Bool
        /// The longest side of any result in pixels, as imgproxy's `IMGPROXY_MAX_RESULT_DIMENSION`: a larger result
        /// is scaled down, aspect ratio kept, until its longer side fits, extensions and padding included (a source
        /// served without a resize too), rather than refused. 1…8192; default 0: no limit but the 8,192 pixels a
        /// side every result is held to.
        public var maxResultDimension: Int
        /// Whether resizes average pixels in linear light (``PixelBuffer/resampledInLinearLight(to:curve:)``), as imgproxy's
        /// `IMGPROXY_USE_LINEAR_COLORSPACE`: truer brightness for fine light-and-dark detail. A JPEG is still
        /// decoded at a reduced DCT scale (as imgproxy shrinks on load), but no decoder resamples for the resize
        /// (``DecodeTarget/shrinksOnlyWhileDecoding``): other formats decode at full size, so large ones cost more.
        /// Default `false`.
        public var usesLinearColorspace: Bool
        /// Whether raster sources may shrink while they are decoded (JPEG's DCT scaling, the decoders' own
        /// resampling toward the result's size, HEIC's embedded thumbnails) when the result is smaller. `false` is imgproxy's
        /// `IMGPROXY_DISABLE_SHRINK_ON_LOAD`: every raster source is decoded at full size and resized from all its
        /// pixels (with ``usesLinearColorspace``, the whole resize in linear light), at the cost of time and memory
        /// for large sources. SVGs are drawn at the result's size either way. Default `true`.
        public var shrinksOnLoad: Bool
        /// The most frames of an animated source (GIF, APNG, WebP) that are kept, as imgproxy's
        /// `IMGPROXY_MAX_ANIMATION_FRAMES`: above 1, an animation is resized frame by frame and sent as an animated
        /// WebP when the URL asks for WebP, or names no format and `Accept` takes WebP, and as an animated GIF when
        /// the URL asks for GIF, or names no format and `Accept` takes no WebP; frames × canvas pixels
        /// must be within ``pixelLimit`` (unless ``maxAnimationFramePixels`` is set). An animation over the limits,
        /// one a trim or smart crop would cut frame by frame, and one whose output format cannot animate are sent
        /// as their first frame. Default 1: every source is rendered from its first frame.
        public var maxAnimationFrames: Int
        /// The largest frame, in canvas pixels, of an animation whose frames are kept, as imgproxy's
        /// `IMGPROXY_MAX_ANIMATION_FRAME_RESOLUTION`: above 0, each frame is held to this instead of all frames
        /// together to ``pixelLimit``, so a long animation of small frames keeps its frames. Over it, the first
        /// frame is sent (held to ``pixelLimit`` as any still). The decoded frames' memory stays bounded by the
        /// pipeline's ``DecodingOptions/animationByteLimit`` and ``DecodingOptions/animationMemoryBudget``.
        /// Default 0: all frames' pixels together within ``pixelLimit``.
        public var maxAnimationFramePixels: Int
        /// The signature checker; `nil` (the default) accepts no signed URL.
        public var signer: URLSigner?
        /// A token every request but `/healthz` must carry as `Authorization: Bearer TOKEN` (imgproxy's
        /// `IMGPROXY_SECRET`), e.g. sent by the CDN in front so nobody reaches the proxy around it; without it the
        /// answer is 403. Compared in constant time. Default `nil`: no such check.
        public var secret: String?
        /// Whether unsigned URLs (`/insecure/…`, `/_/…`) are served. Default `false`.
        public var allowsUnsigned: Bool
        /// Signatures accepted as they are, without checking them against ``signer`` (imgproxy's
        /// `IMGPROXY_TRUSTED_SIGNATURES`): for URLs signed with a key no longer in use. Default empty.
        public var trustedSignatures: Set<String>
        /// Serves `local:///path` sources from the files under this directory (imgproxy's
        /// `IMGPROXY_LOCAL_FILESYSTEM_ROOT`): paths never leave it (`..` and symbolic links out of it are 404s, as
        /// missing files are), and files are at most 64 MiB. Outputs are cached by URL, so a file changed in place
        /// needs a new `cachebuster`. Default `nil`: `local:` sources are refused (400).
        public var localRoot: URL?
        /// Serves `s3://bucket/key` sources (imgproxy's `IMGPROXY_USE_S3`) from AWS S3 or an S3-compatible
        /// endpoint, through ``dataLoader`` (which signs them when its ``CurlDataLoader/Configuration/awsSigning``
        /// covers ``S3Sources/signedHosts``). The bucket is the source's host for ``sourcePolicy``'s host list.
        /// Default `nil`: `s3:` sources are refused (400).
        public var s3: S3Sources?
        /// Serves `abs://container/blob` sources (imgproxy's `IMGPROXY_USE_ABS`) from an Azure storage account,
        /// through ``dataLoader`` (which signs them when its ``CurlDataLoader/Configuration/azureSigning`` covers
        /// ``AzureBlobSources/signedHosts``). The container is the source's host for ``sourcePolicy``'s host list.
        /// Default `nil`: `abs:` sources are refused (400).
        public var azureBlob: AzureBlobSources?
        /// Serves `gs://bucket/object` sources (imgproxy's `IMGPROXY_USE_GCS`) from Google Cloud Storage, with a
        /// service account's bearer tokens when ``GoogleCloudStorageSources/tokens`` is set. The bucket is the
        /// source's host for ``sourcePolicy``'s host list. Default `nil`: `gs:` sources are refused (400).
        public var gcs: GoogleCloudStorageSources?
        /// Serves `swift://container/object` sources (imgproxy's `IMGPROXY_USE_SWIFT`) from OpenStack Swift, at the
        /// storage URL its identity service names, with its tokens. The container is the source's host for
        /// ``sourcePolicy``'s host list. Default `nil`: `swift:` sources are refused (400).
        public var swift: OpenStackSwiftSources?

        /// The object stores whose sources are served: ``s3``, ``azureBlob``, ``gcs`` and ``swift``, those set.
        var objectStores: [any ObjectStoreMapping] {
            [s3 as (any ObjectStoreMapping)?, azureBlob, gcs, swift].compactMap { $0 }
        }
        /// Which sources may be fetched. Default: any public host.
        public var sourcePolicy: SourcePolicy
        /// Put before every source URL, so URLs may carry paths relative to it (imgproxy's `IMGPROXY_BASE_URL`),
        /// e.g. `https://images.example.com/`. Default empty (sources are absolute URLs).
        public var baseURL: String
        /// Whether a base64 source split by `/` ends with a file name that is not part of it (imgproxy's
        /// `IMGPROXY_BASE64_URL_INCLUDES_FILENAME`): `/{signature}/{options}/{base64}.{ext}/{name}`, so that a
        /// browser saving the image names the file. Default `false`.
        public var base64URLIncludesFilename: Bool
        /// What separates an option's name and arguments in URLs (imgproxy's `IMGPROXY_ARGUMENTS_SEPARATOR`): with
        /// `,`, `/rs,fill,300,200/…`. ``presets`` keep their own (``PresetTable/argumentsSeparator``). A character
        /// ``ProxyPath/isArgumentsSeparator(_:)`` refuses makes every URL a 400. Default `:`.
        public var argumentsSeparator: Character
        /// Where the query of a source that is not http or https starts (imgproxy's
        /// `IMGPROXY_SOURCE_URL_QUERY_SEPARATOR`): in `s3://bucket/key?VERSION` and `gs://bucket/object?GENERATION`
        /// the version, and nothing for `local:` files and the other stores. Empty: none, so `?` is part of a key
        /// or file name; another text (`|`) frees `?` for names while keeping versions. `#` is always the path's own
        /// character, as imgproxy reads it. Default `?`.
        public var sourceQuerySeparator: String
        /// Which sources get the client's `Cookie` header (imgproxy's `IMGPROXY_COOKIE_PASSTHROUGH`,
        /// `IMGPROXY_COOKIE_PASSTHROUGH_ALL` and `IMGPROXY_COOKIE_BASE_URL`): outputs made with cookies are never
        /// cached nor shared and are answered `Cache-Control: private`. Default `nil`: cookies are never sent.
        public var cookiePassthrough: CookiePassthrough?
        /// Rewrites of source URLs' starts, applied in order before ``baseURL`` and before the source policy sees
        /// the URL (imgproxy's `IMGPROXY_URL_REPLACEMENTS`), e.g. `img://` for `https://images.example.com/`, so
        /// that URLs in content outlive a move of the images. Default none.
        public var urlReplacements: [URLReplacement]
        /// A path every image URL starts with, as imgproxy's `IMGPROXY_PATH_PREFIX` (e.g. `/images` behind a
        /// reverse proxy that shares the domain): image paths without it are answered 404, and the signature covers
        /// what follows the signature, as ever. `/healthz` and `/metrics` answer with and without it. Default empty.
        public var pathPrefix: String
        /// The `Access-Control-Allow-Origin` of every response, as imgproxy's `IMGPROXY_ALLOW_ORIGIN` (e.g. `*`, or
        /// `https://app.example.com`), so pages may draw the images on a canvas; with it, `OPTIONS` preflights are
        /// answered 204. Default `nil`: no CORS headers, and `OPTIONS` is a 405.
        public var allowedOrigin: String?
        /// Another path answered as `/healthz` is (imgproxy's `IMGPROXY_HEALTH_CHECK_PATH`), e.g. `/ping` for a
        /// load balancer that probes a fixed path; open without ``secret`` too. Default `nil`: `/healthz` and
        /// `/health` only.
        public var healthCheckPath: String?
        /// Whether `/metrics` is answered on this proxy's routes. Default `true`; `false` when the metrics are served
        /// on a listener of their own (`imago serve --metrics-listen`, imgproxy's `IMGPROXY_PROMETHEUS_BIND`), so
        /// the public port does not show them.
        public var servesMetrics: Bool
        /// What the `/metrics` names start with, before `_` (imgproxy's `IMGPROXY_PROMETHEUS_NAMESPACE`), e.g.
        /// `images` for `images_requests_total`; empty for bare names. It must be valid in a metric name (see
        /// ``ServerMetrics/isValidNamespace(_:)``). Default ``ServerMetrics/defaultNamespace``, `imago_serve`.
        public var metricsNamespace: String
        /// The image `watermark:` draws; URLs asking for a watermark are refused (400) without one. Default `nil`.
        public var watermark: WatermarkImage?
        /// The image answered, rendered with the URL's options, when a source cannot be had (404, origin
        /// failures and timeouts, too large, not an image). Default `nil`: those are answered with their errors.
        public var fallbackImage: FallbackImage?
        /// Whether URLs may name presets only (imgproxy's `IMGPROXY_ONLY_PRESETS`): the segment after the signature
        /// is a `:`-separated list of ``presets`` and nothing else is read as an option, so clients cannot ask for
        /// sizes of their own (a cache-busting and CPU guard for unsigned deployments). Default `false`.
        public var onlyPresets: Bool
        /// The option names URLs may use, as written (`w` does not allow `width`), imgproxy's
        /// `IMGPROXY_ALLOWED_PROCESSING_OPTIONS`: any other is refused with 403
        /// (``ProxyError/forbiddenOption(name:)``). Presets' own options are not checked; allow `pr` or `preset`
        /// to let URLs name them. Default `nil`: every option.
        public var allowedProcessingOptions: Set<String>?
        /// Named option lists for `preset:` (and the `default` preset every URL starts from). Default none.
        public var presets: PresetTable
        /// `Cache-Control: public, max-age=` of image responses. Default one year (365 days).
        public var maxAge: Duration
        /// Whether image responses carry the source's `Last-Modified`, and a request whose `If-Modified-Since` is
        /// not older than it (and has no `If-None-Match`) is answered 304, as imgproxy's
        /// `IMGPROXY_USE_LAST_MODIFIED`. A render then fetches the source's bytes through the pipeline's
        /// ``ImagePipeline/data(for:)`` first, to read the header (one fetch either way). Outputs rendered without
        /// it carry no `Last-Modified`. Default `false`.
        public var usesLastModified: Bool
        /// Whether an image response's `Cache-Control` follows the source's freshness instead of ``maxAge``, as
        /// imgproxy's `IMGPROXY_CACHE_CONTROL_PASSTHROUGH`: `public, max-age=` the time left until the source's
        /// `Cache-Control: max-age`, `no-cache` or `Expires` runs out (so a cached output never promises more than
        /// its source did), 0 once it has, and 0 for a source that says `no-store`. Sources that say nothing keep
        /// ``maxAge``. Fetches the source's bytes first, as ``usesLastModified``, revalidating a stale original
        /// before it is rendered (``ImageRequest/Options/revalidatesBeforeDelivery``). A cached output whose
        /// source's freshness has run out is rendered again before it is served; when the origin fails, times out
        /// or answers 429, the old output is answered instead, and its other 4xx (a 404, 403, 410) are answered as
        /// they are. Default `false`.
        public var passesSourceCacheControl: Bool
        /// Whether image responses carry imgproxy's debug headers (`IMGPROXY_ENABLE_DEBUG_HEADERS`):
        /// `X-Origin-Content-Length` (the source's bytes), `X-Origin-Width` and `X-Origin-Height` (its pixels) and
        /// `X-Result-Width` and `X-Result-Height` (the output's), each when known. They are recorded with the
        /// output in every cache tier, so a cached output carries them too (outputs cached while this was off
        /// carry none). A render then fetches the source's bytes through the pipeline's
        /// ``ImagePipeline/data(for:)`` first, as ``usesLastModified``. Default `false`.
        public var sendsDebugHeaders: Bool
        /// Whether error responses carry what the access log says (imgproxy's `IMGPROXY_DEVELOPMENT_ERRORS_MODE`):
        /// why an object store's credentials were refused or could not be had, which clients are otherwise not
        /// told. For development and debugging, not for a public server. Default `false`.
        public var sendsDetailedErrors: Bool
        /// Whether image responses for `http` and `https` sources carry `Link: <source URL>; rel="canonical"`, so
        /// search engines index the source rather than each of its renditions (imgproxy's
        /// `IMGPROXY_SET_CANONICAL_HEADER`). Default `false`.
        public var setsCanonicalHeader: Bool
        /// Whether responses say `Content-Disposition: attachment` (browsers download the file) rather than
        /// `inline` for URLs without `return_attachment` (imgproxy's `IMGPROXY_RETURN_ATTACHMENT`). Default `false`.
        public var returnsAttachment: Bool
        /// Source formats answered with the source's own bytes unless the URL asks for another format, for every URL
        /// (imgproxy's `IMGPROXY_SKIP_PROCESSING_FORMATS`); a URL's `skip_processing` adds to them. The source is
        /// still checked as `skip_processing` checks it. Default empty.
        public var skippedFormats: Set<ImageFormat>
        /// Whether an SVG source is drawn into a raster format when the URL names no format (imgproxy's
        /// `IMGPROXY_ALWAYS_RASTERIZE_SVG`). Default `false`: it is answered as SVG, its own document made safe by
        /// `SVGSanitizer` (scripts, event handlers and unsafe links removed), as imgproxy answers it; a URL naming
        /// a raster format (or `svg`) gets that format either way.
        public var rasterizesSVG: Bool
        /// Text that changes every output's `ETag` when it changes, so that clients and CDNs holding outputs by their
        /// `ETag` fetch them again without the caches being emptied (imgproxy's `IMGPROXY_ETAG_BUSTER`), e.g. after a
        /// fix to how outputs are encoded. Default empty: the ETags as made.
        public var etagBuster: String
        /// With ``usesLastModified``, the earliest `Last-Modified` sent (imgproxy's `IMGPROXY_LAST_MODIFIED_BUSTER`): a
        /// source modified before it is said to be modified then, so that clients and CDNs revalidating by date
        /// fetch outputs again after a change to how they are made, as ``etagBuster`` does for ETags. Default
        /// `nil`: the source's dates as they are.
        public var lastModifiedBuster: Date?
        /// With ``passesSourceCacheControl``, how long an outdated output answered because its origin failed or
        /// timed out is answered again before the origin is asked again (stale-if-error), so that a failing origin
        /// costs one waiting request per interval rather than every request. The interval doubles with each
        /// failure in a row, up to ``maximumStaleRetryInterval``, and starts again from this once the origin
        /// answers. Its responses say `max-age` the time left of it. Default 10 seconds.
        public var staleRetryInterval: Duration
        /// The longest ``staleRetryInterval`` grows to while an origin keeps failing. Default 5 minutes.
        public var maximumStaleRetryInterval: Duration
        /// Renders (load, decode, process, encode) in progress at once. The CPU stages inside are bounded by the
        /// cores anyway (decodes, resizes and encodes share one queue with a slot per core, encodes first); more
        /// renders than cores overlap their origin fetches with other renders' decoding. Default: 4 ×
        /// ``ProcessorQuota/cores`` (the processors, held to the container's CPU quota).
        public var workers: Int
        /// Renders waiting for a worker before new ones are refused with 503. Default 256.
        public var queueLimit: Int
        /// The `Retry-After` seconds of a 503. Default 1.
        public var retryAfterSeconds: Int
        /// The longest a request waits for its output to be fetched, decoded and encoded (imgproxy's
        /// `IMGPROXY_TIMEOUT`) before it is answered 503 with `Retry-After`
        /// (``ProxyError/requestTimedOut(after:)``). The render goes on: other requests waiting for it get it,
        /// and its output is cached for the retry. Default `nil`: a request waits for the render, whose origin
        /// fetch has its own timeouts (504 when they pass).
        public var requestTimeout: Duration?
        /// Output quality 1…100 when the URL does not say (imgproxy's `IMGPROXY_QUALITY`). Default 80.
        public var defaultQuality: Int
        /// Output qualities 1…100 by format, used before ``defaultQuality`` when the URL gives neither `quality` nor
        /// a `format_quality` for the format (imgproxy's `IMGPROXY_FORMAT_QUALITY`). Default `[.avif: 65]`, as
        /// imgproxy's.
        public var formatQuality: [ImageFormat: Int]
        /// Whether a JPEG made into a WebP or a JPEG with nothing but a resize (`fit`, `force`, or `fill` cut at
        /// even offsets around any gravity but `sm`: the usual thumbnails) is decoded to its own Y, Cb and Cr
        /// planes and encoded from them, without the trip through RGB and back:
        /// about 5 % less CPU for a cold WebP thumbnail at the server (the codecs' own share is 2–4 %; the rest is
        /// RGBA buffers not allocated and not held in the pipeline's memory cache). Its chroma is then the JPEG's own,
        /// averaged; for WebP, rather than libwebp's gamma-weighted average of the upsampled RGB: a few levels of
        /// chroma apart, 0.2–0.8 dB of PSNR less against the RGB decode on Kodak photos (BENCHMARKS.md, "JPEG to
        /// WebP in YCbCr"). Sources with a colour profile other than sRGB or an orientation to apply, gray and
        /// CMYK files, other output formats and every other request take the RGB path, and so does every request
        /// without an ``originalCache``: the path leaves no decoded image in the pipeline's memory cache, so a
        /// second output of the same source would otherwise be fetched again. Default `true`.
        public var rendersJPEGsInYCbCr: Bool
        /// The formats an output may take when neither the URL nor `Accept` picks one, in order (imgproxy's
        /// `IMGPROXY_PREFERRED_FORMATS`): the source's when listed; else the first listed that keeps the image's
        /// transparency (or, for an animation, its frames); else the first listed. Each needs an encoder. Default
        /// `[.jpeg, .png, .gif]`, the formats every client shows.
        public var preferredFormats: [ImageFormat]
        /// Whether the `Sec-CH-DPR`/`DPR` and `Sec-CH-Width`/`Width` request headers give the `dpr` and `width` of
        /// URLs that leave them unset (imgproxy's `IMGPROXY_ENABLE_CLIENT_HINTS`); image responses then carry
        /// `Vary` on those fields. Headers are not signed: a client can ask for any width up to the hint's bound.
        /// Default `false`.
        public var usesClientHints: Bool
        /// Formats `Accept` picks for URLs that name none (imgproxy's `IMGPROXY_ENABLE_AVIF_DETECTION`,
        /// `IMGPROXY_ENABLE_WEBP_DETECTION` and `IMGPROXY_AUTO_JXL`), JPEG XL before AVIF before WebP; responses to
        /// such URLs carry `Vary: Accept`. Empty: those URLs get one of ``preferredFormats`` whatever the client
        /// accepts, for a CDN that does not vary its cache on `Accept`. Default `[.avif, .webp]` (imgproxy's
        /// default is none; JPEG XL is opt-in in both).
        public var detectedFormats: Set<ImageFormat>
        /// Formats that `Accept` picks even when the URL names another (imgproxy's `IMGPROXY_ENFORCE_JXL`,
        /// `IMGPROXY_ENFORCE_AVIF` and `IMGPROXY_ENFORCE_WEBP`): a client whose `Accept` lists one gets it (JPEG
        /// XL, then AVIF, then WebP), and such responses carry `Vary: Accept`. Default empty: a format in the URL
        /// is the output's.
        public var enforcedFormats: Set<ImageFormat>
        /// Receives one record per request (source URLs redacted). Called on an arbitrary thread. Default `nil`.
        public var accessLog: (@Sendable (AccessLogRecord) -> Void)?
        /// How many records each of ``accessLog``'s sinks has dropped so far, read for
        /// `log_records_dropped_total` at each scrape. Default: none dropped.
        public var droppedLogRecords: @Sendable (ServerMetrics.LogSink) -> Int
        /// How image requests are traced (OpenTelemetry, W3C Trace Context): with it, each image request's
        /// record has a ``AccessLogRecord/trace`` and ``AccessLogRecord/spans``. Default `nil`: no tracing.
        public var tracing: RequestTracing?

        /// A configuration with the defaults listed on each property.
        public init(dataLoader: any DataLoading = HTTPDataLoader()) {
            self.dataLoader = dataLoader
            decoders = .makeDefault()
            encoders = Self.makeDefaultEncoders()
            originalCache = nil
            sharedCache = nil
            imageMemoryLimit = 64 << 20
            outputCache = OutputCache()
            pixelLimit = 50_000_000
            maxResultDimension = 0
            usesLinearColorspace = false
            shrinksOnLoad = true
            enforcesThumbnail = false
            keepsColorProfile = false
            stripsMetadata = true
            keepsCopyright = true
            allowsSecurityOptions = false
            maxAnimationFrames = 1
            maxAnimationFramePixels = 0
            signer = nil
            allowsUnsigned = false
            trustedSignatures = []
            secret = nil
            sourcePolicy = SourcePolicy()
            localRoot = nil
            s3 = nil
            azureBlob = nil
            gcs = nil
            swift = nil
            presets = PresetTable()
            onlyPresets = false
            allowedProcessingOptions = nil
            watermark = nil
            fallbackImage = nil
            baseURL = ""
            base64URLIncludesFilename = false
            argumentsSeparator = ProxyPath.defaultArgumentsSeparator
            sourceQuerySeparator = "?"
            cookiePassthrough = nil
            urlReplacements = []
            pathPrefix = ""
            allowedOrigin = nil
            healthCheckPath = nil
            servesMetrics = true
            metricsNamespace = ServerMetrics.defaultNamespace
            maxAge = .seconds(365 * 24 * 3600)
            usesLastModified = false
            passesSourceCacheControl = false
            staleRetryInterval = .seconds(10)
            maximumStaleRetryInterval = .seconds(300)
            sendsDebugHeaders = false
            sendsDetailedErrors = false
            setsCanonicalHeader = false
            returnsAttachment = false
            skippedFormats = []
            rasterizesSVG = false
            etagBuster = ""
            lastModifiedBuster = nil
            rendersJPEGsInYCbCr = true
            workers = 4 * ProcessorQuota.cores
            queueLimit = 256
            retryAfterSeconds = 1
            requestTimeout = nil
            defaultQuality = 80
            formatQuality = Self.defaultFormatQuality
            preferredFormats = Self.defaultPreferredFormats
            enforcedFormats = []
            detectedFormats = Self.defaultDetectedFormats
            usesClientHints = false
            accessLog = nil
            droppedLogRecords = { _ in 0 }
            tracing = nil
        }
    }
}

extension ImageProxy.Configuration {
    /// ``maxResultDimension`` as a limit: `nil` for 0, none.
    var resultDimensionLimit: Int? { maxResultDimension > 0 ? maxResultDimension : nil }

    /// ``maxAnimationFramePixels`` as a limit: `nil` for 0, none (all frames summed within ``pixelLimit``).
    var framePixelLimit: Int? { maxAnimationFramePixels > 0 ? maxAnimationFramePixels : nil }

    /// The libavif speed of the default configuration's AVIF encoder: 9, imgproxy's default.
    public static let defaultAVIFSpeed = 9
    /// The libjxl effort of the default configuration's JPEG XL encoder: 4, imgproxy's default.
    public static let defaultJPEGXLEffort = 4
    /// The default ``formatQuality``: imgproxy's `avif=65`.
    public static let defaultFormatQuality: [ImageFormat: Int] = [.avif: 65]
    /// The default ``preferredFormats``: JPEG, PNG and GIF, the formats every client shows (imgproxy's).
    public static let defaultPreferredFormats: [ImageFormat] = [.jpeg, .png, .gif]
    /// The formats ``detectedFormats`` and ``enforcedFormats`` may hold, in the order `Accept` picks them
    /// (imgproxy's: JPEG XL, AVIF, WebP).
    public static let negotiableFormats: [ImageFormat] = [.jpegXL, .avif, .webp]
    /// The default ``detectedFormats``: AVIF and WebP (JPEG XL is opt-in, as in imgproxy).
    public static let defaultDetectedFormats: Set<ImageFormat> = [.avif, .webp]

    /// A new registry of the default ``encoders``: every encoder Imago ships, AVIF at ``defaultAVIFSpeed`` and
    /// JPEG XL at ``defaultJPEGXLEffort``.
    public static func makeDefaultEncoders() -> ImageEncoderRegistry {
        let encoders = ImageEncoderRegistry.makeDefault()
        encoders.register(AVIFEncoder(speed: defaultAVIFSpeed))
        encoders.register(JPEGXLEncoder(effort: defaultJPEGXLEffort))
        return encoders
    }

    /// Qualities by format from imgproxy's `IMGPROXY_FORMAT_QUALITY` form, `jpeg=70,avif=40,webp=60` (formats by
    /// the names of the `format` option, qualities 1…100), for ``formatQuality``.
    ///
    /// - Throws: ``ProxyError/invalidOption(name:reason:)`` naming `option`.
    public static func formatQualities(parsing text: String, option: String) throws(ProxyError) -> [ImageFormat: Int] {
        var qualities: [ImageFormat: Int] = [:]
        for pair in text.split(separator: ",") {
            let parts = pair.split(separator: "=", omittingEmptySubsequences: false)
            guard parts.count == 2, let quality = Int(parts[1].trimmingCharacters(in: .whitespaces)),
                (1...100).contains(quality)
            else {
                throw .invalidOption(name: option, reason: "expects FORMAT=QUALITY pairs such as jpeg=70,avif=40")
            }
            let name = parts[0].trimmingCharacters(in: .whitespaces)
            qualities[try OptionParser.format(named: name, option: option)] = quality
        }
        guard !qualities.isEmpty else {
            throw .invalidOption(name: option, reason: "expects FORMAT=QUALITY pairs such as jpeg=70,avif=40")
        }
        return qualities
    }

    /// Formats from imgproxy's comma-separated form, `jpeg,png,gif` (names of the `format` option), in order and
    /// without repeats, each with an encoder in `encoders`, for ``preferredFormats`` and ``detectedFormats``.
    ///
    /// - Throws: ``ProxyError/invalidOption(name:reason:)`` naming `option`.
    public static func formats(
        parsing text: String, option: String, encoders: ImageEncoderRegistry = .makeDefault()
    ) throws(ProxyError) -> [ImageFormat] {
        var formats: [ImageFormat] = []
        for name in text.split(separator: ",") {
            let format = try OptionParser.format(named: name.trimmingCharacters(in: .whitespaces), option: option)
            guard encoders.encoder(for: format) != nil else {
                throw .invalidOption(name: option, reason: "no encoder for \(format) is available on this server")
            }
            if !formats.contains(format) { formats.append(format) }
        }
        guard !formats.isEmpty else { throw .invalidOption(name: option, reason: "expects formats such as jpeg,png") }
        return formats
    }

    /// Source formats from imgproxy's comma-separated form, `gif,webp` (names of the `skip_processing` option:
    /// `png` is PNG and APNG, `heic` all HEIF), for ``skippedFormats``.
    ///
    /// - Throws: ``ProxyError/invalidOption(name:reason:)`` naming `option`.
    public static func sourceFormats(parsing text: String, option: String) throws(ProxyError) -> Set<ImageFormat> {
        var formats: Set<ImageFormat> = []
        for name in text.split(separator: ",") {
            formats.formUnion(
                try OptionParser.sourceFormats(named: name.trimmingCharacters(in: .whitespaces), option: option))
        }
        guard !formats.isEmpty else { throw .invalidOption(name: option, reason: "expects formats such as gif,webp") }
        return formats
    }
}
