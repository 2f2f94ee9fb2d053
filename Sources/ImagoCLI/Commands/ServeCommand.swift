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
                    immediate: { proxy.immediateResponse(to: $0) }
                ) { await proxy.respond(to: $0) }
            } else {
                server = try MicroHTTPServer(
                    host: options.host, port: options.port, connectionLimit: options.connectionLimit,
                    connectionTimeout: options.connectionTimeout, reusesPort: options.reusesPort,
                    threads: options.threads, immediate: { proxy.immediateResponse(to: $0) }
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

    /// The region the environment names: `AWS_REGION`, else `AWS_DEFAULT_REGION`; `nil` when neither is set.
    static func awsRegion(environment: [String: String]) -> String? {
        environment.nonEmpty("AWS_REGION") ?? environment.nonEmpty("AWS_DEFAULT_REGION")
    }

    /// The endpoint of an AWS service the environment names: `variable` (`AWS_ENDPOINT_URL_SSM` …), else
    /// `AWS_ENDPOINT_URL`; `nil` when neither is set.
    ///
    /// - Throws: ``UsageError`` for one that is not an http or https URL.
    static func awsEndpoint(_ variable: String, environment: [String: String]) throws -> URL? {
        guard let text = environment.nonEmpty(variable) ?? environment.nonEmpty("AWS_ENDPOINT_URL") else { return nil }
        guard let url = URL(string: text), ["http", "https"].contains(url.scheme?.lowercased() ?? "") else {
            throw UsageError("\(variable) '\(text)' is not an http or https URL")
        }
        return url
    }

    /// The Google credentials a key option gives: the key's JSON itself (text starting with `{`), or a file's path.
    static func googleCredentials(key given: String) throws(GoogleServiceAccount.Error) -> GoogleCredentials {
        given.trimmingCharacters(in: .whitespacesAndNewlines).hasPrefix("{")
            ? try GoogleCredentials(json: Data(given.utf8))
            : try GoogleCredentials(contentsOf: URL(fileURLWithPath: given))
    }

    /// An access log level named by `text` for `option` (`warning` is `warn`).
    static func parseLevel(_ text: String, option: String) throws -> AccessLogRecord.Level {
        guard let level = AccessLogRecord.Level(rawValue: text == "warning" ? "warn" : text) else {
            throw UsageError("option '\(option)' expects debug, info, warn or error (got '\(text)')")
        }
        return level
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

    /// `--s3` and the options that need it: the sources, `nil` without `--s3`. The region defaults to the
    /// environment's `AWS_REGION` (or `AWS_DEFAULT_REGION`), else `us-east-1`.
    static func parseS3(_ args: ParsedArguments, environment: [String: String]) throws -> S3Sources? {
        guard args.has("--s3") else {
            try args.refuse(
                [
                    "--s3-region", "--s3-endpoint", "--s3-virtual-hosted", "--s3-assume-role",
                    "--s3-assume-role-external-id", "--s3-access-point",
                ],
                without: "--s3")
            return nil
        }
        var sources = S3Sources(
            region: args.value("--s3-region") ?? awsRegion(environment: environment) ?? "us-east-1")
        guard !sources.region.isEmpty,
            sources.region.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") })
        else { throw UsageError("option '--s3-region' expects a region name such as eu-west-1") }
        if let text = args.value("--s3-endpoint") {
            guard let endpoint = S3Sources.endpoint(parsing: text) else {
                throw UsageError("option '--s3-endpoint' expects an http or https URL such as http://minio:9000")
            }
            sources.endpoint = endpoint
        } else if args.has("--s3-virtual-hosted") {
            throw UsageError("option '--s3-virtual-hosted' needs --s3-endpoint (AWS's endpoint picks its own style)")
        }
        sources.usesPathStyle = !args.has("--s3-virtual-hosted")
        for pair in args.values["--s3-access-point"] ?? [] {
            guard sources.endpoint == nil else {
                throw UsageError("option '--s3-access-point' is for AWS's own endpoints, not --s3-endpoint")
            }
            let parts = pair.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2, !parts[0].isEmpty, let point = S3AccessPoint(arn: parts[1]) else {
                throw UsageError(
                    "option '--s3-access-point' expects BUCKET=arn:aws:s3:REGION:ACCOUNT:accesspoint/NAME (got '\(pair)'; Multi-Region access points are not supported)"
                )
            }
            sources.accessPoints[parts[0]] = point
        }
        return sources
    }

    /// `--gcs` and the options that need it: the sources (`nil` without `--gcs`), with tokens from the credentials
    /// in `--gcs-key` (their JSON, or a file's path), else from those Google's Application Default Credentials
    /// find (``GoogleCredentials/applicationDefault(environment:productNameFile:)``: the file
    /// `GOOGLE_APPLICATION_CREDENTIALS` names, gcloud's file, the metadata server), else none (public objects).
    static func parseGCS(_ args: ParsedArguments, environment: [String: String]) throws -> GoogleCloudStorageSources? {
        guard args.has("--gcs") else {
            try args.refuse(["--gcs-key", "--gcs-endpoint"], without: "--gcs")
            return nil
        }
        var sources = GoogleCloudStorageSources()
        if let text = args.value("--gcs-endpoint") {
            guard let endpoint = GoogleCloudStorageSources.endpoint(parsing: text) else {
                throw UsageError("option '--gcs-endpoint' expects an http or https URL such as http://127.0.0.1:4443")
            }
            sources.endpoint = endpoint
        }
        let credentials: GoogleCredentials?
        do {
            if let given = args.value("--gcs-key"), !given.isEmpty {
                credentials = try googleCredentials(key: given)
            } else {
                credentials = try GoogleCredentials.applicationDefault(environment: environment)
            }
        } catch {
            let option = args.value("--gcs-key") != nil ? "--gcs-key" : "Application Default Credentials"
            throw UsageError("\(option): \(error)")
        }
        sources.tokens = credentials.map { GoogleAccessTokens(credentials: $0) }
        return sources
    }

    /// `--swift` and the options that need it: the sources (`nil` without `--swift`), signing in with the
    /// `--swift-…` credentials.
    static func parseSwift(_ args: ParsedArguments) throws -> OpenStackSwiftSources? {
        let options = [
            "--swift-auth-url", "--swift-username", "--swift-api-key", "--swift-domain", "--swift-tenant",
            "--swift-auth-version",
        ]
        guard args.has("--swift") else {
            try args.refuse(options, without: "--swift")
            return nil
        }
        for option in options.prefix(3) where (args.value(option) ?? "").isEmpty {
            throw UsageError("option '--swift' needs \(option)")
        }
        guard let text = args.value("--swift-auth-url"), let url = OpenStackSwiftSources.endpoint(parsing: text) else {
            throw UsageError(
                "option '--swift-auth-url' expects an http or https URL such as https://keystone.example/v3")
        }
        let version = try parseInteger(
            args.value("--swift-auth-version") ?? "0", option: "--swift-auth-version", range: 0...3)
        let credentials = OpenStackCredentials(
            authURL: url, username: args.value("--swift-username") ?? "", apiKey: args.value("--swift-api-key") ?? "",
            domain: args.value("--swift-domain") ?? "", tenant: args.value("--swift-tenant") ?? "",
            authVersion: version)
        guard credentials.resolvedVersion != nil else {
            throw UsageError(
                "option '--swift-auth-url' names no auth version (v1, v2 or v3): give --swift-auth-version")
        }
        return OpenStackSwiftSources(tokens: OpenStackTokens(credentials: credentials))
    }

    /// `--abs` and the options that need it: the sources (`nil` without `--abs`) and, with `--abs-key`, the
    /// signing of their requests; without it, the sources carry Entra ID tokens from the credentials
    /// ``AzureCredentials/default(environment:assetTagFile:)`` finds, if any.
    static func parseAzureBlob(
        _ args: ParsedArguments, environment: [String: String]
    ) throws -> (AzureBlobSources?, AzureSharedKeySigning?) {
        guard args.has("--abs") else {
            try args.refuse(["--abs-name", "--abs-key", "--abs-endpoint"], without: "--abs")
            return (nil, nil)
        }
        guard let name = args.value("--abs-name"), !name.isEmpty,
            name.allSatisfy({ $0.isASCII && ($0.isLowercase || $0.isNumber) })
        else { throw UsageError("option '--abs' needs --abs-name ACCOUNT (lowercase letters and digits)") }
        var sources = AzureBlobSources(accountName: name)
        if let text = args.value("--abs-endpoint") {
            guard let endpoint = AzureBlobSources.endpoint(parsing: text) else {
                throw UsageError("option '--abs-endpoint' expects an http or https URL")
            }
            sources.endpoint = endpoint
        }
        guard let key = args.value("--abs-key") else {
            do {
                sources.tokens = try AzureCredentials.default(environment: environment).map {
                    AzureAccessTokens(credentials: $0)
                }
            } catch {
                throw UsageError("--abs: \(error)")
            }
            return (sources, nil)
        }
        do {
            return (sources, try AzureSharedKeySigning(accountName: name, accountKey: key, hosts: sources.signedHosts))
        } catch {
            throw UsageError("option '--abs-key' expects the account key in base64, as the Azure portal shows it")
        }
    }

    /// `environment` with the settings kept in AWS over it, as imgproxy reads them at start: the `.env` text of the
    /// Secrets Manager secret `--env-aws-secret-id` (`IMGPROXY_ENV_AWS_SECRET_ID`; its version, stage and region
    /// options), then the parameters under `--env-aws-ssm-parameters-path` (`IMGPROXY_ENV_AWS_SSM_PARAMETERS_PATH`),
    /// each signed with the credentials of the AWS SDKs' default chain. The region is the option's, else
    /// `AWS_REGION`, else `us-west-1` (imgproxy's); `AWS_ENDPOINT_URL_SECRETS_MANAGER` and `AWS_ENDPOINT_URL_SSM`
    /// (else `AWS_ENDPOINT_URL`) name other endpoints. Then the `.env` text of the Google Cloud Secret Manager
    /// secret `--env-gcp-secret-id` (`IMGPROXY_ENV_GCP_SECRET_ID`; its project, version, key and endpoint
    /// options), read with `--env-gcp-key` or Application Default Credentials. `environment` itself without any.
    ///
    /// - Throws: ``UsageError`` for bad options; an error naming the service when it cannot be read.
    static func cloudEnvironment(
        _ given: ParsedArguments, over environment: [String: String]
    ) async throws -> [String: String] {
        let args = try given.fillingIn(from: environment, prefix: "IMAGO_", options: command.options)
        let secretID = args.value("--env-aws-secret-id")
        let parameterPath = args.value("--env-aws-ssm-parameters-path")
        if secretID == nil {
            try args.refuse(
                ["--env-aws-secret-version-id", "--env-aws-secret-version-stage", "--env-aws-secret-region"],
                without: "--env-aws-secret-id")
        }
        if parameterPath == nil {
            try args.refuse(["--env-aws-ssm-parameters-region"], without: "--env-aws-ssm-parameters-path")
        }
        if args.value("--env-gcp-secret-id") == nil {
            try args.refuse(
                [
                    "--env-gcp-secret-project-id", "--env-gcp-secret-version-id", "--env-gcp-key",
                    "--env-gcp-secret-endpoint",
                ],
                without: "--env-gcp-secret-id")
        }
        var result = environment
        if secretID != nil || parameterPath != nil {
            result = try await awsEnvironment(args, secretID: secretID, parameterPath: parameterPath, over: result)
        }
        if let secret = args.value("--env-gcp-secret-id") {
            result = try await googleEnvironment(args, secret: secret, over: result)
        }
        return result
    }

    /// `environment` with the settings of AWS Secrets Manager's `secretID` and Parameter Store's `parameterPath`
    /// over it (``cloudEnvironment(_:over:)``).
    private static func awsEnvironment(
        _ args: ParsedArguments, secretID: String?, parameterPath: String?, over environment: [String: String]
    ) async throws -> [String: String] {
        func endpoint(_ variable: String) throws -> URL? { try awsEndpoint(variable, environment: environment) }
        let defaultRegion = awsRegion(environment: environment) ?? "us-west-1"
        guard let source = try AWSCredentialSource.default(environment: environment) else {
            throw UsageError("no AWS credentials found to read the settings kept in AWS with")
        }
        let credentials = try await AWSCredentialProvider(source: source).credentials()
        var result = environment
        if let secretID {
            let secret = AWSConfigurationSecrets.Secret(
                id: secretID, versionID: args.value("--env-aws-secret-version-id"),
                versionStage: args.value("--env-aws-secret-version-stage"),
                region: args.value("--env-aws-secret-region") ?? defaultRegion,
                endpoint: try endpoint("AWS_ENDPOINT_URL_SECRETS_MANAGER"))
            if let text = try await AWSConfigurationSecrets.text(of: secret, credentials: credentials) {
                do {
                    result.merge(try EnvironmentFile(parsing: text, environment: result).values) { $1 }
                } catch let error as EnvironmentFile.Error {
                    throw UsageError("the secret '\(secretID)' is not .env text: \(error)")
                }
            }
        }
        if let parameterPath {
            let parameters = AWSConfigurationSecrets.ParameterPath(
                path: parameterPath, region: args.value("--env-aws-ssm-parameters-region") ?? defaultRegion,
                endpoint: try endpoint("AWS_ENDPOINT_URL_SSM"))
            result.merge(try await AWSConfigurationSecrets.variables(under: parameters, credentials: credentials)) {
                $1
            }
        }
        return result
    }

    /// `environment` with the `.env` text of Secret Manager's `secret` over it (``cloudEnvironment(_:over:)``),
    /// read with the credentials of `--env-gcp-key` (its JSON, or a file's path) or Application Default
    /// Credentials.
    private static func googleEnvironment(
        _ args: ParsedArguments, secret: String, over environment: [String: String]
    ) async throws -> [String: String] {
        guard
            let project = args.value("--env-gcp-secret-project-id")
                ?? environment.nonEmpty("GOOGLE_CLOUD_PROJECT")
        else {
            throw UsageError("option '--env-gcp-secret-id' needs --env-gcp-secret-project-id (or GOOGLE_CLOUD_PROJECT)")
        }
        var endpoint: URL?
        if let text = args.value("--env-gcp-secret-endpoint") {
            guard let url = URL(string: text), ["http", "https"].contains(url.scheme?.lowercased() ?? "") else {
                throw UsageError("option '--env-gcp-secret-endpoint' expects an http or https URL (got '\(text)')")
            }
            endpoint = url
        }
        let credentials: GoogleCredentials
        do {
            if let given = args.value("--env-gcp-key"), !given.isEmpty {
                credentials = try googleCredentials(key: given)
            } else if let found = try GoogleCredentials.applicationDefault(environment: environment) {
                credentials = found
            } else {
                throw UsageError("no Google credentials found to read the secret '\(secret)' with (--env-gcp-key)")
            }
        } catch let error as GoogleServiceAccount.Error {
            throw UsageError("option '--env-gcp-key': \(error)")
        }
        let location = GoogleConfigurationSecret(
            project: project, secret: secret, version: args.value("--env-gcp-secret-version-id") ?? "latest",
            endpoint: endpoint)
        let tokens = GoogleAccessTokens(credentials: credentials, scope: GoogleConfigurationSecret.scope)
        guard let text = try await location.text(tokens: tokens) else { return environment }
        do {
            return environment.merging(try EnvironmentFile(parsing: text, environment: environment).values) { $1 }
        } catch let error as EnvironmentFile.Error {
            throw UsageError("the secret '\(secret)' is not .env text: \(error)")
        }
    }

    /// `environment` with the variables of `--env-file` (or `IMAGO_ENV_FILE`) over it, as imgproxy's
    /// `IMGPROXY_ENV_LOCAL_FILE_PATH` sets them over the process's; `environment` itself without one.
    static func environment(_ args: ParsedArguments, over environment: [String: String]) throws -> [String: String] {
        guard let path = args.value("--env-file") ?? environment.nonEmpty("IMAGO_ENV_FILE")
        else { return environment }
        let file: EnvironmentFile
        do {
            file = try EnvironmentFile(contentsOf: URL(fileURLWithPath: path), environment: environment)
        } catch let error as EnvironmentFile.Error {
            throw UsageError("option '--env-file': \(path), \(error)")
        } catch {
            throw UsageError("option '--env-file': cannot read \(path) (\(SystemReason.of(error)))")
        }
        return environment.merging(file.values) { $1 }
    }

    /// Checks the arguments.
    static func parse(_ given: ParsedArguments, environment processEnvironment: [String: String]) throws -> Options {
        let environment = try environment(given, over: processEnvironment)
        let args = try given.fillingIn(from: environment, prefix: "IMAGO_", options: command.options)
        var options = Options(
            cacheDirectory: args.value("--cache-dir").map { URL(fileURLWithPath: $0) }
                ?? ImagePipeline.Configuration.defaultCacheDirectory(environment: environment)
                .appendingPathComponent("serve"))
        guard args.positionals.isEmpty else {
            throw UsageError("unexpected argument '\(args.positionals[0])' (serve takes options only)")
        }
        if let listen = args.value("--listen") {
            if listen.hasPrefix("unix:") {
                let path = String(listen.dropFirst(5))
                guard !path.isEmpty else {
                    throw UsageError("option '--listen' expects unix:PATH, e.g. unix:/run/imago.sock")
                }
                options.socketPath = path
            } else {
                (options.host, options.port) = try parseListen(listen)
            }
        }
        let key = args.value("--key")
        let salt = args.value("--salt") ?? ""
        if let key {
            do {
                // Comma-separated lists: key rotation, pairs taken in order (imgproxy's IMGPROXY_KEY/IMGPROXY_SALT).
                let keys = key.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
                let salts = salt.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
                options.signer =
                    keys.count == 1
                    ? try URLSigner(keyHex: key, saltHex: salt) : try URLSigner(keysHex: keys, saltsHex: salts)
            } catch {
                throw UsageError("option '--key'/'--salt': \(error)")
            }
            if let value = try args.integer("--signature-size", in: 1...32) { options.signer?.signatureSize = value }
        } else {
            try args.refuse(["--signature-size"], without: "--key")
        }
        options.allowsUnsigned = args.has("--unsigned")
        if let text = args.value("--trusted-signatures") {
            options.trustedSignatures = Set(
                text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
            guard !options.trustedSignatures.isEmpty else {
                throw UsageError("option '--trusted-signatures' expects comma-separated signatures")
            }
        }
        guard options.signer != nil || options.allowsUnsigned || !options.trustedSignatures.isEmpty else {
            throw UsageError("give a signing key (--key and --salt, or IMAGO_KEY and IMAGO_SALT) or --unsigned")
        }
        let sources = args.values["--allow-source"] ?? []
        let denied = args.values["--deny-source"] ?? []
        for (option, prefix) in sources.map({ ("--allow-source", $0) }) + denied.map({ ("--deny-source", $0) }) {
            guard let url = URL(string: prefix.replacingOccurrences(of: "*", with: "0")),
                let scheme = url.scheme?.lowercased(),
                ["http", "https", "local"].contains(scheme) || ProxyPath.objectStoreFlags[scheme] != nil,
                scheme == "local" ? prefix.hasPrefix("local:///") : !(url.host() ?? "").isEmpty
            else {
                throw UsageError(
                    "option '\(option)' expects a URL prefix such as https://cdn.example.com/images/ or "
                        + "s3://bucket/ (got '\(prefix)')"
                )
            }
        }
        options.sourcePolicy = SourcePolicy(
            allowedHosts: args.values["--allow-host"] ?? [], allowsPrivateAddresses: args.has("--allow-private"),
            allowedSources: sources)
        options.sourcePolicy.deniedSources = denied
        for text in args.values["--allow-network"] ?? [] {
            guard let network = IPNetwork(text) else {
                throw UsageError("option '--allow-network' expects an address range such as 10.0.0.0/8 (got '\(text)')")
            }
            options.sourcePolicy.allowedNetworks.append(network)
        }
        if let value = try args.integer("--max-age", in: 0...315_360_000) { options.maxAge = value }
        if let value = try args.integer("--workers", in: 1...256) { options.workers = value }
        if let value = try args.integer("--threads", in: 1...256) { options.threads = value }
        options.reusesPort = args.has("--reuse-port")
        if options.reusesPort, options.socketPath != nil {
            throw UsageError("option '--reuse-port' needs a TCP address: a Unix socket has one listener")
        }
        if let text = args.value("--metrics-listen") {
            let (host, port) = try parseListen(text, option: "--metrics-listen")
            guard options.socketPath != nil || host != options.host || port != options.port || port == 0 else {
                throw UsageError("option '--metrics-listen' must differ from --listen")
            }
            options.metricsAddress = (host, port)
        }
        if let value = try args.integer("--client-keep-alive-timeout", in: 0...3600) {
            options.clientKeepAliveSeconds = value
        }
        if let namespace = args.value("--metrics-namespace") {
            guard ServerMetrics.isValidNamespace(namespace) else {
                throw UsageError(
                    "option '--metrics-namespace' takes a letter, _ or : followed by letters, digits, _ and : (got '\(namespace)')"
                )
            }
            options.metricsNamespace = namespace
        }
        if let path = args.value("--health-check-path") {
            guard path.hasPrefix("/"), path.count > 1,
                !path.contains(where: { $0 == "?" || $0 == "#" || $0.isWhitespace })
            else { throw UsageError("option '--health-check-path' expects a path such as /ping (got '\(path)')") }
            options.healthCheckPath = path
        }
        if let value = try args.integer("--max-clients", in: 1...65_536) { options.connectionLimit = value }
        if let value = try args.integer("--connection-timeout", in: 1...3_600) { options.connectionTimeout = value }
        if let value = try args.integer("--graceful-stop-timeout", in: 0...3_600) {
            options.gracefulStopSeconds = value
        }
        if let value = try args.integer("--request-timeout", in: 1...3_600) { options.requestTimeout = value }
        if let value = try args.integer("--svg-timeout", in: 1...600) { options.svgTimeout = value }
        if let value = try args.integer("--heif-timeout", in: 1...600) { options.heifTimeout = value }
        options.decodesHEIFInProcess = args.has("--heif-in-process")
        if let value = try args.integer("--queue", in: 0...100_000) { options.queueLimit = value }
        if let value = try args.integer("--max-animation-frames", in: 1...10_000) { options.maxAnimationFrames = value }
        if let value = try args.integer("--max-animation-frame-pixels", in: 0...1_000_000_000) {
            options.maxAnimationFramePixels = value
        }
        if let value = try args.integer("--max-result-dimension", in: 0...8192) { options.maxResultDimension = value }
        options.usesLinearColorspace = args.has("--use-linear-colorspace")
        options.disablesShrinkOnLoad = args.has("--disable-shrink-on-load")
        if let value = try args.integer("--max-pixels", in: 1...1_000_000_000) { options.pixelLimit = value }
        var definitions = args.values["--preset"] ?? []
        if let path = args.value("--presets-path") {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw UsageError("option '--presets-path': cannot read '\(path)' as UTF-8 text")
            }
            definitions += PresetTable.definitions(inFile: text)
        }
        if args.value("--cookie-base-url") != nil,
            !args.has("--cookie-passthrough") || args.has("--cookie-passthrough-all")
        {
            throw UsageError("option '--cookie-base-url' needs --cookie-passthrough (every source gets them with -all)")
        }
        if args.has("--cookie-passthrough-all") {
            options.cookiePassthrough = .all
        } else if args.has("--cookie-passthrough") {
            var base: URL?
            if let text = args.value("--cookie-base-url") {
                guard let url = FetchRun.parseHTTPURL(text) else {
                    throw UsageError("option '--cookie-base-url' expects an http or https URL (got '\(text)')")
                }
                base = url
            }
            options.cookiePassthrough = .sameHost(baseURL: base)
        }
        if let text = args.value("--arguments-separator") {
            guard text.count == 1, let separator = text.first, ProxyPath.isArgumentsSeparator(separator) else {
                throw UsageError(
                    "option '--arguments-separator': expected one punctuation character other than / ? # % @ . - _ =, got '\(text)'"
                )
            }
            options.argumentsSeparator = separator
        }
        if let text = args.value("--source-url-query-separator") {
            guard text.count <= 8, !text.contains("/"), !text.contains("%"),
                text.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && $0.value < 0x7F })
            else {
                throw UsageError(
                    "option '--source-url-query-separator': expected up to 8 printable ASCII characters other than / and %, or nothing, got '\(text)'"
                )
            }
            options.sourceQuerySeparator = text
        }
        if !definitions.isEmpty {
            do {
                options.presets = try PresetTable(
                    definitions: definitions, argumentsSeparator: options.argumentsSeparator)
            } catch {
                throw UsageError("option '--preset': \(error.description)")
            }
        }
        options.base64URLIncludesFilename = args.has("--base64-url-includes-filename")
        if let text = args.value("--url-replacements") {
            do {
                options.urlReplacements = try URLReplacement.list(parsing: text)
            } catch {
                throw UsageError("option '--url-replacements': \(error.description)")
            }
        }
        if let base = args.value("--base-url") {
            guard FetchRun.parseHTTPURL(base) != nil else {
                throw UsageError("option '--base-url' expects an http or https URL (got '\(base)')")
            }
            options.baseURL = base
        }
        if let text = args.value("--watermark-opacity") {
            guard let value = Double(text), value.isFinite, (0...1).contains(value) else {
                throw UsageError("option '--watermark-opacity' expects a number from 0 to 1 (got '\(text)')")
            }
            options.watermarkOpacity = value
        }
        switch try StartupImage.parse(args, option: "--watermark") {
        case .bytes(let data):
            let opacity = options.watermarkOpacity
            options.watermark = try Options.made("--watermark") { try WatermarkImage(data: data, opacity: opacity) }
        case .url(let url): options.watermarkURL = url
        case nil:
            if args.value("--watermark-opacity") != nil {
                throw UsageError("option '--watermark-opacity' needs --watermark, --watermark-data or --watermark-url")
            }
        }
        if let secret = args.value("--secret") {
            guard secret.allSatisfy({ $0.isASCII && !$0.isWhitespace && !$0.isNewline }) else {
                throw UsageError("option '--secret' expects a token of visible ASCII characters")
            }
            options.secret = secret
        }
        if let root = args.value("--local-root") {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: root, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw UsageError("option '--local-root' expects a directory (got '\(root)')")
            }
            options.localRoot = URL(fileURLWithPath: root, isDirectory: true)
        }
        options.s3 = try parseS3(args, environment: environment)
        if let s3 = options.s3 {
            if args.value("--s3-assume-role") == nil {
                try args.refuse(["--s3-assume-role-external-id"], without: "--s3-assume-role")
            }
            do {
                options.s3Credentials = try AWSCredentialSource.default(environment: environment)
                if let role = args.value("--s3-assume-role") {
                    guard let base = options.s3Credentials else {
                        throw UsageError(
                            "option '--s3-assume-role' needs credentials to assume the role with; the AWS default "
                                + "chain found none")
                    }
                    options.s3Credentials = .assumedRole(
                        roleARN: role, externalID: args.value("--s3-assume-role-external-id"),
                        sessionName: AWSCredentialSource.sessionName(environment: environment),
                        stsEndpoint: try AWSCredentialSource.stsEndpoint(environment: environment, region: s3.region),
                        region: s3.region, base: base)
                }
            } catch let error as UsageError {
                throw error
            } catch {
                throw UsageError("--s3: \(error)")
            }
            options.s3?.credentials = options.s3Credentials.map { AWSCredentialProvider(source: $0) }
        }
        (options.azureBlob, options.azureSigning) = try parseAzureBlob(args, environment: environment)
        options.gcs = try parseGCS(args, environment: environment)
        options.swift = try parseSwift(args)
        if let value = try args.integer("--quality", in: 1...100) { options.defaultQuality = value }
        do {
            if let text = args.value("--format-quality") {
                // Settings replace imgproxy's default avif=65 only for the formats they name, as imgproxy's do.
                options.formatQuality.merge(
                    try ImageProxy.Configuration.formatQualities(parsing: text, option: "--format-quality")
                ) { $1 }
            }
            if let text = args.value("--detect-formats") {
                if text == "none" {
                    options.detectedFormats = []
                } else {
                    let formats = try ImageProxy.Configuration.formats(parsing: text, option: "--detect-formats")
                    let negotiable = ImageProxy.Configuration.negotiableFormats
                    guard formats.allSatisfy(negotiable.contains) else {
                        let names = negotiable.map(\.rawValue).joined(separator: ", ")
                        throw UsageError("option '--detect-formats' takes \(names) or none (got '\(text)')")
                    }
                    options.detectedFormats = Set(formats)
                }
            }
            if let text = args.value("--skip-processing-formats") {
                options.skippedFormats = try ImageProxy.Configuration.sourceFormats(
                    parsing: text, option: "--skip-processing-formats")
            }
            if let text = args.value("--preferred-formats") {
                options.preferredFormats = try ImageProxy.Configuration.formats(
                    parsing: text, option: "--preferred-formats")
            }
        } catch let error as ProxyError {
            throw UsageError(error.description)
        }
        if let value = try args.integer("--avif-speed", in: 0...10) { options.avifSpeed = value }
        if let value = try args.integer("--webp-effort", in: 0...6) { options.webpEffort = value }
        if let text = args.value("--webp-preset") {
            guard let preset = WebPEncoder.Preset(rawValue: text) else {
                let names = WebPEncoder.Preset.allCases.map(\.rawValue).joined(separator: ", ")
                throw UsageError("option '--webp-preset' takes \(names) (got '\(text)')")
            }
            options.webpPreset = preset
        }
        if let value = try args.integer("--jxl-effort", in: 1...9) { options.jxlEffort = value }
        options.usesClientHints = args.has("--enable-client-hints")
        options.jpegProgressive = args.has("--jpeg-progressive")
        options.pngInterlaced = args.has("--png-interlaced")
        if let text = args.value("--png-quantization-colors") {
            guard args.has("--png-quantize") else {
                throw UsageError("option '--png-quantization-colors' needs --png-quantize")
            }
            options.pngPaletteColors = try parseInteger(text, option: "--png-quantization-colors", range: 2...256)
        } else if args.has("--png-quantize") {
            options.pngPaletteColors = 256
        }
        if args.has("--enforce-jxl") { options.enforcedFormats.insert(.jpegXL) }
        if args.has("--enforce-avif") { options.enforcedFormats.insert(.avif) }
        if args.has("--enforce-webp") { options.enforcedFormats.insert(.webp) }
        options.usesLastModified = args.has("--use-last-modified")
        options.enforcesThumbnail = args.has("--enforce-thumbnail")
        options.keepsColorProfile = args.has("--keep-color-profile")
        options.keepsMetadata = args.has("--keep-metadata")
        options.stripsCopyright = args.has("--strip-copyright")
        options.rasterizesSVG = args.has("--always-rasterize-svg")
        options.allowsSecurityOptions = args.has("--allow-security-options")
        options.sendsDebugHeaders = args.has("--enable-debug-headers")
        options.sendsDetailedErrors = args.has("--development-errors")
        options.setsCanonicalHeader = args.has("--set-canonical-header")
        options.returnsAttachment = args.has("--return-attachment")
        options.etagBuster = args.value("--etag-buster") ?? ""
        if let text = args.value("--last-modified-buster") {
            guard args.has("--use-last-modified") else {
                throw UsageError("option '--last-modified-buster' needs --use-last-modified")
            }
            guard let date = try? Date(text, strategy: .iso8601) else {
                throw UsageError(
                    "option '--last-modified-buster': expected an RFC 3339 date-time such as 2026-12-01T00:00:00Z, got '\(text)'"
                )
            }
            options.lastModifiedBuster = date
        }
        if let value = try args.integer("--stale-retry", in: 1...86_400) { options.staleRetrySeconds = value }
        options.passesSourceCacheControl = args.has("--cache-control-passthrough")
        if args.has("--only-presets") {
            guard !options.presets.names.isEmpty else { throw UsageError("option '--only-presets' needs --preset") }
            options.onlyPresets = true
        }
        if let list = args.value("--allowed-processing-options") {
            let names = list.split(separator: ",", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard !names.isEmpty, names.allSatisfy({ !$0.isEmpty }) else {
                throw UsageError("option '--allowed-processing-options' expects NAME,NAME…, e.g. w,h,pr")
            }
            if let unknown = names.first(where: { !ProxyPath.isOptionName($0) }) {
                throw UsageError("option '--allowed-processing-options': '\(unknown)' is not an option name")
            }
            options.allowedProcessingOptions = Set(names)
        }
        if let prefix = args.value("--path-prefix") {
            var trimmed = Substring(prefix)
            while trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
            guard trimmed.hasPrefix("/"), !trimmed.contains("//"), !trimmed.contains("?"), !trimmed.contains("%"),
                !trimmed.contains(where: \.isWhitespace)
            else {
                throw UsageError("option '--path-prefix' expects a path such as /images (got '\(prefix)')")
            }
            options.pathPrefix = String(trimmed)
        }
        if let origin = args.value("--allow-origin") {
            guard !origin.isEmpty, origin.allSatisfy({ $0.isASCII && !$0.isWhitespace && $0 != "," }) else {
                throw UsageError("option '--allow-origin' expects one origin or * (got '\(origin)')")
            }
            options.allowedOrigin = origin
        }
        if let text = args.value("--fallback-status") {
            let code = try parseInteger(text, option: "--fallback-status", range: 0...599)
            guard code == 0 || code >= 200 else {
                throw UsageError("option '--fallback-status' expects 0 or a status from 200 to 599 (got '\(text)')")
            }
            options.fallbackStatus = code == 0 ? nil : code
        }
        if let seconds = try args.integer("--fallback-max-age", in: 0...315_360_000) {
            options.fallbackMaxAge = .seconds(seconds)
        }
        switch try StartupImage.parse(args, option: "--fallback-image") {
        case .bytes(let data):
            let made = options
            options.fallbackImage = try Options.made("--fallback-image") { try made.makeFallback(data) }
        case .url(let url): options.fallbackImageURL = url
        case nil:
            if let orphan = ["--fallback-status", "--fallback-max-age"].first(where: { args.value($0) != nil }) {
                throw UsageError(
                    "option '\(orphan)' needs --fallback-image, --fallback-image-data or --fallback-image-url")
            }
        }
        if let value = try args.integer("--malloc-trim", in: 1...86_400) { options.mallocTrimInterval = value }
        let format = args.value("--log-format") ?? "json"
        guard let logFormat = LogFormat(rawValue: format) else {
            throw UsageError("option '--log-format' expects json, text or off (got '\(format)')")
        }
        options.logFormat = logFormat
        if let text = args.value("--log-buffer") {
            options.logBuffer = try parseByteCount(text, option: "--log-buffer")
        }
        if args.has("--syslog") {
            let network = args.value("--syslog-network") ?? ""
            let address = args.value("--syslog-address") ?? ""
            guard !(["udp", "tcp"].contains(network) && address.isEmpty),
                let destination = SyslogWriter.Destination(network: network, address: address)
            else {
                throw UsageError(
                    "options '--syslog-network' and '--syslog-address' expect unix with a socket path, or udp or tcp with HOST:PORT (got '\(network)' '\(address)')"
                )
            }
            let level = try args.value("--syslog-level").map { try parseLevel($0, option: "--syslog-level") } ?? .info
            let tag = args.value("--syslog-tag") ?? "imago"
            guard !tag.isEmpty, tag.count <= 48,
                tag.allSatisfy({ $0.isASCII && !$0.isWhitespace && $0 != ":" && $0 != "[" })
            else { throw UsageError("option '--syslog-tag' expects up to 48 ASCII characters without spaces or ':'") }
            options.syslog = (destination, level, tag)
        } else {
            try args.refuse(
                ["--syslog-network", "--syslog-address", "--syslog-level", "--syslog-tag"], without: "--syslog")
        }
        if let service = args.value("--cloudwatch-service-name") {
            guard !service.isEmpty, service.count <= 255 else {
                throw UsageError("option '--cloudwatch-service-name' expects 1 to 255 characters")
            }
            let region = args.value("--cloudwatch-region") ?? awsRegion(environment: environment) ?? "us-west-1"
            let endpoint = try awsEndpoint("AWS_ENDPOINT_URL_CLOUDWATCH", environment: environment)
            let interval = try args.integer("--cloudwatch-interval", in: 1...3600)
            options.cloudWatch = (
                CloudWatchMetrics(
                    namespace: args.value("--cloudwatch-namespace") ?? "imago", serviceName: service, region: region,
                    endpoint: endpoint),
                interval ?? 10, try AWSCredentialSource.default(environment: environment)
            )
        } else {
            try args.refuse(
                ["--cloudwatch-namespace", "--cloudwatch-region", "--cloudwatch-interval"],
                without: "--cloudwatch-service-name")
        }
        if let text = args.value("--sentry-dsn") {
            guard let dsn = SentryClient.DSN(text) else {
                throw UsageError("option '--sentry-dsn' expects a DSN such as https://KEY@o1.ingest.sentry.io/42")
            }
            options.sentry = (
                dsn, args.value("--sentry-environment") ?? "production",
                args.value("--sentry-release") ?? "imago@" + ImagoVersion.current
            )
        } else {
            try args.refuse(["--sentry-environment", "--sentry-release"], without: "--sentry-dsn")
        }
        if let text = args.value("--log-level") { options.logLevel = try parseLevel(text, option: "--log-level") }
        options.network = try NetworkOptions(parsing: args)
        options.redis = try RedisOptions(parsing: args)
        options.openTelemetry = try OpenTelemetryOptions(parsing: args, environment: environment)
        return options
    }

    /// `HOST:PORT`, `[IPv6]:PORT` or `:PORT`: every interface, IPv4 and IPv6, as imgproxy's `IMGPROXY_BIND`
    /// (returned as `::`, which ``MicroHTTPServer`` listens on with one dual-stack socket).
    static func parseListen(_ text: String, option: String = "--listen") throws -> (String, UInt16) {
        guard let colon = text.lastIndex(of: ":") else {
            throw UsageError("option '\(option)' expects HOST:PORT, e.g. 127.0.0.1:8080 (got '\(text)')")
        }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.isEmpty { host = "::" }
        if host == "localhost" { host = "127.0.0.1" }
        let port = try parseInteger(String(text[text.index(after: colon)...]), option: option, range: 0...65535)
        return (host, UInt16(port))
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
