import Foundation
import Imago
import ImagoRedis

/// `imago cache stats|verify|trim --max-size SIZE|clear [--cache-dir DIR] [--redis URL]... [--json]`: looks after a
/// disk cache (and with `stats --redis`, reports the shared tier).
enum CacheCommand {
    static let command = Command(
        name: "cache",
        summary: "Show, check, shrink or empty the disk cache.",
        synopsis: "stats|verify|trim --max-size SIZE|clear [--cache-dir DIR] [--redis URL]... [--json]",
        details: """
            stats    entries, bytes, oldest and newest entry  {"entries":…,"bytes":…,"oldest":…,"newest":…}
            verify   reads every entry, removes damaged ones  {"checked":…,"corrupt":…,"removed":…}
            trim     removes least recently used entries until at most SIZE bytes remain (SIZE in bytes or
                     with K, M, G, KB, MB, GB: 1K = 1024)  {"removed":…,"removedBytes":…,"entries":…,"bytes":…}
            clear    removes every entry  {"removed":…,"removedBytes":…}
            stats --redis URL (repeated per node) also reports the shared tier: its values, bytes and the hit rate
            of every process's lookups  {…,"redisKeys":…,"redisBytes":…,"redisLookups":…,"redisHitRate":…,
            "redisNodes":…} (redisNodes: nodes that answered).
            Dates are ISO 8601 (UTC), null when the cache is empty. A directory that does not exist or holds no
            cache counts as an empty cache: no command creates or changes it.
            Exit status: 0 on success, 1 when verify found corrupt entries or the cache could not be used, 2 for
            bad usage.
            """,
        options: [
            OptionSpec(
                "--cache-dir", value: "DIR",
                help: "The disk cache directory (default $XDG_CACHE_HOME/imago, else ~/.cache/imago)."),
            OptionSpec("--max-size", value: "SIZE", help: "For trim: the most bytes to keep (e.g. 500M, 2GB)."),
            OptionSpec(
                "--redis", value: "URL", repeatable: true,
                help: "For stats: also report the shared tier on Redis (repeat once per node)."),
            OptionSpec("--json", help: "Print one JSON object (the default when stdout is not a terminal)."),
        ],
        run: { args, console in await run(args, console: console) })

    enum Action: String, CaseIterable {
        case stats, verify, trim, clear
    }

    static func run(_ args: ParsedArguments, console: Console) async -> Int32 {
        let action: Action
        var maxSize: Int?
        var redis = RedisOptions()
        do {
            guard let word = args.positionals.first else {
                throw UsageError("no action given (stats, verify, trim or clear)")
            }
            guard let a = Action(rawValue: word) else {
                throw UsageError("unknown action '\(word)' (expected stats, verify, trim or clear)")
            }
            guard args.positionals.count == 1 else {
                throw UsageError("unexpected argument '\(args.positionals[1])'")
            }
            action = a
            if let text = args.value("--max-size") {
                guard action == .trim else { throw UsageError("option '--max-size' only applies to trim") }
                maxSize = try parseByteCount(text, option: "--max-size")
            } else if action == .trim {
                throw UsageError("trim needs --max-size SIZE (e.g. --max-size 100M)")
            }
            redis = try RedisOptions(parsing: args)
            if redis.configuration != nil, action != .stats {
                throw UsageError("option '--redis' only applies to stats")
            }
        } catch {
            console.printError("imago cache: \(error)\nUsage: imago cache \(command.synopsis)")
            return 2
        }
        let directory =
            args.value("--cache-dir").map { URL(fileURLWithPath: $0) }
            ?? ImagePipeline.Configuration.defaultCacheDirectory(environment: console.environment)
        let json = args.has("--json") || !console.isTerminal
        var tier: (RedisCache.TierStatistics, nodes: Int)?
        if let cache = redis.makeCache() {
            tier = (await cache.tierStatistics(), cache.configuration.nodes.count)
            cache.close()
        }
        do {
            return try perform(
                action, maxSize: maxSize ?? 0, directory: directory, tier: tier, json: json, console: console)
        } catch {
            console.printError("imago cache: cannot use the cache in '\(directory.path)': \(error)")
            return 1
        }
    }

    private static func perform(
        _ action: Action, maxSize: Int, directory: URL, tier: (RedisCache.TierStatistics, nodes: Int)?, json: Bool,
        console: Console
    ) throws -> Int32 {
        // A directory without the cache's `entries/` (missing, or not a cache) is an empty cache: opening a
        // DiskCache there would create its layout as a side effect.
        let isCache = FileManager.default.fileExists(atPath: directory.appendingPathComponent("entries").path)
        let cache = isCache ? try DiskCache(directory: directory) : nil
        defer { cache?.close() }
        let before = cache?.statistics
        var line = JSONLine()
        var text: String
        var status: Int32 = 0
        switch action {
        case .stats:
            let entries = before?.entryCount ?? 0
            let bytes = before?.totalBytes ?? 0
            line.add("entries", entries)
            line.add("bytes", bytes)
            line.add("oldest", before?.oldestStoredAt.map(iso8601))
            line.add("newest", before?.newestStoredAt.map(iso8601))
            text = "\(directory.path): \(entries) \(entries == 1 ? "entry" : "entries"), \(formatBytes(Int64(bytes)))"
            if let oldest = before?.oldestStoredAt, let newest = before?.newestStoredAt {
                text += "\n  oldest \(iso8601(oldest))\n  newest \(iso8601(newest))"
            }
            if let (stats, nodes) = tier {
                line.add("redisKeys", stats.keys)
                line.add("redisBytes", Int(stats.bytes))
                line.add("redisLookups", stats.lookups)
                line.add("redisHitRate", stats.hitRate)
                line.add("redisNodes", stats.reachableNodes)
                let rate = stats.hitRate.map { String(format: "%.1f%%", $0 * 100) } ?? "n/a"
                text +=
                    "\nredis (\(stats.reachableNodes) of \(nodes) nodes answered): \(stats.keys) keys, "
                    + "\(formatBytes(stats.bytes)), hit rate \(rate) of \(stats.lookups) lookups"
                if stats.reachableNodes < nodes { status = 1 }
            }
        case .verify:
            let report = try cache?.verify()
            let (checked, corrupt, removed) = (report?.checked ?? 0, report?.corrupt ?? 0, report?.removed ?? 0)
            line.add("checked", checked)
            line.add("corrupt", corrupt)
            line.add("removed", removed)
            text =
                corrupt == 0
                ? "\(directory.path): checked \(checked) entries, none corrupt."
                : "\(directory.path): checked \(checked) entries, \(corrupt) corrupt, \(removed) removed."
            status = corrupt == 0 ? 0 : 1
        case .trim:
            let removed = try cache?.trim(toSize: maxSize) ?? 0
            let after = cache?.statistics
            let removedBytes = max(0, (before?.totalBytes ?? 0) - (after?.totalBytes ?? 0))
            line.add("removed", removed)
            line.add("removedBytes", removedBytes)
            line.add("entries", after?.entryCount ?? 0)
            line.add("bytes", after?.totalBytes ?? 0)
            text =
                "\(directory.path): removed \(removed) entries (\(formatBytes(Int64(removedBytes)))); "
                + "\(after?.entryCount ?? 0) entries (\(formatBytes(Int64(after?.totalBytes ?? 0)))) remain, "
                + "limit \(formatBytes(Int64(maxSize)))."
        case .clear:
            try cache?.removeAllSynchronously()
            line.add("removed", before?.entryCount ?? 0)
            line.add("removedBytes", before?.totalBytes ?? 0)
            text =
                "\(directory.path): removed \(before?.entryCount ?? 0) entries (\(formatBytes(Int64(before?.totalBytes ?? 0))))."
        }
        console.print(json ? line.text : text)
        return status
    }

    /// `2026-11-30T14:05:00Z`.
    static func iso8601(_ date: Date) -> String {
        date.formatted(.iso8601)
    }
}
