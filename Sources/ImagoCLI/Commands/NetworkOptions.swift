import Foundation
import Imago

/// The network settings `fetch`, `show` and `serve` share: `--timeout`, `--max-bytes`, `--retries`,
/// `--max-redirects` and `--user-agent` (each `nil` when not given, which keeps ``HTTPDataLoader/Configuration``'s
/// default: 15 s idle / 60 s total, 64 MiB, 2 retries, 10 redirects, `Imago/VERSION`), and for the libcurl loader
/// `--public-only` (the SSRF guard) and `--cacert FILE`.
struct NetworkOptions: Sendable, Equatable {
    /// `--timeout`: the idle and total limit of one attempt.
    var timeout: Duration?
    /// `--max-bytes`: the largest body accepted (after content decoding).
    var maximumBodySize: Int?
    /// `--retries`: retries of a transient failure (timeout, reset, 503 …).
    var retries: Int?
    /// `--public-only`: refuse loopback, private, link-local … addresses (``AddressPolicy/publicOnly``).
    var isPublicOnly = false
    /// `--cacert`: a PEM file of certificate authorities to trust instead of the system's.
    var caBundlePath: String?
    /// `--user-agent`: the `User-Agent` sent (empty: none).
    var userAgent: String?
    /// `--max-redirects`: the most redirects followed (0: none).
    var maximumRedirects: Int?

    /// The options' synopsis, for a command's usage line.
    static let synopsis =
        "[--timeout SECONDS] [--max-bytes SIZE] [--retries N] [--max-redirects N] [--public-only] [--cacert FILE]"
        + " [--user-agent UA]"

    /// The options, for a command's option list.
    static let specs = [
        OptionSpec(
            "--timeout", value: "SECONDS",
            help: "Give up on an attempt after SECONDS without data (whole seconds) or in total (default 15 / 60)."),
        OptionSpec(
            "--max-bytes", value: "SIZE",
            help: "Refuse a response whose body is larger than SIZE, e.g. 500K or 10M (default 64M)."),
        OptionSpec(
            "--retries", value: "N",
            help: "Retry a transient failure (timeout, reset, 503 …) up to N times (default 2; 0 never)."),
        OptionSpec(
            "--max-redirects", value: "N",
            help: "Follow up to N redirects, each checked as the first request was (default 10; 0 follows none)."),
        OptionSpec(
            "--public-only",
            help: "Connect only to public addresses: refuse loopback, private, link-local and metadata addresses."),
        OptionSpec(
            "--cacert", value: "FILE", help: "Trust the certificate authorities in FILE (PEM) instead of the system's."),
        OptionSpec(
            "--user-agent", value: "UA",
            help: "Send UA as the User-Agent (default Imago/\(ImagoVersion.current); empty sends none)."),
    ]

    /// No limits given: the loader's defaults.
    init() {}

    /// Reads the options from `args`; throws a ``UsageError`` naming the option for a value out of range.
    init(parsing args: ParsedArguments) throws {
        if let text = args.value("--timeout") {
            guard let seconds = Double(text), seconds.isFinite, seconds >= 0.1, seconds <= 86_400 else {
                throw UsageError(
                    "option '--timeout' expects seconds from 0.1 to 86400, e.g. 5 or 0.5 (got '\(text)')")
            }
            timeout = .milliseconds(Int((seconds * 1000).rounded()))
        }
        if let text = args.value("--max-bytes") {
            let bytes = try parseByteCount(text, option: "--max-bytes")
            guard bytes > 0 else { throw UsageError("option '--max-bytes' must be more than 0 (got '\(text)')") }
            maximumBodySize = bytes
        }
        if let value = try args.integer("--retries", in: 0...10) { retries = value }
        if let value = try args.integer("--max-redirects", in: 0...50) { maximumRedirects = value }
        isPublicOnly = args.has("--public-only")
        if let path = args.value("--cacert") {
            guard FileManager.default.isReadableFile(atPath: path) else {
                throw UsageError("option '--cacert' expects a readable PEM file (got '\(path)')")
            }
            caBundlePath = path
        }
        if let text = args.value("--user-agent") {
            guard !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
                throw UsageError("option '--user-agent' must not contain control characters")
            }
            userAgent = text
        }
    }

    /// The libcurl loader with these settings, running at most `concurrency` transfers (default 6), its `Accept`
    /// header listing the formats `decoders` read when given (default: libcurl's `*/*`).
    func makeLoader(concurrency: Int = 6, acceptingImagesFor decoders: ImageDecoderRegistry? = nil) -> CurlDataLoader {
        var configuration = curlConfiguration()
        configuration.loading.maximumConcurrentTransfers = concurrency
        if let decoders { configuration.loading.acceptImages(decodableBy: decoders) }
        return CurlDataLoader(configuration: configuration)
    }

    /// The libcurl loader's configuration with every one of these settings: the limits, the address policy and
    /// the certificate authorities.
    func curlConfiguration() -> CurlDataLoader.Configuration {
        var configuration = CurlDataLoader.Configuration(loading: applied(to: HTTPDataLoader.Configuration()))
        if isPublicOnly { configuration.addressPolicy = .publicOnly }
        configuration.tls.caBundlePath = caBundlePath
        return configuration
    }

    /// `configuration` with these limits applied (a timeout shorter than the idle timeout lowers it too).
    func applied(to configuration: HTTPDataLoader.Configuration) -> HTTPDataLoader.Configuration {
        var loader = configuration
        if let timeout {
            loader.resourceTimeout = timeout
            loader.idleTimeout = min(loader.idleTimeout, timeout)
        }
        if let maximumBodySize { loader.maximumBodySize = Int64(maximumBodySize) }
        if let userAgent { loader.userAgent = userAgent.isEmpty ? nil : userAgent }
        if let maximumRedirects { loader.maximumRedirects = maximumRedirects }
        if let retries {
            var policy = loader.retryPolicy
            policy.maximumRetries = retries
            loader.retryPolicy = policy
        }
        return loader
    }
}
