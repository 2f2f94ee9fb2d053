import Foundation
import Imago

/// `imago fetch URL... [--list FILE] [--cache-dir DIR] [--out DIR] [--resize WxH] [--format F] [--concurrency N]
/// [--timeout SECONDS] [--max-bytes SIZE] [--retries N] [--json]`: loads images through one pipeline and its
/// caches, and optionally saves them.
enum FetchCommand {
    static let command = Command(
        name: "fetch",
        summary: "Load images by URL through the memory and disk caches; optionally resize, re-encode and save them.",
        synopsis:
            "URL... [--list FILE] [--cache-dir DIR] [--out DIR] [--resize WxH] [--format jpeg|png|gif|webp|avif|jxl|heic|bmp|ico|tiff] [--concurrency N]"
            + " \(NetworkOptions.synopsis) \(RedisOptions.synopsis) [--json]",
        details: """
            On a terminal: a live progress display, then a summary (images per source layer, failures with their
            reasons, total time). With --json or when stdout is not a terminal: one JSON object per URL, as each
            finishes: {"url":…,"status":"ok"|"error","source":"memory"|"disk"|"network","bytes":…,"width":…,
            "height":…,"ms":…,"error":…}. bytes is the size of the encoded image as downloaded or read from the
            disk cache; width and height are those of the delivered image (after --resize). With --redis, a
            shared tier is asked after the disk cache (source "sharedCache") and one process of the fleet loads
            each URL; Redis being down or slow only makes misses.
            The disk cache keeps each download's original bytes, or with --resize only the resized image, encoded:
            a rerun with the same --resize reads that small file and decodes no original.
            With --out, each image is written to DIR under a name made from its URL's last path component
            (sanitised, made unique within the run, never outside DIR): the original bytes, or with --resize or
            --format the processed image re-encoded (default format: the source's, PNG when it cannot be encoded).
            A URL fails (and nothing of it is cached) when its server stalls or drips past --timeout, sends more
            than --max-bytes (also after gzip decoding), lies about its length, resets the connection, redirects
            more than 10 times or sends what does not decode. A URL listed again after such a failure that will
            not change (a 404 or 410, a refusal, bytes that do not decode) fails at once with the same reason and
            is not requested again in that run. User names, passwords and the values of query items
            such as token=, key= or signature= are printed as <redacted> and never stored in the cache.
            Ctrl-C cancels the transfers in flight, closes the disk cache cleanly, prints what was done, and
            exits with status 130.
            Exit status: 0 when every URL succeeded, 1 when any failed (an invalid URL is such a failure), 2 for
            bad usage, 130 when interrupted.
            """,
        options: [
            OptionSpec(
                "--list", value: "FILE", repeatable: true,
                help: "Also read URLs from FILE, one per line (blank lines and # comments ignored; - is stdin)."),
            OptionSpec(
                "--cache-dir", value: "DIR",
                help: "The disk cache directory (default $XDG_CACHE_HOME/imago, else ~/.cache/imago)."),
            OptionSpec("--out", short: "-o", value: "DIR", help: "Write each image into DIR (created when missing)."),
            OptionSpec(
                "--resize", value: "WxH", help: "Scale each image to fit within WxH (aspect kept, never enlarged)."),
            OptionSpec(
                "--format", value: "FORMAT",
                help:
                    "Write the files --out saves as jpeg, png, gif, webp, avif or jxl (when this build has that encoder)."
            ),
            OptionSpec(
                "--quality", value: "Q",
                help: "Re-encode the files --out saves at quality Q, 1 to 100 (JPEG, WebP, AVIF, JPEG XL; default 85)."),
            OptionSpec(
                "--png-colors", value: "N",
                help: "Write --format png files as palette PNGs of at most N colours, 2 to 256 (dithered, alpha kept)."),
            OptionSpec(
                "--concurrency", short: "-j", value: "N", help: "How many images are in flight at once (default 6)."),
        ] + NetworkOptions.specs + RedisOptions.specs + [
            OptionSpec("--json", help: "Print one JSON object per URL (the default when stdout is not a terminal).")
        ],
        run: { args, console in await run(args, console: console) })

    /// What a fetch was asked to do, checked.
    struct Options: Sendable {
        /// The URLs as given, in order (positionals first, then each list's lines).
        var urls: [String] = []
        var cacheDirectory: URL
        var outputDirectory: URL?
        var resize: PixelSize?
        var format: ImageFormat?
        /// `--quality`: the quality files are re-encoded at (1…100), if given.
        var quality: Int?
        /// `--png-colors`: PNG files' palette size, if they are quantized.
        var pngColors: Int?
        var concurrency = 6
        /// `--timeout`, `--max-bytes` and `--retries`; each nil keeps the loader's default.
        var network = NetworkOptions()
        /// `--redis`: the shared cache tier, if any.
        var redis = RedisOptions()
        var json = false
    }

    /// The formats `--format` accepts.
    /// AVIF and JPEG XL are accepted here; a run fails up front when no encoder for the format is registered.
    static let writableFormats: [String: ImageFormat] = [
        "jpeg": .jpeg, "jpg": .jpeg, "png": .png, "gif": .gif, "webp": .webp, "avif": .avif, "jxl": .jpegXL,
        "heic": .heic, "bmp": .bmp, "ico": .ico, "tiff": .tiff, "tif": .tiff,
    ]

    /// Runs the command. `interrupt`: a trigger that stops the run as SIGINT would (tests fire it); `nil`
    /// (the default) installs a SIGINT handler for the duration of the run. `standardInput` reads `--list -`
    /// (default: the console's standard input, at most ``InputFile/defaultLimit`` bytes).
    static func run(
        _ args: ParsedArguments, console: Console, interrupt: InterruptTrigger? = nil,
        standardInput: (@Sendable () throws -> Data)? = nil
    ) async -> Int32 {
        let options: Options
        do {
            let readsStandardInput =
                standardInput ?? {
                    try InputFile.read(InputFile.standardInputName, standardInput: console.standardInput)
                }
            options = try parse(args, environment: console.environment, standardInput: readsStandardInput)
        } catch {
            console.printError("imago fetch: \(error)")
            console.printError("Usage: imago fetch \(command.synopsis)")
            return 2
        }
        let trigger = interrupt ?? InterruptTrigger()
        let token = interrupt == nil ? SignalInterrupts.install(trigger) : nil
        defer { token.map(SignalInterrupts.remove) }
        return await FetchRun.execute(options, console: console, interrupt: trigger)
    }

    /// Checks the arguments and reads the URL lists.
    static func parse(
        _ args: ParsedArguments, environment: [String: String], standardInput: () throws -> Data
    ) throws -> Options {
        var options = Options(
            cacheDirectory: args.value("--cache-dir").map { URL(fileURLWithPath: $0) }
                ?? ImagePipeline.Configuration.defaultCacheDirectory(environment: environment))
        options.urls = args.positionals
        for list in args.values["--list"] ?? [] {
            options.urls += try readList(list, standardInput: standardInput)
        }
        guard !options.urls.isEmpty else {
            throw UsageError("no URL given (pass URLs as arguments or with --list FILE)")
        }
        options.outputDirectory = args.value("--out").map { URL(fileURLWithPath: $0, isDirectory: true) }
        if let text = args.value("--resize") {
            let (w, h) = try parsePixelSize(text, option: "--resize")
            options.resize = PixelSize(width: w, height: h)
        }
        if let text = args.value("--format") {
            guard let format = writableFormats[text.lowercased()] else {
                throw UsageError("option '--format' expects jpeg, png, gif, webp, avif or jxl (got '\(text)')")
            }
            guard options.outputDirectory != nil else {
                throw UsageError("option '--format' needs --out DIR (it sets the format of the files written there)")
            }
            options.format = format
        }
        if let text = args.value("--quality") {
            guard options.outputDirectory != nil else {
                throw UsageError("option '--quality' needs --out DIR (it sets the quality of the files written there)")
            }
            options.quality = try parseInteger(text, option: "--quality", range: 1...100)
        }
        if let text = args.value("--png-colors") {
            guard options.format == .png else {
                throw UsageError("option '--png-colors' needs --format png --out DIR (it quantizes the PNGs written)")
            }
            options.pngColors = try parseInteger(text, option: "--png-colors", range: 2...256)
        }
        if let value = try args.integer("--concurrency", in: 1...256) { options.concurrency = value }
        options.network = try NetworkOptions(parsing: args)
        options.redis = try RedisOptions(parsing: args)
        options.json = args.has("--json")
        return options
    }

    /// The URLs in a list file: one per line, surrounding spaces trimmed, blank lines and `#` comments skipped.
    static func readList(_ path: String, standardInput: () throws -> Data) throws -> [String] {
        let data: Data
        do {
            data = try path == InputFile.standardInputName ? standardInput() : InputFile.read(path)
        } catch {
            throw UsageError("cannot read the URL list '\(path)': \(error)")
        }
        return parseList(String(decoding: data, as: UTF8.self))
    }

    /// The URLs in a list's text (see ``readList(_:standardInput:)``).
    static func parseList(_ text: String) -> [String] {
        text.split(whereSeparator: \.isNewline).compactMap { line in
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            return trimmed.isEmpty || trimmed.hasPrefix("#") ? nil : trimmed
        }
    }
}
