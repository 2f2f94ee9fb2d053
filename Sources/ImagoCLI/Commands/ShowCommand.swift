import Foundation
import Imago

/// `imago show URL|FILE [--width COLS] [--no-color] [--cache-dir DIR] [--timeout SECONDS] [--max-bytes SIZE]
/// [--retries N]`: renders an image in the terminal.
enum ShowCommand {
    static let command = Command(
        name: "show",
        summary: "Render an image (URL or file) in the terminal; animated images play a few loops.",
        synopsis: "URL|FILE [--width COLS] [--no-color] [--cache-dir DIR] \(NetworkOptions.synopsis)",
        details: """
            Draws with half-block characters in 24-bit colour (COLORTERM=truecolor), else the 256-colour palette;
            plain characters with --no-color, NO_COLOR, or when stdout is not a terminal. FILE - reads standard
            input (curl -s URL | imago show -). URLs load through the
            pipeline and its caches (default cache directory: $XDG_CACHE_HOME/imago or ~/.cache/imago).
            A URL fails when its server stalls or drips past --timeout, sends more than --max-bytes, or keeps
            failing after --retries; nothing of a failed download is cached. Ctrl-C stops an animation and
            restores the cursor.
            Exit status: 0 shown, 1 could not be loaded or decoded, 2 bad usage.
            """,
        options: [
            OptionSpec("--width", value: "COLS", help: "Width in terminal columns (default: the terminal's width)."),
            OptionSpec("--no-color", help: "Draw with plain characters, no escape codes."),
            OptionSpec("--cache-dir", value: "DIR", help: "Cache directory for URLs (default: the XDG cache)."),
        ] + NetworkOptions.specs,
        run: { args, console in await run(args, console: console) })

    static func run(_ args: ParsedArguments, console: Console) async -> Int32 {
        guard args.positionals.count == 1, let target = args.positionals.first else {
            console.printError("imago show: give exactly one URL or FILE\nUsage: imago show \(command.synopsis)")
            return 2
        }
        var columns = console.width
        let network: NetworkOptions
        do {
            if let value = try args.integer("--width", in: 1...1000) { columns = value }
            network = try NetworkOptions(parsing: args)
        } catch {
            console.printError("imago show: \(error)")
            return 2
        }
        let request: ImageRequest
        let name: String
        if let url = URL(string: target), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" {
            request = ImageRequest(url: url, targetSize: PixelSize(width: columns, height: columns * 8))
            name = url.redactedString
        } else {
            let path = target.hasPrefix("file://") ? (URL(string: target)?.path ?? target) : target
            let data: Data
            do {
                data = try InputFile.read(path, standardInput: console.standardInput)
            } catch {
                console.printError("imago show: cannot read '\(path)': \(error)")
                return 1
            }
            // A local file the user named is read here, explicitly: the pipeline itself loads only http(s).
            request = ImageRequest(
                source: .data(id: "file://" + path, data), targetSize: PixelSize(width: columns, height: columns * 8))
            name = path
        }
        let cacheDirectory =
            args.value("--cache-dir").map { URL(fileURLWithPath: $0) }
            ?? ImagePipeline.Configuration.defaultCacheDirectory(environment: console.environment)
        let configuration: ImagePipeline.Configuration
        do {
            var c = try ImagePipeline.Configuration.withDefaults(diskCacheDirectory: cacheDirectory)
            c.dataLoader = network.makeLoader(acceptingImagesFor: c.decoders)
            configuration = c
        } catch {
            console.printError("imago show: cannot use the cache directory '\(cacheDirectory.path)': \(error)")
            return 1
        }
        let pipeline = ImagePipeline(configuration: configuration)
        let view = TerminalImageView()
        let result: Result<ImageResponse, ImagePipeline.Error> = await withCheckedContinuation { continuation in
            configuration.callbackQueue.async {
                view.setImage(
                    with: request, pipeline: pipeline, progress: nil,
                    completion: { continuation.resume(returning: $0) })
            }
        }
        let image: ImageContainer
        switch result {
        case .success:
            guard let shown = view.shown else {
                console.printError("imago show: \(name): nothing to show")
                return 1
            }
            image = shown
            // What was downloaded reaches the cache before the program ends (writes run after delivery).
            await pipeline.waitForPendingCacheWrites()
            (configuration.dataCache as? DiskCache)?.close()
        case .failure(let error):
            console.printError("imago show: \(FetchRun.message(for: error, url: name))")
            return 1
        }
        let mode: HalfBlockRenderer.ColorMode =
            args.has("--no-color") || !console.usesEscapeCodes
            ? .none : (console.supportsTrueColor ? .trueColor : .palette256)
        let interrupt = InterruptTrigger()
        let token = console.isTerminal ? SignalInterrupts.install(interrupt) : nil
        defer { if let token { SignalInterrupts.remove(token) } }
        do {
            try TerminalPlayer(console: console, renderer: HalfBlockRenderer(mode: mode), columns: columns)
                .show(image, interrupted: { interrupt.isFired })
        } catch {
            console.printError("imago show: \(name): cannot render: \(error)")
            return 1
        }
        return 0
    }
}
