import Foundation
import Imago
import ImagoServer

extension ServeCommand {
    /// How access-log lines are written (`--log-format`).
    enum LogFormat: String, Sendable, CaseIterable {
        /// One JSON object per line (the default).
        case json
        /// One line of text per request.
        case text
        /// No access log (e.g. behind a proxy that logs, or in a benchmark against a server without one).
        case off
    }

    /// What `serve` was asked to do, checked.
    struct Options: Sendable {
        var host = "127.0.0.1"
        var port: UInt16 = 8080
        /// `--listen unix:PATH`: the Unix domain socket listened on instead of `host` and `port` (imgproxy's
        /// `IMGPROXY_NETWORK=unix` with `IMGPROXY_BIND=PATH`).
        var socketPath: String?
        var signer: URLSigner?
        var allowsUnsigned = false
        var sourcePolicy = SourcePolicy()
        var maxAge = 31_536_000
        var workers = 4 * ProcessorQuota.cores
        var queueLimit = 256
        var threads = 1
        /// `--reuse-port`: `SO_REUSEPORT` on the listening socket.
        var reusesPort = false
        /// `--metrics-listen`: the address that serves `/metrics` instead of the main one.
        var metricsAddress: (host: String, port: UInt16)?
        /// `--client-keep-alive-timeout`: how long an idle connection to an origin may be reused, in seconds.
        var clientKeepAliveSeconds: Int?
        /// `--metrics-namespace`: what metric names start with, before `_`.
        var metricsNamespace = ServerMetrics.defaultNamespace
        /// `--health-check-path`: another path answered as `/healthz`.
        var healthCheckPath: String?
        /// `--max-clients`: connections open at once.
        var connectionLimit = 1024
        /// `--connection-timeout`: seconds an idle connection stays open.
        var connectionTimeout = 30
        /// `--graceful-stop-timeout`: seconds SIGTERM waits for the requests in flight.
        var gracefulStopSeconds = 10
        /// `--request-timeout`: seconds a request waits for its output; `nil`: no limit.
        var requestTimeout: Int?
        /// `--svg-timeout`: seconds an SVG source may take to draw.
        var svgTimeout = 10
        /// `--heif-timeout`: seconds a HEIF source may take to decode, or a HEIC output to encode, in a child process.
        var heifTimeout = 30
        /// `--heif-in-process`: HEIF sources are decoded and HEIC outputs encoded in the server's process, not in
        /// children.
        var decodesHEIFInProcess = false
        var cacheDirectory: URL
        var logFormat = LogFormat.json
        /// `--log-buffer`: bytes of access log lines held while standard output's reader is behind.
        var logBuffer = LineWriter.defaultCapacity
        /// `--log-level`: the least level of access log records written.
        var logLevel = AccessLogRecord.Level.info
        /// `--syslog` and its options: where access log lines go besides stdout, and from which level.
        var syslog: (destination: SyslogWriter.Destination, level: AccessLogRecord.Level, tag: String)?
        /// `--cloudwatch-service-name` and its options: where the gauges go, and how often.
        var cloudWatch: (metrics: CloudWatchMetrics, interval: Int, credentials: AWSCredentialSource?)?
        /// `--sentry-dsn` and its options: where server and origin failures are reported.
        var sentry: (dsn: SentryClient.DSN, environment: String, release: String)?
        var pixelLimit = 50_000_000
        /// `--max-animation-frames`: the most frames of an animation kept (1: its first frame only).
        var maxAnimationFrames = 1
        /// `--max-animation-frame-pixels`: each kept frame's limit (0: all frames together within the pixel limit).
        var maxAnimationFramePixels = 0
        /// `--max-result-dimension`: the longest side of a result (0: no limit but 8192).
        var maxResultDimension = 0
        /// `--use-linear-colorspace`: resizes in linear light.
        var usesLinearColorspace = false
        /// `--disable-shrink-on-load`: raster sources decode at full size.
        var disablesShrinkOnLoad = false
        /// `--enforce-thumbnail`: URLs without `enforce_thumbnail` render embedded thumbnails.
        var enforcesThumbnail = false
        /// `--keep-color-profile`: URLs without `strip_color_profile` keep the source's profile.
        var keepsColorProfile = false
        /// `--keep-metadata`: URLs without `strip_metadata` keep the source's metadata.
        var keepsMetadata = false
        /// `--strip-copyright`: URLs without `keep_copyright` lose the copyright with the rest of the metadata.
        var stripsCopyright = false
        /// `--always-rasterize-svg`: SVG sources drawn into a raster format when the URL names none.
        var rasterizesSVG = false
        /// `--allow-security-options`: URLs may tighten the limits for themselves.
        var allowsSecurityOptions = false
        /// `--base-url`: put before every source URL.
        var baseURL = ""
        /// `--url-replacements`: rewrites of source URLs' starts.
        var urlReplacements: [URLReplacement] = []
        /// `--preset`: the named option lists of `preset:`.
        var presets = PresetTable()
        /// `--watermark` or `--watermark-data` (and `--watermark-opacity`): the image `watermark:` draws, if any.
        var watermark: WatermarkImage?
        /// `--watermark-url`: where the watermark is fetched at start, if there.
        var watermarkURL: URL?
        /// `--watermark-opacity`: the opacity every URL's watermark opacity multiplies.
        var watermarkOpacity = 1.0
        /// `--secret` (or `IMAGO_SECRET`): the bearer token every request must carry, if any.
        var secret: String?
        /// `--local-root`: the directory `local:///path` sources are read from, if any.
        var localRoot: URL?
        /// `--s3`, `--s3-region`, `--s3-endpoint`, `--s3-virtual-hosted`: where `s3:` sources come from, if served.
        var s3: S3Sources?
        /// Where the credentials `s3:` sources are signed with come from, when `--s3` is given: the AWS SDKs'
        /// default chain (``AWSCredentialSource/default(environment:systemVendorFile:)``); `nil`: unsigned (public
        /// buckets).
        var s3Credentials: AWSCredentialSource?
        /// `--abs`, `--abs-name`, `--abs-endpoint`: where `abs:` sources come from, if served.
        var azureBlob: AzureBlobSources?
        /// `--abs-key`: the account key `abs:` sources are signed with, if given.
        var azureSigning: AzureSharedKeySigning?
        /// `--gcs`, `--gcs-key`, `--gcs-endpoint`: where `gs:` sources come from and their tokens, if served.
        var gcs: GoogleCloudStorageSources?
        /// `--swift` and its `--swift-…` options: the OpenStack account `swift:` sources come from, if served.
        var swift: OpenStackSwiftSources?
        /// `--base64-url-includes-filename`: base64 sources may end with a file name.
        var base64URLIncludesFilename = false
        /// `--arguments-separator`: what separates options' names and arguments, in URLs and presets.
        var argumentsSeparator = ProxyPath.defaultArgumentsSeparator
        /// `--source-url-query-separator`: where the query of a `local:` or object store source starts.
        var sourceQuerySeparator = "?"
        /// `--cookie-passthrough`, `--cookie-passthrough-all` and `--cookie-base-url`: which sources get the
        /// client's cookies, if any.
        var cookiePassthrough: CookiePassthrough?
        /// `--only-presets`: URLs name presets only.
        var onlyPresets = false
        /// `--allowed-processing-options`: the option names URLs may use; `nil`: all.
        var allowedProcessingOptions: Set<String>?
        /// `--use-last-modified`: responses carry the source's `Last-Modified`.
        var usesLastModified = false
        /// `--enable-debug-headers`: responses carry imgproxy's debug headers.
        var sendsDebugHeaders = false
        /// `--development-errors`: error responses say what the access log says.
        var sendsDetailedErrors = false
        /// `--set-canonical-header`: responses name their http(s) source as canonical.
        var setsCanonicalHeader = false
        /// `--return-attachment`: `Content-Disposition: attachment` unless the URL says otherwise.
        var returnsAttachment = false
        /// `--skip-processing-formats`: source formats answered as they are for every URL.
        var skippedFormats: Set<ImageFormat> = []
        /// `--etag-buster`: text mixed into every `ETag`.
        var etagBuster = ""
        /// `--last-modified-buster`: the earliest `Last-Modified` sent, if any.
        var lastModifiedBuster: Date?
        /// `--stale-retry`: seconds a stale answer stands before the failing origin is asked again.
        var staleRetrySeconds = 10
        /// `--cache-control-passthrough`: `Cache-Control` follows the source's freshness.
        var passesSourceCacheControl = false
        /// `--path-prefix`: the path every image URL starts with (no trailing `/`), or empty.
        var pathPrefix = ""
        /// `--allow-origin`: the `Access-Control-Allow-Origin` of every response, if any.
        var allowedOrigin: String?
        /// `--fallback-image` or `--fallback-image-data` (with `--fallback-status` and `--fallback-max-age`): the
        /// image answered when a source cannot be had, if any.
        var fallbackImage: FallbackImage?
        /// `--fallback-image-url`: where the fallback image is fetched at start, if there.
        var fallbackImageURL: URL?
        /// `--fallback-status`: the status of fallback answers (`nil`: the failure's own).
        var fallbackStatus: Int? = 200
        /// `--fallback-max-age`: `Cache-Control` max-age of fallback answers (`nil`: `--max-age`).
        var fallbackMaxAge: Duration?

        /// Fetches the images given by URL (`--watermark-url`, `--fallback-image-url`) with `loader`, the
        /// proxy's source loader, and decodes them, as the other forms were when the arguments were read.
        ///
        /// - Throws: ``UsageError`` naming the option.
        mutating func loadStartupImages(with loader: any DataLoading) async throws {
            if let url = watermarkURL {
                let data = try await StartupImage.url(url).load(with: loader, option: "--watermark")
                watermark = try Self.made("--watermark-url") {
                    try WatermarkImage(data: data, opacity: watermarkOpacity)
                }
            }
            if let url = fallbackImageURL {
                let data = try await StartupImage.url(url).load(with: loader, option: "--fallback-image")
                fallbackImage = try Self.made("--fallback-image-url") { try makeFallback(data) }
            }
        }

        /// The fallback image of `data` with these options' status, age and pixel limit.
        func makeFallback(_ data: Data) throws -> FallbackImage {
            try FallbackImage(data: data, status: fallbackStatus, maxAge: fallbackMaxAge, pixelLimit: pixelLimit)
        }

        /// `make()`'s value, its error a ``UsageError`` naming `option`.
        static func made<T>(_ option: String, _ make: () throws -> T) throws -> T {
            do {
                return try make()
            } catch {
                throw UsageError("option '\(option)': cannot use the image: \(error)")
            }
        }
        /// `--quality`: the output quality when the URL gives none.
        var defaultQuality = 80
        /// `--format-quality`: qualities by format, before `defaultQuality`.
        var formatQuality = ImageProxy.Configuration.defaultFormatQuality
        /// `--preferred-formats`: the formats of outputs whose format nothing else picks.
        var preferredFormats = ImageProxy.Configuration.defaultPreferredFormats
        /// `--jpeg-progressive`: JPEG outputs are progressive.
        var jpegProgressive = false
        /// `--png-quantize` (with `--png-quantization-colors`): PNG outputs' palette size, if quantized.
        var pngPaletteColors: Int?
        /// `--png-interlaced`: PNG outputs are Adam7-interlaced.
        var pngInterlaced = false
        /// `--trusted-signatures`: signatures accepted without checking.
        var trustedSignatures: Set<String> = []
        /// `--enable-client-hints`: `dpr` and `width` from the request's client hints.
        var usesClientHints = false
        /// `--avif-speed`: libavif's speed for AVIF outputs.
        var avifSpeed = ImageProxy.Configuration.defaultAVIFSpeed
        /// `--webp-effort`: libwebp's method for WebP outputs.
        var webpEffort = WebPEncoder().method
        /// `--webp-preset`: libwebp's preset for WebP outputs.
        var webpPreset = WebPEncoder.Preset.default
        /// `--jxl-effort`: libjxl's effort for JPEG XL outputs.
        var jxlEffort = ImageProxy.Configuration.defaultJPEGXLEffort
        /// `--detect-formats`: formats `Accept` picks for URLs that name none.
        var detectedFormats = ImageProxy.Configuration.defaultDetectedFormats
        /// `--enforce-jxl`, `--enforce-avif`, `--enforce-webp`: formats `Accept` picks over the URL's.
        var enforcedFormats: Set<ImageFormat> = []
        /// `--malloc-trim`: seconds between `MallocTrimmer` trims; `nil` (the default): no trimming.
        var mallocTrimInterval: Int?
        var network = NetworkOptions()
        /// `--redis`: the tier shared with the rest of the fleet (originals and outputs), if any.
        var redis = RedisOptions()
        /// `--otel`, `--otel-metrics`: how image requests are traced, and where the spans and metrics go.
        var openTelemetry = OpenTelemetryOptions()
    }
}
