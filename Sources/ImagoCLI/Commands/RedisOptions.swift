import Foundation
import ImagoRedis

/// The shared-tier settings `fetch`, `serve` and `cache stats` share: `--redis URL` (repeated once per node),
/// `--redis-ttl SECONDS`, `--redis-lease SECONDS` and `--redis-timeout MS`; the other ``RedisCache/Configuration``
/// fields keep their defaults (100 ms connect timeout, 16 MB cap, prefix `imago:`).
struct RedisOptions: Sendable {
    /// The nodes, or `nil` when `--redis` was not given.
    var configuration: RedisCache.Configuration?

    /// The options' synopsis, for a command's usage line.
    static let synopsis = "[--redis URL]... [--redis-ttl SECONDS] [--redis-lease SECONDS] [--redis-timeout MS]"

    /// The options, for a command's option list.
    static let specs = [
        OptionSpec(
            "--redis", value: "URL", repeatable: true,
            help:
                "Share a cache tier with other processes on Redis: redis://[:password@]host:port/db or unix:///path"
                + " (repeat once per node; keys are spread over the nodes)."),
        OptionSpec("--redis-ttl", value: "SECONDS", help: "How long values live in Redis (default 604800, 7 days)."),
        OptionSpec(
            "--redis-lease", value: "SECONDS",
            help: "How long another process waits on a fetch lease whose holder died (default 10)."),
        OptionSpec(
            "--redis-timeout", value: "MS",
            help: "How long one Redis command may take before it counts as a failure (default 50)."),
    ]

    /// No shared tier.
    init() {}

    /// Reads the options from `args`; throws a ``UsageError`` naming the option that is wrong.
    init(parsing args: ParsedArguments) throws {
        let urls = args.values["--redis"] ?? []
        guard !urls.isEmpty else {
            try args.refuse(["--redis-ttl", "--redis-lease", "--redis-timeout"], without: "--redis URL")
            return
        }
        var configuration: RedisCache.Configuration
        do {
            configuration = try RedisCache.Configuration(urls: urls)
        } catch {
            throw UsageError("option '--redis': \(error)")
        }
        if let seconds = try args.integer("--redis-ttl", in: 1...31_536_000) {
            configuration.timeToLive = .seconds(seconds)
        }
        if let text = args.value("--redis-lease") {
            guard let seconds = Double(text), seconds.isFinite, seconds >= 0.05, seconds <= 600 else {
                throw UsageError("option '--redis-lease' expects seconds from 0.05 to 600 (got '\(text)')")
            }
            configuration.leaseDuration = .milliseconds(Int((seconds * 1000).rounded()))
        }
        if let milliseconds = try args.integer("--redis-timeout", in: 1...60_000) {
            configuration.commandTimeout = .milliseconds(milliseconds)
        }
        self.configuration = configuration
    }

    /// The cache, or `nil` without `--redis`.
    func makeCache() -> RedisCache? { configuration.map(RedisCache.init(configuration:)) }
}
