import Foundation
import Imago
import ImagoServer

extension ServeCommand {
    /// An access log level named by `text` for `option` (`warning` is `warn`).
    static func parseLevel(_ text: String, option: String) throws -> AccessLogRecord.Level {
        guard let level = AccessLogRecord.Level(rawValue: text == "warning" ? "warn" : text) else {
            throw UsageError("option '\(option)' expects debug, info, warn or error (got '\(text)')")
        }
        return level
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
}
