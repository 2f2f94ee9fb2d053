import Foundation
import Imago
import ImagoRedis

/// One `imago fetch`: one pipeline, a sliding window of at most `concurrency` images in flight, results
/// reported as they finish, and a summary at the end.
struct FetchRun: Sendable {
    let options: FetchCommand.Options
    let console: Console
    let pipeline: ImagePipeline
    let display: ProgressDisplay?
    let writer: FetchOutputWriter?
    /// One JSON object per URL (else human-readable output).
    let isJSON: Bool

    /// The memory cache's cost limit for a fetch: 64 MB.
    static let batchMemoryCacheCostLimit = 64 << 20

    /// Runs `options` to the end or until `interrupt` fires; returns the exit status.
    static func execute(_ options: FetchCommand.Options, console: Console, interrupt: InterruptTrigger) async -> Int32 {
        let configuration: ImagePipeline.Configuration
        do {
            var c = try ImagePipeline.Configuration.withDefaults(diskCacheDirectory: options.cacheDirectory)
            c.dataLoader = options.network.makeLoader(
                concurrency: options.concurrency, acceptingImagesFor: c.decoders)
            // A batch loads each URL once: the memory cache only serves a URL listed twice, so it is kept small
            // (a default-sized one held every decoded original of a run: 1.3 GB for 300 photos).
            c.imageCache = MemoryCache(configuration: .init(costLimit: batchMemoryCacheCostLimit))
            c.sharedCache = options.redis.makeCache()
            configuration = c
        } catch {
            console.printError(
                "imago fetch: cannot use the cache directory '\(options.cacheDirectory.path)': \(error) "
                    + "(pass --cache-dir DIR with a writable directory)")
            return 1
        }
        if let format = options.format, configuration.encoders.encoder(for: format) == nil {
            console.printError("imago fetch: no encoder for '\(format)' is registered in this build (--format)")
            return 1
        }
        var writer: FetchOutputWriter?
        if let directory = options.outputDirectory {
            do {
                // The files' own encoders: a palette PNG encoder is theirs only, not the pipeline's.
                let encoders = ImageEncoderRegistry(copying: configuration.encoders)
                if let colors = options.pngColors { encoders.register(PNGEncoder(paletteColors: colors)) }
                var encoding = EncodingOptions()
                if let quality = options.quality { encoding.quality = Double(quality) / 100 }
                writer = try FetchOutputWriter(
                    directory: directory, urls: options.urls.map(URLRedaction.redacted), format: options.format,
                    reencodes: options.resize != nil || options.format != nil || options.quality != nil,
                    encoders: encoders,
                    encoding: encoding)
            } catch {
                console.printError("imago fetch: \(error)")
                return 1
            }
        }
        let isJSON = options.json || !console.isTerminal
        let run = FetchRun(
            options: options, console: console, pipeline: ImagePipeline(configuration: configuration),
            display: !isJSON && console.usesEscapeCodes
                ? ProgressDisplay(total: options.urls.count, console: console)
                : nil,
            writer: writer, isJSON: isJSON)
        return await run.execute(interrupt: interrupt)
    }

    private func execute(interrupt: InterruptTrigger) async -> Int32 {
        let started = ContinuousClock.now
        let ticker = display.map { display in
            Task {
                while !Task.isCancelled {
                    display.redraw()
                    try? await Task.sleep(for: .milliseconds(100))
                }
            }
        }
        let work = Task { await fetchAll() }
        interrupt.onFire { work.cancel() }
        let results = await work.value
        ticker?.cancel()
        _ = await ticker?.value
        display?.clear()
        // Leave the cache consistent: every write and removal the pipeline queued handed over (they run after
        // delivery; a download that failed to decode is removed again), staged writes on disk, the journal
        // compacted, our registration released.
        await pipeline.waitForPendingCacheWrites()
        (pipeline.configuration.dataCache as? DiskCache)?.close()
        (pipeline.configuration.sharedCache as? RedisCache)?.close()
        let summary = FetchSummary(
            results: results, total: options.urls.count, elapsed: .now - started, wasInterrupted: interrupt.isFired)
        if isJSON {
            if summary.wasInterrupted { console.printError("imago fetch: " + summary.headline) }
        } else {
            for line in summary.lines { console.print(line) }
        }
        if summary.wasInterrupted { return 130 }
        return summary.failed == 0 ? 0 : 1
    }

    /// Fetches every URL, at most `concurrency` at a time, in order of the list; stops starting new ones when
    /// the task is cancelled. Returns the results of the URLs that were started.
    private func fetchAll() async -> [FetchResult] {
        await withTaskGroup(of: FetchResult.self) { group in
            var results: [FetchResult] = []
            var next = 0
            let urls = options.urls
            func startNext() {
                guard next < urls.count, !Task.isCancelled else { return }
                let index = next
                next += 1
                group.addTask { await fetch(index: index, text: urls[index]) }
            }
            for _ in 0..<min(options.concurrency, urls.count) { startNext() }
            for await result in group {
                report(result)
                results.append(result)
                startNext()
            }
            return results
        }
    }

    /// Loads one URL and writes it out when asked.
    private func fetch(index: Int, text: String) async -> FetchResult {
        let started = ContinuousClock.now
        // Everything printed names the URL without its secrets (user-info, token=… values).
        let name = URLRedaction.redacted(text)
        var result = FetchResult(index: index, url: name)
        guard let url = Self.parseURL(text) else {
            result.outcome = .failed("'\(name)' is not a valid URL (give an absolute http:// or https:// URL)")
            display?.itemFinished(id: index, bytes: 0, failed: true)
            return result
        }
        let request = ImageRequest(
            url: url, processors: options.resize.map { [.resize(width: $0.width, height: $0.height)] } ?? [],
            options: [.keepsOriginalData])
        display?.transferStarted(id: index, name: name)
        let task = pipeline.loadImage(with: request)
        let display = display
        let outcome = await withTaskCancellationHandler {
            for await event in task.events {
                switch event {
                case .progress(let progress):
                    display?.transferProgressed(id: index, received: progress.completed, expected: progress.total)
                case .finished(let finished):
                    return finished
                case .preview, .updated:
                    continue
                }
            }
            return .failure(.cancelled)
        } onCancel: {
            task.cancel()
        }
        switch outcome {
        case .success(let response):
            let image = response.image
            result.source = response.source
            result.isCoalesced = response.isCoalesced
            result.bytes = image.originalData?.count
            result.width = image.image.width
            result.height = image.image.height
            result.colorWarning = image.colorWarning
            result.outcome = .ok
            if let writer {
                do {
                    result.savedPath = try writer.write(image, index: index)
                } catch {
                    result.outcome = .failed("\(error)")
                }
            }
        case .failure(.cancelled):
            result.outcome = .cancelled
        case .failure(let error):
            result.outcome = .failed(Self.message(for: error, url: name))
        }
        result.milliseconds = Int(((ContinuousClock.now - started) / .milliseconds(1)).rounded())
        display?.itemFinished(id: index, bytes: Int64(result.bytes ?? 0), failed: result.isFailure)
        return result
    }

    /// Prints one finished URL: its JSON object, or a plain line on a terminal without the live display.
    private func report(_ result: FetchResult) {
        if case .cancelled = result.outcome { return }
        if isJSON {
            console.print(result.jsonLine)
        } else if display == nil {
            console.print(result.plainLine)
        }
    }

    /// `text` as an absolute URL with a scheme and a host, or `nil`.
    static func parseURL(_ text: String) -> URL? {
        guard let url = URL(string: text), let scheme = url.scheme, !scheme.isEmpty,
            url.host.map({ !$0.isEmpty }) ?? false
        else { return nil }
        return url
    }

    /// `text` as an http or https URL with a host (``parseURL(_:)``), for options that name one; `nil` otherwise.
    static func parseHTTPURL(_ text: String) -> URL? {
        guard let url = parseURL(text), ["http", "https"].contains(url.scheme?.lowercased()) else { return nil }
        return url
    }

    /// A sentence for a failed load that names the URL once (`url`: already redacted, or the file name `show` was
    /// given). A failure the pipeline remembers reads as the first one did, and says until when it is remembered.
    static func message(for error: ImagePipeline.Error, url: String) -> String {
        switch error {
        case .dataLoadingFailed(_, .statusCode(let code, _)):
            return httpMessage(code, url: url)
        case .dataLoadingFailed(_, let underlying):
            return loadingMessage("\(underlying)", url: url)
        case .decodingFailed(_, let underlying):
            return decodingMessage("\(underlying)", url: url)
        case .failedRecently(_, let until, let reason):
            let first =
                switch reason {
                case .http(let code): httpMessage(code, url: url)
                case .decode(let why): decodingMessage(why, url: url)
                case .rejected(let why): loadingMessage(why, url: url)
                case .other: "could not load \(url)"
                }
            let time = until.formatted(Date.ISO8601FormatStyle(timeZone: .gmt))
            return "\(first); remembered from an earlier attempt, not tried again before \(time)"
        default:
            return "\(url): \(error)"
        }
    }

    private static func httpMessage(_ code: Int, url: String) -> String {
        "the server answered HTTP \(code) for \(url) (check the URL)"
    }

    /// The loader's sentence names the URL it loaded; the requested one is added only when that was another
    /// (a redirect's target).
    private static func loadingMessage(_ why: String, url: String) -> String {
        why.contains(url) ? why : "could not load \(url): \(why)"
    }

    private static func decodingMessage(_ why: String, url: String) -> String {
        "\(url) is not an image Imago can decode: \(why)"
    }
}
