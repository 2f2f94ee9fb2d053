import Dispatch
import Foundation
import Imago
import ImagoServer

#if canImport(Glibc)
    import Glibc
#endif

/// `imago serve [--listen HOST:PORT] [--key HEX --salt HEX | --unsigned] [--allow-host GLOB]… [--allow-private]
/// [--max-age SECONDS] [--cache-control-passthrough] [--use-last-modified] [--workers N] [--queue N] [--cache-dir DIR] [--log-format json|text|off] [--max-pixels N]
/// [--max-animation-frames N [--max-animation-frame-pixels N]]
/// [--malloc-trim SECONDS] [--base-url URL] [--preset NAME=OPTIONS]… [--watermark FILE [--watermark-opacity X]]
/// [--allow-source PREFIX]… [--deny-source PREFIX]… [--secret TOKEN] [--local-root DIR] [--s3 [--s3-region REGION] [--s3-endpoint URL [--s3-virtual-hosted]]] [--abs --abs-name ACCOUNT [--abs-key KEY] [--abs-endpoint URL]] [--gcs [--gcs-key KEY] [--gcs-endpoint URL]] [--swift --swift-auth-url URL --swift-username NAME --swift-api-key KEY [--swift-domain NAME] [--swift-tenant NAME] [--swift-auth-version N]] [--only-presets] [--allowed-processing-options NAME,…] [--path-prefix PATH] [--allow-origin ORIGIN] [--fallback-image FILE [--fallback-status CODE]
/// [--fallback-max-age SECONDS]]
/// [--timeout SECONDS] [--max-bytes SIZE] [--retries N]`: an image proxy in imgproxy's URL format.
enum ServeCommand {
    static let command = Command(
        name: "serve",
        summary: "Run an image proxy (imgproxy URLs): fetch, resize, convert and cache images over HTTP.",
        synopsis:
            "[--listen HOST:PORT] [--key HEX --salt HEX | --unsigned] [--allow-host GLOB]... [--allow-private]"
            + " [--max-age SECONDS] [--cache-control-passthrough] [--use-last-modified] [--workers N] [--queue N] [--cache-dir DIR] [--log-format json|text|off]"
            + " [--max-pixels N] [--max-animation-frames N [--max-animation-frame-pixels N]] [--malloc-trim SECONDS] [--base-url URL] [--preset NAME=OPTIONS]... [--watermark FILE"
            + " [--watermark-opacity X]] [--allow-source PREFIX]... [--deny-source PREFIX]... [--secret TOKEN] [--local-root DIR] [--s3 [--s3-region REGION] [--s3-endpoint URL [--s3-virtual-hosted]]] [--abs --abs-name ACCOUNT [--abs-key KEY] [--abs-endpoint URL]] [--gcs [--gcs-key KEY] [--gcs-endpoint URL]] [--swift --swift-auth-url URL --swift-username NAME --swift-api-key KEY [--swift-domain NAME] [--swift-tenant NAME] [--swift-auth-version N]] [--only-presets] [--allowed-processing-options NAME,…] [--path-prefix PATH] [--allow-origin ORIGIN] [--fallback-image FILE [--fallback-status CODE] [--fallback-max-age SECONDS]]"
            + " \(NetworkOptions.synopsis) \(RedisOptions.synopsis) \(OpenTelemetryOptions.synopsis)",
        details: """
            URLs: /{signature}/{options}/plain/{percent-encoded source URL}[@{ext}] or
            /{signature}/{options}/{base64url source URL}[.{ext}], the signature being
            base64url(HMAC-SHA256(key, salt + the path after the signature)). Options, with imgproxy's names and
            meanings: resize/rs:TYPE:W:H:ENLARGE:EXTEND, size/s:W:H:ENLARGE:EXTEND,
            resizing_type/rt:{fit|fill|fill-down|force|auto}, width/w, height/h, min-width/mw, min-height/mh, zoom/z,
            dpr, enlarge/el, extend/ex:1:GRAVITY, extend_aspect_ratio/exar:1:GRAVITY,
            gravity/g:{ce|no|so|ea|we|noea|nowe|soea|sowe}:X:Y, g:fp:X:Y or g:sm, crop/c:W:H:GRAVITY, trim/t,
            padding/pd:T:R:B:L, background/bg:R:G:B or bg:HEX, quality/q, format_quality/fq:FORMAT:Q…,
            max_bytes/mb, format/f:{jpeg|png|gif|webp|avif|jxl|heic|bmp|ico|tiff|svg}, blur/bl, sharpen/sh,
            pixelate/pix, rotate/rot:DEGREES (a multiple of 90), auto_rotate/ar, cachebuster/cb, expires/exp,
            filename/fn, return_attachment/att, preset/pr, watermark/wm:OPACITY:POSITION:X:Y:SCALE (with --watermark),
            skip_processing/skp:EXT:… (a checked source of a listed format is sent as it is),
            enforce_thumbnail/eth (a HEIC's embedded thumbnail whatever the size), with --allow-security-options
            max_src_resolution/msr, max_src_file_size/msfs, max_animation_frames/maf,
            max_animation_frame_resolution/mafr, max_result_dimension/mrd;
            strip_color_profile/scp:0 (the source's colour profile kept, pixels unconverted; see
            --keep-color-profile), strip_metadata/sm:0 (EXIF, XMP and IPTC kept; see --keep-metadata),
            keep_copyright/kcr:0 (not even the copyright kept; default 1, see --strip-copyright).
            Also GET /healthz and /metrics (Prometheus text).
            With --redis, originals and outputs are shared with every process given the same nodes: one origin
            fetch per image across the fleet; Redis being down or slow is never an error (its breaker opens and
            the local caches carry on).
            Every option may also be set in the environment as IMAGO_ and its name in capitals, - as _
            (--max-pixels as IMAGO_MAX_PIXELS, --key as IMAGO_KEY): flags as true or false, repeatable options
            comma-separated; the command line wins. One access-log line per request goes to
            stdout (source URLs redacted); startup messages go to stderr.
            SIGTERM or Ctrl-C: stop accepting, finish the requests in flight for up to 10 s (--graceful-stop-timeout),
            exit 0.
            Exit status: 0 after a clean stop, 1 when the server cannot start, 2 for bad usage.
            """,
        options: [
            OptionSpec(
                "--listen", value: "HOST:PORT",
                help:
                    "The address to listen on (default 127.0.0.1:8080; :PORT or [::]:PORT is every interface, IPv4 and IPv6, as imgproxy's; 0.0.0.0:PORT every IPv4 one), or unix:PATH for a Unix socket."
            ),
            OptionSpec(
                "--key", value: "HEX", help: "The signing key, hex (default $IMAGO_KEY); HEX,HEX… for key rotation."),
            OptionSpec(
                "--salt", value: "HEX", help: "The signing salt, hex (default $IMAGO_SALT); one per key, in order."),
            OptionSpec(
                "--signature-size", value: "BYTES",
                help:
                    "Accept only signatures cut to BYTES of the HMAC, 1 to 32 (IMGPROXY_SIGNATURE_SIZE; default any of 8 to 32)."
            ),
            OptionSpec("--unsigned", help: "Also serve unsigned URLs (/insecure/… and /_/…)."),
            OptionSpec(
                "--trusted-signatures", value: "SIG,…",
                help: "Signatures accepted without checking (IMGPROXY_TRUSTED_SIGNATURES)."),
            OptionSpec(
                "--allow-host", value: "GLOB", repeatable: true,
                help: "Only fetch from hosts matching GLOB, e.g. '*.example.com' (repeatable; default any host)."),
            OptionSpec(
                "--allow-private", help: "Also fetch from loopback and private addresses (for tests and intranets)."),
            OptionSpec(
                "--allow-network", value: "CIDR", repeatable: true,
                help: "Also fetch from this range, e.g. 10.0.0.0/8; loopback and metadata addresses stay refused."),
            OptionSpec("--max-age", value: "SECONDS", help: "Cache-Control max-age of images (default 31536000)."),
            OptionSpec(
                "--workers", value: "N",
                help:
                    "Renders (fetch to encode) in progress at once (default: 4 x the cores, held to the cgroup's CPU quota)."
            ),
            OptionSpec(
                "--threads", value: "N",
                help: "libmicrohttpd polling threads (default 1; a pool was seen to stall, see RELIABILITY.md)."),
            OptionSpec("--queue", value: "N", help: "Renders waiting before new ones get 503 (default 256)."),
            OptionSpec(
                "--reuse-port",
                help: "Let several imago serve processes listen on one port, one per core (IMGPROXY_SO_REUSEPORT)."),
            OptionSpec(
                "--metrics-listen", value: "HOST:PORT",
                help: "Serve /metrics there only, not on --listen (IMGPROXY_PROMETHEUS_BIND)."),
            OptionSpec(
                "--client-keep-alive-timeout", value: "SECONDS",
                help:
                    "Reuse a connection to an origin only within SECONDS of its last use; 0 never reuses (default 118; IMGPROXY_CLIENT_KEEP_ALIVE_TIMEOUT)."
            ),
            OptionSpec(
                "--metrics-namespace", value: "NAME",
                help:
                    "Start every metric's name with NAME_ (default imago_serve; empty: bare names; IMGPROXY_PROMETHEUS_NAMESPACE)."
            ),
            OptionSpec(
                "--health-check-path", value: "PATH",
                help: "Answer PATH as /healthz too, e.g. /ping (IMGPROXY_HEALTH_CHECK_PATH)."),
            OptionSpec(
                "--max-clients", value: "N",
                help: "Connections open at once; more wait to be accepted (default 1024; imgproxy's MAX_CLIENTS)."),
            OptionSpec(
                "--connection-timeout", value: "SECONDS",
                help: "Close a connection idle for SECONDS, mid-request or between requests (default 30)."),
            OptionSpec(
                "--graceful-stop-timeout", value: "SECONDS",
                help:
                    "On SIGTERM, finish requests in flight for up to SECONDS (default 10; IMGPROXY_GRACEFUL_STOP_TIMEOUT)."
            ),
            OptionSpec(
                "--request-timeout", value: "SECONDS",
                help: "Answer 503 to a request whose output takes longer (IMGPROXY_TIMEOUT; default none)."),
            OptionSpec(
                "--svg-timeout", value: "SECONDS",
                help:
                    "Stop drawing an SVG source after SECONDS and answer 422 (default 10; librsvg cannot be interrupted, "
                    + "so it draws in a child process)."),
            OptionSpec(
                "--heif-timeout", value: "SECONDS",
                help:
                    "Stop decoding a HEIC/HEIF source or encoding a HEIC output after SECONDS and answer 422 (default "
                    + "30; both run in child processes, so that a file libheif aborts on costs one request and x265's "
                    + "leak stays in a child)."),
            OptionSpec(
                "--heif-in-process",
                help: "Decode and encode HEIC/HEIF in the server's process (a little faster; for trusted sources only)."
            ),
            OptionSpec(
                "--env-aws-secret-id", value: "ID",
                help:
                    "Read settings as .env text from this AWS Secrets Manager secret at start (IMGPROXY_ENV_AWS_SECRET_ID)."
            ),
            OptionSpec("--env-aws-secret-version-id", value: "ID", help: "The secret's version (default the current)."),
            OptionSpec(
                "--env-aws-secret-version-stage", value: "STAGE", help: "The secret's stage, e.g. AWSPREVIOUS."),
            OptionSpec(
                "--env-aws-secret-region", value: "REGION",
                help: "The secret's region (default AWS_REGION, else us-west-1)."),
            OptionSpec(
                "--env-aws-ssm-parameters-path", value: "PATH",
                help:
                    "Read settings from the Parameter Store parameters under PATH at start (IMGPROXY_ENV_AWS_SSM_PARAMETERS_PATH)."
            ),
            OptionSpec(
                "--env-aws-ssm-parameters-region", value: "REGION",
                help: "The parameters' region (default AWS_REGION, else us-west-1)."),
            OptionSpec(
                "--env-gcp-secret-id", value: "SECRET",
                help:
                    "Read settings as .env text from this Google Cloud Secret Manager secret at start (IMGPROXY_ENV_GCP_SECRET_ID)."
            ),
            OptionSpec(
                "--env-gcp-secret-project-id", value: "PROJECT",
                help: "The secret's project (default GOOGLE_CLOUD_PROJECT; IMGPROXY_ENV_GCP_SECRET_PROJECT_ID)."),
            OptionSpec(
                "--env-gcp-secret-version-id", value: "VERSION", help: "The secret's version (default latest)."),
            OptionSpec(
                "--env-gcp-key", value: "JSON|FILE",
                help:
                    "A service account key to read it with (default Application Default Credentials; IMGPROXY_ENV_GCP_KEY)."
            ),
            OptionSpec(
                "--env-gcp-secret-endpoint", value: "URL",
                help: "Secret Manager's endpoint, e.g. a Private Service Connect one (default Google's)."),
            OptionSpec(
                "--env-file", value: "FILE",
                help:
                    "Read environment variables (IMAGO_ options, cloud credentials) from a .env FILE, over the process's (IMGPROXY_ENV_LOCAL_FILE_PATH)."
            ),
            OptionSpec(
                "--cache-dir", value: "DIR",
                help: "The cache directory (default $XDG_CACHE_HOME/imago/serve, else ~/.cache/imago/serve)."),
            OptionSpec(
                "--log-format", value: "FORMAT", help: "Access log lines as json (default), text, or off for none."),
            OptionSpec(
                "--log-buffer", value: "SIZE",
                help:
                    "Access log lines held while standard output's reader is behind (default 1M); more are dropped and counted in log_records_dropped_total."
            ),
            OptionSpec(
                "--syslog",
                help:
                    "Send access log lines to syslog too, the local daemon's /dev/log unless told (IMGPROXY_SYSLOG_ENABLE)."
            ),
            OptionSpec(
                "--syslog-network", value: "unix|udp|tcp",
                help: "How --syslog-address is reached (IMGPROXY_SYSLOG_NETWORK; default the local socket)."),
            OptionSpec(
                "--syslog-address", value: "ADDRESS",
                help: "A socket path, or HOST:PORT of a collector (IMGPROXY_SYSLOG_ADDRESS)."),
            OptionSpec(
                "--syslog-level", value: "LEVEL",
                help: "Send lines of LEVEL and above: debug, info (default), warn, error (IMGPROXY_SYSLOG_LEVEL)."),
            OptionSpec(
                "--syslog-tag", value: "TAG", help: "Tag the lines TAG (default imago; IMGPROXY_SYSLOG_TAG)."),
            OptionSpec(
                "--cloudwatch-service-name", value: "NAME",
                help:
                    "Put Workers, RequestsInProgress, ImagesInProgress and WorkersUtilization into CloudWatch every interval, dimension ServiceName=NAME (IMGPROXY_CLOUD_WATCH_SERVICE_NAME)."
            ),
            OptionSpec(
                "--cloudwatch-namespace", value: "NAME",
                help: "Their namespace (default imago; IMGPROXY_CLOUD_WATCH_NAMESPACE)."),
            OptionSpec(
                "--cloudwatch-region", value: "REGION",
                help: "Their region (default AWS_REGION, else us-west-1; IMGPROXY_CLOUD_WATCH_REGION)."),
            OptionSpec(
                "--cloudwatch-interval", value: "SECONDS", help: "Seconds between puts, 1 to 3600 (default 10)."),
            OptionSpec(
                "--sentry-dsn", value: "DSN",
                help: "Report server and origin failures (5xx) to Sentry (IMGPROXY_SENTRY_DSN)."),
            OptionSpec(
                "--sentry-environment", value: "NAME",
                help: "The environment reports are filed under (default production; IMGPROXY_SENTRY_ENVIRONMENT)."),
            OptionSpec(
                "--sentry-release", value: "NAME",
                help: "The release reports name (default imago@VERSION; IMGPROXY_SENTRY_RELEASE)."),
            OptionSpec(
                "--log-level", value: "LEVEL",
                help:
                    "Write access log lines of LEVEL and above: debug, info (default), warn (4xx and 5xx), error (5xx) (IMGPROXY_LOG_LEVEL)."
            ),
            OptionSpec("--max-pixels", value: "N", help: "Refuse sources over N pixels with 422 (default 50000000)."),
            OptionSpec(
                "--max-animation-frames", value: "N",
                help: "Keep up to N frames of animations, sent as animated WebP or GIF (default 1: the first frame)."),
            OptionSpec(
                "--max-animation-frame-pixels", value: "N",
                help: "Hold each kept frame's canvas to N pixels instead of all frames together to --max-pixels "
                    + "(imgproxy's IMGPROXY_MAX_ANIMATION_FRAME_RESOLUTION; default 0: all frames together)."),
            OptionSpec(
                "--allow-security-options",
                help: "Let URLs tighten the limits for themselves: max_src_resolution, max_src_file_size, "
                    + "max_animation_frames, max_animation_frame_resolution, max_result_dimension."),
            OptionSpec(
                "--always-rasterize-svg",
                help: "Draw SVG sources into the negotiated raster format when the URL names none "
                    + "(IMGPROXY_ALWAYS_RASTERIZE_SVG; default: answer them as SVG, sanitized)."),
            OptionSpec(
                "--keep-color-profile",
                help: "Keep sources' colour profiles (wide gamut) in formats that carry one, pixels unconverted "
                    + "(IMGPROXY_STRIP_COLOR_PROFILE=false; URLs may say scp:1). Default: every result sRGB."),
            OptionSpec(
                "--keep-metadata",
                help: "Keep sources' EXIF, XMP and IPTC in outputs (IMGPROXY_STRIP_METADATA=false; URLs may say sm:1). "
                    + "Default: stripped but for the copyright."),
            OptionSpec(
                "--strip-copyright",
                help: "Strip the copyright (EXIF Artist/Copyright, XMP rights, IPTC credits) with the rest "
                    + "(IMGPROXY_KEEP_COPYRIGHT=false; URLs may say kcr:1)."),
            OptionSpec(
                "--enforce-thumbnail",
                help: "Render HEIC sources from their embedded thumbnail whatever the size (URLs may say eth:0)."),
            OptionSpec(
                "--max-result-dimension", value: "N",
                help: "Scale results down until their longer side is at most N pixels (default 0: up to 8192)."),
            OptionSpec(
                "--use-linear-colorspace",
                help:
                    "Resize in linear light: truer fine detail, more CPU (IMGPROXY_USE_LINEAR_COLORSPACE)."
            ),
            OptionSpec(
                "--disable-shrink-on-load",
                help:
                    "Decode every raster source at full size before resizing: more time and memory for large sources (IMGPROXY_DISABLE_SHRINK_ON_LOAD)."
            ),
            OptionSpec(
                "--base-url", value: "URL",
                help: "Put before every source URL, so URLs may carry paths relative to it (e.g. https://img.example/)."
            ),
            OptionSpec(
                "--url-replacements", value: "LIST",
                help: "Rewrite source URLs' starts: PATTERN=REPLACEMENT;… with * and ${N} (IMGPROXY_URL_REPLACEMENTS)."),
            OptionSpec(
                "--watermark", value: "FILE", help: "The image watermark:/wm: draws (any format Imago decodes)."),
            OptionSpec(
                "--watermark-data", value: "BASE64", help: "The watermark image's bytes in base64, instead of a file."),
            OptionSpec(
                "--watermark-url", value: "URL",
                help: "Fetch the watermark image from URL at start (through the source policy), instead of a file."),
            OptionSpec(
                "--watermark-opacity", value: "X",
                help: "Opacity 0-1 that each URL's watermark opacity multiplies (default 1)."),
            OptionSpec(
                "--allow-source", value: "PREFIX", repeatable: true,
                help: "Only fetch URLs starting with PREFIX, '*' matching within a segment (IMGPROXY_ALLOWED_SOURCES)."),
            OptionSpec(
                "--deny-source", value: "PREFIX", repeatable: true,
                help: "Never fetch URLs starting with PREFIX, e.g. s3://private-bucket/ (IMGPROXY_S3_DENIED_BUCKETS …)."
            ),
            OptionSpec(
                "--secret", value: "TOKEN",
                help:
                    "Answer only requests with 'Authorization: Bearer TOKEN' (default $IMAGO_SECRET; /healthz is open)."
            ),
            OptionSpec(
                "--local-root", value: "DIR",
                help: "Serve local:///PATH sources from files under DIR, as imgproxy's IMGPROXY_LOCAL_FILESYSTEM_ROOT."),
            OptionSpec(
                "--s3",
                help:
                    "Serve s3://BUCKET/KEY[?VERSION] sources (IMGPROXY_USE_S3), signed with AWS_ACCESS_KEY_ID and "
                    + "AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN) when they are set."),
            OptionSpec(
                "--s3-region", value: "REGION",
                help: "The buckets' region (IMGPROXY_S3_REGION; default AWS_REGION, else us-east-1)."),
            OptionSpec(
                "--s3-endpoint", value: "URL",
                help: "An S3-compatible endpoint, e.g. http://minio:9000 (IMGPROXY_S3_ENDPOINT; default AWS's)."),
            OptionSpec(
                "--s3-virtual-hosted",
                help: "Address --s3-endpoint's objects as BUCKET.HOST/KEY, not HOST/BUCKET/KEY (path style)."),
            OptionSpec(
                "--s3-assume-role", value: "ARN",
                help: "Assume this role at STS with the credentials found, and sign with its own "
                    + "(IMGPROXY_S3_ASSUME_ROLE_ARN): buckets of another account."),
            OptionSpec(
                "--s3-assume-role-external-id", value: "ID",
                help: "The external ID the role's trust policy asks for (IMGPROXY_S3_ASSUME_ROLE_EXTERNAL_ID)."),
            OptionSpec(
                "--s3-access-point", value: "BUCKET=ARN", repeatable: true,
                help:
                    "Fetch BUCKET's objects through the access point ARN, signed for its region (IMGPROXY_S3_ACCESS_POINTS)."
            ),
            OptionSpec(
                "--abs",
                help: "Serve abs://CONTAINER/BLOB sources from Azure Blob Storage (IMGPROXY_USE_ABS; needs --abs-name)."
            ),
            OptionSpec("--abs-name", value: "ACCOUNT", help: "The storage account (IMGPROXY_ABS_NAME)."),
            OptionSpec(
                "--abs-key", value: "KEY",
                help: "The account key, base64, to sign with (IMGPROXY_ABS_KEY; better IMAGO_ABS_KEY); none: unsigned."),
            OptionSpec(
                "--abs-endpoint", value: "URL",
                help:
                    "The Blob service URL, e.g. Azurite's http://127.0.0.1:10000/devstoreaccount1 (IMGPROXY_ABS_ENDPOINT)."
            ),
            OptionSpec(
                "--gcs",
                help: "Serve gs://BUCKET/OBJECT sources from Google Cloud Storage (IMGPROXY_USE_GCS), with --gcs-key's "
                    + "tokens, else Application Default Credentials' (GOOGLE_APPLICATION_CREDENTIALS, gcloud's file, "
                    + "the metadata server on Google Cloud or at GCE_METADATA_HOST), else unsigned."),
            OptionSpec(
                "--gcs-key", value: "KEY",
                help: "A service account key or gcloud user credentials: the JSON, or a file holding it "
                    + "(IMGPROXY_GCS_KEY; better IMAGO_GCS_KEY)."),
            OptionSpec(
                "--gcs-endpoint", value: "URL",
                help:
                    "A Cloud Storage XML API endpoint instead of https://storage.googleapis.com (IMGPROXY_GCS_ENDPOINT)."
            ),
            OptionSpec(
                "--swift",
                help: "Serve swift://CONTAINER/OBJECT sources from OpenStack Swift (IMGPROXY_USE_SWIFT), signing in at "
                    + "--swift-auth-url with --swift-username and --swift-api-key."),
            OptionSpec(
                "--swift-auth-url", value: "URL",
                help: "The identity service: Keystone's .../v3 or .../v2.0, or .../auth/v1.0 (IMGPROXY_SWIFT_AUTH_URL)."
            ),
            OptionSpec("--swift-username", value: "NAME", help: "The user (IMGPROXY_SWIFT_USERNAME)."),
            OptionSpec(
                "--swift-api-key", value: "KEY",
                help: "The password or API key (IMGPROXY_SWIFT_API_KEY; better IMAGO_SWIFT_API_KEY)."),
            OptionSpec(
                "--swift-domain", value: "NAME",
                help: "The user's and project's domain, v3 (IMGPROXY_SWIFT_DOMAIN; default: Default)."),
            OptionSpec(
                "--swift-tenant", value: "NAME",
                help: "The project (tenant) to scope to, v2 and v3 (IMGPROXY_SWIFT_TENANT)."),
            OptionSpec(
                "--swift-auth-version", value: "N",
                help: "1, 2 or 3; 0 (the default) reads it from --swift-auth-url (IMGPROXY_SWIFT_AUTH_VERSION)."),
            OptionSpec(
                "--cache-control-passthrough",
                help:
                    "Cache-Control from the source's freshness (time left of its max-age or Expires) instead of --max-age; "
                    + "outputs past it are rendered again from the revalidated source."
            ),
            OptionSpec(
                "--stale-retry", value: "SECONDS",
                help: "With --cache-control-passthrough, answer an output stale for SECONDS after its origin fails, "
                    + "doubling while it keeps failing (default 10, at most 300)."),
            OptionSpec(
                "--use-last-modified",
                help: "Send the source's Last-Modified and answer If-Modified-Since with 304, as imgproxy does."),
            OptionSpec(
                "--enable-debug-headers",
                help:
                    "Send X-Origin-Content-Length, X-Origin-Width/-Height and X-Result-Width/-Height, as imgproxy does."
            ),
            OptionSpec(
                "--development-errors",
                help:
                    "Tell clients why an error happened as the access log does, store credential failures too (IMGPROXY_DEVELOPMENT_ERRORS_MODE)."
            ),
            OptionSpec(
                "--set-canonical-header",
                help: "Send Link: <source>; rel=\"canonical\" for http(s) sources, as imgproxy does."),
            OptionSpec(
                "--skip-processing-formats", value: "LIST",
                help: "Answer sources of these formats (e.g. gif,webp) with their own bytes, as skp: in every URL."),
            OptionSpec(
                "--return-attachment",
                help: "Content-Disposition: attachment for URLs without return_attachment, as imgproxy's option."),
            OptionSpec(
                "--etag-buster", value: "TEXT",
                help: "Change every output's ETag (change TEXT to have clients and CDNs fetch outputs again)."),
            OptionSpec(
                "--last-modified-buster", value: "DATE",
                help:
                    "Send Last-Modified no earlier than DATE, RFC 3339 (IMGPROXY_LAST_MODIFIED_BUSTER; needs --use-last-modified)."
            ),
            OptionSpec(
                "--allowed-processing-options", value: "NAME,…",
                help: "Refuse (403) URL options not named here, e.g. w,h,pr (IMGPROXY_ALLOWED_PROCESSING_OPTIONS)."),
            OptionSpec(
                "--only-presets",
                help: "Accept only preset names in URLs: /SIGNATURE/NAME[:NAME…]/SOURCE (needs --preset)."),
            OptionSpec(
                "--path-prefix", value: "PATH",
                help: "Serve image URLs under PATH (e.g. /images), as imgproxy's IMGPROXY_PATH_PREFIX."),
            OptionSpec(
                "--allow-origin", value: "ORIGIN",
                help: "Send Access-Control-Allow-Origin: ORIGIN (e.g. '*') and answer OPTIONS preflights."),
            OptionSpec(
                "--fallback-image", value: "FILE",
                help: "Answer with FILE, rendered with the URL's options, when a source cannot be had (404, 5xx, …)."),
            OptionSpec(
                "--fallback-image-data", value: "BASE64",
                help: "The fallback image's bytes in base64, instead of a file."),
            OptionSpec(
                "--fallback-image-url", value: "URL",
                help: "Fetch the fallback image from URL at start (through the source policy), instead of a file."),
            OptionSpec(
                "--fallback-status", value: "CODE",
                help: "The status of fallback answers (default 200; 0 keeps the failure's own, e.g. 404)."),
            OptionSpec(
                "--fallback-max-age", value: "SECONDS",
                help: "Cache-Control max-age of fallback answers (default --max-age)."),
            OptionSpec(
                "--quality", value: "Q",
                help: "Output quality 1-100 when the URL gives none (default 80; IMGPROXY_QUALITY)."),
            OptionSpec(
                "--format-quality", value: "F=Q,…",
                help: "Qualities by format before --quality, e.g. 'jpeg=70,webp=75' (default avif=65)."),
            OptionSpec(
                "--preferred-formats", value: "F,…",
                help: "Formats for URLs and clients that pick none (default jpeg,png,gif; IMGPROXY_PREFERRED_FORMATS)."
            ),
            OptionSpec(
                "--avif-speed", value: "N",
                help: "libavif's speed for AVIF outputs, 0 (slowest, smallest) to 10 (default 9; IMGPROXY_AVIF_SPEED)."),
            OptionSpec(
                "--webp-effort", value: "N",
                help:
                    "libwebp's method for WebP outputs, 0 (fastest) to 6 (smallest) (default 4; IMGPROXY_WEBP_EFFORT)."),
            OptionSpec(
                "--webp-preset", value: "NAME",
                help:
                    "libwebp's preset for WebP outputs: default, picture, photo, drawing, icon, text (IMGPROXY_WEBP_PRESET)."
            ),
            OptionSpec(
                "--jxl-effort", value: "N",
                help:
                    "libjxl's effort for JPEG XL outputs, 1 (fastest) to 9 (smallest) (default 4; IMGPROXY_JXL_EFFORT)."
            ),
            OptionSpec(
                "--jpeg-progressive", help: "Write progressive JPEGs (IMGPROXY_JPEG_PROGRESSIVE; default baseline)."),
            OptionSpec(
                "--png-quantize",
                help: "Write PNGs as palette PNGs, partial alpha included (IMGPROXY_PNG_QUANTIZE; default lossless)."),
            OptionSpec(
                "--png-quantization-colors", value: "N",
                help: "The most colours of a quantized PNG, 2 to 256 (default 256)."),
            OptionSpec(
                "--png-interlaced",
                help: "Write Adam7-interlaced PNGs, drawn coarse-to-fine as they load (IMGPROXY_PNG_INTERLACED)."),
            OptionSpec(
                "--enable-client-hints",
                help: "Take dpr and width from Sec-CH-DPR/DPR and Sec-CH-Width/Width where the URL sets none."),
            OptionSpec(
                "--detect-formats", value: "F,…|none",
                help:
                    "Formats Accept picks for URLs naming none (default avif,webp; jxl too; none for a CDN not varying on Accept)."
            ),
            OptionSpec(
                "--enforce-jxl", help: "JPEG XL for clients that accept it, even when the URL names another format."),
            OptionSpec(
                "--enforce-avif", help: "AVIF for clients that accept it, even when the URL names another format."),
            OptionSpec(
                "--enforce-webp",
                help: "WebP for clients that accept it (JPEG XL and AVIF first), even when the URL names another."
            ),
            OptionSpec(
                "--preset", value: "NAME=OPTIONS", repeatable: true, environmentSeparator: "--presets-separator",
                help: "A preset for preset:NAME, e.g. 'thumb=rs:fill:256:256/q:70'; 'default' applies to every URL."),
            OptionSpec(
                "--presets-separator", value: "TEXT",
                help: "What separates presets in IMAGO_PRESET (default ','; IMGPROXY_PRESETS_SEPARATOR)."),
            OptionSpec(
                "--presets-path", value: "FILE",
                help: "Presets from FILE, NAME=OPTIONS a line, # comments (IMGPROXY_PRESETS_PATH), after --preset ones."
            ),
            OptionSpec(
                "--cookie-passthrough",
                help:
                    "Send the client's cookies to sources on its Host or --cookie-base-url's (IMGPROXY_COOKIE_PASSTHROUGH)."
            ),
            OptionSpec(
                "--cookie-passthrough-all",
                help:
                    "Send the client's cookies to every source (IMGPROXY_COOKIE_PASSTHROUGH_ALL); outputs stay private."
            ),
            OptionSpec(
                "--cookie-base-url", value: "URL",
                help: "The site the client's cookies are for, e.g. https://app.example.com/ (IMGPROXY_COOKIE_BASE_URL)."
            ),
            OptionSpec(
                "--arguments-separator", value: "CHAR",
                help:
                    "Separate options' arguments with CHAR, e.g. ',' for rs,fill,300,200 (IMGPROXY_ARGUMENTS_SEPARATOR)."
            ),
            OptionSpec(
                "--source-url-query-separator", value: "TEXT",
                help:
                    "Start the query of local: and object store sources (an S3 version) at TEXT (default ?; empty: ? is part of names; IMGPROXY_SOURCE_URL_QUERY_SEPARATOR)."
            ),
            OptionSpec(
                "--base64-url-includes-filename",
                help:
                    "Drop a file name after base64 sources: /SIG/OPTIONS/BASE64.EXT/NAME (IMGPROXY_BASE64_URL_INCLUDES_FILENAME)."
            ),
            OptionSpec(
                "--malloc-trim", value: "SECONDS",
                help: "Return malloc's free arena pages to the kernel every SECONDS (glibc; default off)."),
        ] + NetworkOptions.specs + RedisOptions.specs + OpenTelemetryOptions.specs,
        run: { args, console in await run(args, console: console) })

    /// Runs the command until `interrupt` fires (default: SIGTERM or SIGINT). `onListening` receives the port.
    static func run(
        _ args: ParsedArguments, console: Console, interrupt: InterruptTrigger? = nil,
        onListening: @Sendable (UInt16) -> Void = { _ in }
    ) async -> Int32 {
        var options: Options
        let environment: [String: String]
        do {
            environment = try await cloudEnvironment(args, over: console.environment)
        } catch {
            console.printError("imago serve: \(error)")
            return 1
        }
        do {
            options = try parse(args, environment: environment)
        } catch {
            console.printError("imago serve: \(error)")
            console.printError("Usage: imago serve \(command.synopsis)")
            return 2
        }
        if options.openTelemetry.isEnabled {
            // Where it runs, as imgproxy's AWS detectors say it (nothing off AWS, within a second).
            let detected = await AWSResourceDetector(environment: environment).attributes()
            options.openTelemetry.addResource(detected)
            if case .string(let platform)? = detected.first(where: { $0.key == "cloud.platform" })?.value {
                console.printError("imago serve: otel: resource from \(platform)")
            }
        }
        let trigger = interrupt ?? InterruptTrigger()
        let tokens = interrupt == nil ? installSignals(trigger) : nil
        defer { tokens.map(removeSignals) }

        let originals: DiskCache
        let outputs: DiskCache
        do {
            originals = try DiskCache(directory: options.cacheDirectory.appendingPathComponent("originals"))
            outputs = try DiskCache(directory: options.cacheDirectory.appendingPathComponent("outputs"))
        } catch {
            console.printError("imago serve: cannot use the cache directory: \(error)")
            return 1
        }
        defer {
            originals.close()
            outputs.close()
        }
        let loader = makeSourceLoader(options)
        do {
            try await options.loadStartupImages(with: loader)
        } catch {
            console.printError("imago serve: \(error)")
            return 1
        }
        var configuration = ImageProxy.Configuration(dataLoader: loader)
        configuration.decoders.register(svgDecoder(timeout: .seconds(options.svgTimeout)))
        if !options.decodesHEIFInProcess {
            configuration.decoders.register(heifDecoder(timeout: .seconds(options.heifTimeout)))
            configuration.encoders.register(heicEncoder(timeout: .seconds(options.heifTimeout)))
        }
        configuration.originalCache = originals
        let shared = options.redis.makeCache()
        defer { shared?.close() }
        configuration.sharedCache = shared
        configuration.outputCache = OutputCache(disk: outputs, shared: shared)
        configuration.signer = options.signer
        configuration.allowsUnsigned = options.allowsUnsigned
        configuration.sourcePolicy = options.sourcePolicy
        configuration.presets = options.presets
        configuration.base64URLIncludesFilename = options.base64URLIncludesFilename
        configuration.argumentsSeparator = options.argumentsSeparator
        configuration.sourceQuerySeparator = options.sourceQuerySeparator
        configuration.cookiePassthrough = options.cookiePassthrough
        configuration.watermark = options.watermark
        configuration.fallbackImage = options.fallbackImage
        configuration.pathPrefix = options.pathPrefix
        configuration.onlyPresets = options.onlyPresets
        configuration.allowedProcessingOptions = options.allowedProcessingOptions
        configuration.usesLastModified = options.usesLastModified
        configuration.sendsDebugHeaders = options.sendsDebugHeaders
        configuration.sendsDetailedErrors = options.sendsDetailedErrors
        configuration.setsCanonicalHeader = options.setsCanonicalHeader
        configuration.healthCheckPath = options.healthCheckPath
        configuration.servesMetrics = options.metricsAddress == nil
        configuration.metricsNamespace = options.metricsNamespace
        configuration.returnsAttachment = options.returnsAttachment
        configuration.skippedFormats = options.skippedFormats
        configuration.etagBuster = options.etagBuster
        configuration.lastModifiedBuster = options.lastModifiedBuster
        configuration.staleRetryInterval = .seconds(options.staleRetrySeconds)
        configuration.maximumStaleRetryInterval = .seconds(max(300, options.staleRetrySeconds))
        configuration.passesSourceCacheControl = options.passesSourceCacheControl
        configuration.localRoot = options.localRoot
        configuration.s3 = options.s3
        configuration.azureBlob = options.azureBlob
        configuration.gcs = options.gcs
        configuration.swift = options.swift
        configuration.secret = options.secret
        configuration.allowedOrigin = options.allowedOrigin
        configuration.baseURL = options.baseURL
        configuration.urlReplacements = options.urlReplacements
        configuration.maxAge = .seconds(options.maxAge)
        configuration.workers = options.workers
        configuration.queueLimit = options.queueLimit
        configuration.requestTimeout = options.requestTimeout.map { .seconds($0) }
        configuration.pixelLimit = options.pixelLimit
        configuration.maxAnimationFrames = options.maxAnimationFrames
        configuration.maxAnimationFramePixels = options.maxAnimationFramePixels
        configuration.maxResultDimension = options.maxResultDimension
        configuration.usesLinearColorspace = options.usesLinearColorspace
        configuration.shrinksOnLoad = !options.disablesShrinkOnLoad
        configuration.enforcesThumbnail = options.enforcesThumbnail
        configuration.keepsColorProfile = options.keepsColorProfile
        configuration.stripsMetadata = !options.keepsMetadata
        configuration.keepsCopyright = !options.stripsCopyright
        configuration.rasterizesSVG = options.rasterizesSVG
        configuration.allowsSecurityOptions = options.allowsSecurityOptions
        configuration.defaultQuality = options.defaultQuality
        configuration.formatQuality = options.formatQuality
        configuration.preferredFormats = options.preferredFormats
        configuration.enforcedFormats = options.enforcedFormats
        configuration.detectedFormats = options.detectedFormats
        configuration.usesClientHints = options.usesClientHints
        configuration.trustedSignatures = options.trustedSignatures
        if options.jpegProgressive { configuration.encoders.register(JPEGEncoder(isProgressive: true)) }
        if options.pngPaletteColors != nil || options.pngInterlaced {
            configuration.encoders.register(
                PNGEncoder(paletteColors: options.pngPaletteColors, interlaced: options.pngInterlaced))
        }
        if options.avifSpeed != ImageProxy.Configuration.defaultAVIFSpeed {
            configuration.encoders.register(AVIFEncoder(speed: options.avifSpeed))
        }
        let webp = WebPEncoder(method: options.webpEffort, preset: options.webpPreset)
        if webp.settingsIdentifier != nil { configuration.encoders.register(webp) }  // not the default one
        if options.jxlEffort != ImageProxy.Configuration.defaultJPEGXLEffort {
            configuration.encoders.register(JPEGXLEncoder(effort: options.jxlEffort))
        }
        // Each record: a line on stdout (unless --log-format off), to syslog, and to Sentry for a server or origin
        // failure (5xx but 503, which only says the server is busy).
        let (writesLines, json, least) = (options.logFormat != .off, options.logFormat != .text, options.logLevel)
        let syslog: (writer: SyslogWriter, least: AccessLogRecord.Level)?
        do {
            syslog = try options.syslog.map { (try SyslogWriter(destination: $0.destination, tag: $0.tag), $0.level) }
        } catch {
            console.printError("imago serve: \(error)")
            return 2
        }
        let sentry = options.sentry.map {
            SentryClient(dsn: $0.dsn, environment: $0.environment, release: $0.release)
        }
        // The logs' own failures only on standard error: their collector did not take them.
        let logs = options.openTelemetry.logs.map { settings in
            (
                exporter: OTLPLogExporter(configuration: settings.exporter) {
                    console.printError("imago serve: otel: \($0)")
                },
                least: settings.least ?? least
            )
        }
        let log = ServerLog(console: console, logs: logs)
        let traces = options.openTelemetry.traces.map { settings in
            OTLPTraceExporter(configuration: settings.exporter) { log.say("otel: \($0)", level: .warn) }
        }
        configuration.tracing = options.openTelemetry.traces?.tracing
        // Lines for standard output go through a writer of their own, so that a reader that falls behind or goes
        // away costs dropped lines (counted in the metrics), never a stalled or ended server.
        signal(SIGPIPE, SIG_IGN)
        let lines =
            writesLines ? console.outputDescriptor.map { LineWriter(descriptor: $0, capacity: options.logBuffer) } : nil
        let printLine: @Sendable (String) -> Void
        if let lines { printLine = { lines.write($0) } } else { printLine = { console.print($0) } }
        configuration.droppedLogRecords = { sink in
            switch sink {
            case .stdout: lines?.droppedCount ?? 0
            case .syslog: syslog?.writer.droppedCount ?? 0
            case .otelLogs: logs?.exporter.droppedCount ?? 0
            case .otelTraces: traces?.droppedCount ?? 0
            case .sentry: sentry?.droppedCount ?? 0
            }
        }
        if writesLines || syslog != nil || sentry != nil || traces != nil || logs != nil {
            configuration.accessLog = { record in
                let onStdout = writesLines && record.level >= least
                let toSyslog = syslog.map { record.level >= $0.least } ?? false
                if onStdout || toSyslog {
                    let text = json ? record.jsonLine : record.textLine
                    if onStdout { printLine(text) }
                    if toSyslog { syslog?.writer.write(text, severity: SyslogWriter.Severity(record.level)) }
                }
                traces?.submit(record.spans)
                if let logs, record.level >= logs.least, let entry = record.logEntry { logs.exporter.submit([entry]) }
                if let sentry, record.status >= 500, record.status != 503 {
                    sentry.capture(
                        record.error ?? "HTTP \(record.status)",
                        tags: [
                            "status": "\(record.status)", "route": record.route, "request_id": record.requestID ?? "",
                        ],
                        request: (record.method, record.source ?? record.route))
                }
            }
        }
        let proxy = ImageProxy(configuration: configuration)
        // Opt-in (RELIABILITY.md §11): RSS otherwise climbs to the high-water mark of every malloc arena.
        let trimmer = options.mallocTrimInterval.map { MallocTrimmer(interval: .seconds($0)) }
        defer { trimmer?.cancel() }
        let server: MicroHTTPServer
        do {
            if let socketPath = options.socketPath {
                server = try MicroHTTPServer(
                    socketPath: socketPath, connectionLimit: options.connectionLimit,
                    connectionTimeout: options.connectionTimeout, threads: options.threads,
                    rejected: { proxy.countRejection(status: $0) }, immediate: { proxy.immediateResponse(to: $0) }
                ) { await proxy.respond(to: $0) }
            } else {
                server = try MicroHTTPServer(
                    host: options.host, port: options.port, connectionLimit: options.connectionLimit,
                    connectionTimeout: options.connectionTimeout, reusesPort: options.reusesPort,
                    threads: options.threads, rejected: { proxy.countRejection(status: $0) },
                    immediate: { proxy.immediateResponse(to: $0) }
                ) { await proxy.respond(to: $0) }
            }
        } catch {
            console.printError("imago serve: \(error)")
            return 1
        }
        var metricsServer: MicroHTTPServer?
        if let address = options.metricsAddress {
            do {
                metricsServer = try MicroHTTPServer(
                    host: address.host, port: address.port, connectionLimit: 64,
                    immediate: { proxy.metricsListenerResponse(to: $0) }
                ) { proxy.metricsListenerResponse(to: $0) }
            } catch {
                server.stop()
                console.printError("imago serve: metrics: \(error)")
                return 1
            }
        }
        defer { metricsServer?.stop() }
        if let socketPath = server.socketPath {
            log.say("listening on unix:\(socketPath)")
        } else {
            let shown = server.host.contains(":") ? "[\(server.host)]" : server.host
            log.say("listening on http://\(shown):\(server.port)")
        }
        if let metricsServer {
            let shownMetrics = metricsServer.host.contains(":") ? "[\(metricsServer.host)]" : metricsServer.host
            log.say("metrics on http://\(shownMetrics):\(metricsServer.port)/metrics")
        }
        if let traces {
            log.say("otel: traces of image requests to \(traces.configuration.endpoint)")
        }
        let metricsExporter = options.openTelemetry.metrics.map { settings in
            OTLPMetricExporter(configuration: settings, onFailure: { log.say("otel: \($0)", level: .warn) }) {
                proxy.metrics.families()
            }
        }
        if let metricsExporter {
            log.say("otel: metrics to \(metricsExporter.configuration.endpoint)")
        }
        if let logs {
            log.say("otel: access log records to \(logs.exporter.configuration.endpoint)")
        }
        if let credentials = options.azureBlob?.tokens?.credentials {
            log.say("abs: sources authorized by \(credentials.summary)")
        }
        if let source = options.s3Credentials {
            log.say("s3: sources signed with \(source.summary)")
        }
        if let credentials = options.gcs?.tokens?.credentials {
            log.say("gs: sources authorized by \(credentials.summary)")
        }
        let publisher = cloudWatchPublisher(options, proxy: proxy, log: log)
        defer { publisher?.cancel() }
        onListening(server.port)
        await withCheckedContinuation { continuation in trigger.onFire { continuation.resume() } }
        log.say("stopping; finishing \(server.inFlightCount) request(s) in flight")
        let finished = await server.drain(timeout: .seconds(options.gracefulStopSeconds))
        server.stop()
        // The originals of the last renders, and their outputs' copies to a shared tier, are stored after their
        // responses: handed to the caches before the deferred closes.
        await proxy.flushCaches()
        if !finished {
            log.say(
                "requests still in flight after \(options.gracefulStopSeconds) s were answered 503", level: .warn)
        }
        // The spans of the last requests and the final counts, at most 5 s more (a collector may not answer).
        async let tracesSent = traces?.shutdown()
        async let metricsSent = metricsExporter?.shutdown()
        async let logsSent = logs?.exporter.shutdown()
        let (spansSent, countsSent, entriesSent) = await (tracesSent, metricsSent, logsSent)
        if spansSent == false || countsSent == false || entriesSent == false {
            console.printError("imago serve: otel: the collector did not take the last records within 5 s")
        }
        // The last lines, unless standard output's reader has stopped reading.
        if let lines, !lines.drain(within: .seconds(2)) {
            console.printError("imago serve: standard output was not read; the last access log lines were dropped")
        }
        return 0
    }

    /// The task that puts the gauges into CloudWatch every interval (`--cloudwatch-service-name`), with the
    /// default chain's credentials; `nil` without the option. A put that fails is told on standard error once,
    /// until one succeeds again; none holds up a request.
    static func cloudWatchPublisher(
        _ options: Options, proxy: ImageProxy, log: ServerLog
    ) -> Task<Void, Never>? {
        guard let (cloudWatch, interval, credentials) = options.cloudWatch else { return nil }
        guard let source = credentials else {
            log.say("cloudwatch: no AWS credentials found; no metrics are put", level: .warn)
            return nil
        }
        let provider = AWSCredentialProvider(source: source)
        let workers = options.workers
        return Task.detached {
            var failing = false
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(interval))
                guard !Task.isCancelled else { return }
                let rendering = proxy.rendersInProgress
                let data: [CloudWatchMetrics.Datum] = [
                    .init(name: "Workers", value: Double(workers), unit: .count),
                    .init(name: "RequestsInProgress", value: Double(proxy.metrics.inFlight), unit: .count),
                    .init(name: "ImagesInProgress", value: Double(rendering), unit: .count),
                    .init(
                        name: "WorkersUtilization", value: Double(rendering) * 100 / Double(max(1, workers)),
                        unit: .percent),
                ]
                do {
                    try await cloudWatch.put(data, credentials: try await provider.credentials())
                    failing = false
                } catch {
                    if !failing { log.say("cloudwatch: \(error)", level: .error) }
                    failing = true
                }
            }
        }
    }

    /// This executable, which the children of `imago serve` run (`svg-render`, `heif-decode`, `heic-encode`).
    static let ownExecutable = URL(fileURLWithPath: "/proc/self/exe")

    /// How `imago serve` draws SVG sources: in children (`imago svg-render`, this executable, which draws with an
    /// in-process ``SVGDecoder``), one killed when it has not answered within `timeout` (`--svg-timeout`, default
    /// 10 s), since librsvg cannot be interrupted and a small document's filters can take minutes (RELIABILITY.md
    /// §28). Up to one idle child a core is kept between drawings, each for 1,000 drawings, as for HEIF: a child
    /// started for every drawing cost more than most drawings (BENCHMARKS.md, "SVG children kept").
    static func svgDecoder(timeout: Duration) -> ChildProcessDecoder {
        ChildProcessDecoder(
            formats: [.svg], executable: ownExecutable, arguments: [CLI.svgRenderCommand], timeout: timeout,
            idleChildren: ProcessInfo.processInfo.activeProcessorCount, answersPerChild: 1_000)
    }

    /// How `imago serve` decodes HEIC and HEIF sources: in children (`imago heif-decode`, this executable), one
    /// killed when it has not answered within `timeout` (`--heif-timeout`, default 30 s), since Debian's libheif
    /// 1.15 keeps `assert`s that end the process on files it does not expect (RELIABILITY.md §46, §47). Up to one
    /// idle child a core is kept between decodes, each for 1,000 decodes; `--heif-in-process` decodes in the
    /// server.
    static func heifDecoder(timeout: Duration) -> ChildProcessDecoder {
        ChildProcessDecoder(
            formats: [.heic, .heif], executable: ownExecutable,
            arguments: [CLI.heifDecodeCommand], timeout: timeout,
            idleChildren: ProcessInfo.processInfo.activeProcessorCount, answersPerChild: 1_000)
    }

    /// How `imago serve` encodes HEIC outputs: in children (`imago heic-encode`, this executable, x265's `medium`
    /// preset as in-process), one killed when it has not answered within `timeout` (`--heif-timeout`), each ended
    /// after 1,000 encodes, since x265 3.5 leaks 1,168 bytes an encode (RELIABILITY.md §46, §47); one idle child a
    /// core kept between encodes. `--heif-in-process` encodes in the server.
    static func heicEncoder(timeout: Duration) -> ChildProcessEncoder {
        ChildProcessEncoder(
            format: .heic, settingsIdentifier: HEICEncoder().settingsIdentifier,
            executable: ownExecutable, arguments: [CLI.heicEncodeCommand], timeout: timeout,
            idleChildren: ProcessInfo.processInfo.activeProcessorCount, answersPerChild: 1_000)
    }

    /// Whether ``makeSourceLoader(_:)`` returns a loader that refuses private addresses after DNS and on
    /// redirects: it does (the libcurl loader's `.publicOnly` address policy, unless `--allow-private`).
    static let sourceLoaderRefusesPrivateAddresses = true

    /// The loader for source images: the one place the fetch policy is wired. Without `--allow-private` it is the
    /// libcurl loader with the ``AddressPolicy/publicOnly`` address policy, checked on the address actually
    /// connected to for every connection and redirect hop (DNS answers and redirects cannot reach a private
    /// host); `SourcePolicy` refuses literal private hosts before any load as well.
    static func makeSourceLoader(_ options: Options) -> any DataLoading {
        // The limits `--timeout`, `--max-bytes` and `--retries` describe (their defaults are the loader's) and
        // `--cacert`'s authorities; only the transfers at once are raised, to the proxy's default number of renders
        // and more.
        var configuration = options.network.curlConfiguration()
        configuration.loading.maximumConcurrentTransfers = 32
        configuration.maximumConnectionsPerHost = 32
        if let seconds = options.clientKeepAliveSeconds { configuration.idleConnectionLifetime = .seconds(seconds) }
        // A source is judged by its bytes, as imgproxy judges it: an image its origin labels `text/plain` (nginx's
        // `default_type` for an unknown extension) is rendered, and a page that is no image is a 415 once its bytes
        // (at most --max-bytes) are read, where the library's default refused such labels before the body.
        configuration.loading.contentTypeValidation = .any
        configuration.addressPolicy =
            options.sourcePolicy.allowsPrivateAddresses
            ? .any : AddressPolicy(mode: .publicOnly, allowedNetworks: options.sourcePolicy.allowedNetworks)
        if let s3 = options.s3, let provider = s3.credentials {
            configuration.awsSigning = [AWSSigning(provider: provider, region: s3.region, hosts: s3.signedHosts)]
            for (region, hosts) in s3.accessPointSigningHosts.sorted(by: { $0.key < $1.key }) {
                configuration.awsSigning.append(AWSSigning(provider: provider, region: region, hosts: hosts))
            }
        }
        if let signing = options.azureSigning { configuration.azureSigning = [signing] }
        return CurlDataLoader(configuration: configuration)
    }

    /// SIGINT through ``SignalInterrupts`` and SIGTERM through a signal source of its own, both firing `trigger`.
    private static func installSignals(_ trigger: InterruptTrigger) -> (Int, any DispatchSourceSignal) {
        let token = SignalInterrupts.install(trigger)
        signal(SIGTERM, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGTERM, queue: .global())
        source.setEventHandler { trigger.fire() }
        source.resume()
        return (token, source)
    }

    private static func removeSignals(_ tokens: (Int, any DispatchSourceSignal)) {
        tokens.1.cancel()
        signal(SIGTERM, SIG_DFL)
        SignalInterrupts.remove(tokens.0)
    }
}
