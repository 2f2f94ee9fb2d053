import Foundation
import Imago
import ImagoDemoServer

/// `imago demo`: the whole pipeline on an embedded loopback server, three passes, a contact sheet and a table.
enum DemoCommand {
    static let command = Command(
        name: "demo",
        summary: "Run the whole pipeline on an embedded loopback server: cold, disk-warm and memory-warm passes.",
        synopsis: "[--limit N] [--no-color] [--corpus DIR]",
        details: """
            Serves a gallery (the Kodak photos and the formats folder of ../shared/corpus when present, else
            images it draws) from a loopback HTTP server, loads it three times through a fresh pipeline with a
            temporary cache directory — cold from the network, from disk after clearing memory, then from
            memory — shows progress, a contact sheet of thumbnails, and a table of times and per-layer counts.
            Needs no network and no arguments.
            """,
        options: [
            OptionSpec("--limit", value: "N", help: "Use at most N gallery images (default: all)."),
            OptionSpec("--no-color", help: "Draw the contact sheet with plain characters."),
            OptionSpec("--corpus", value: "DIR", help: "The image corpus folder (default: ../shared/corpus)."),
        ],
        run: { args, console in await run(args, console: console) })

    static func run(_ args: ParsedArguments, console: Console) async -> Int32 {
        let limit: Int?
        do {
            limit = try args.integer("--limit", in: 1...10_000)
        } catch {
            console.printError("imago demo: \(error)")
            return 2
        }
        let corpus = args.value("--corpus").map { URL(fileURLWithPath: $0) } ?? defaultCorpus()
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent(
            "imago-demo-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        defer { try? FileManager.default.removeItem(at: scratch) }
        do {
            let gallery = try DemoGallery.make(corpus: corpus, limit: limit, encoders: .makeDefault())
            let server = try DemoOriginServer(
                resources: Dictionary(
                    gallery.items.map { ($0.path, .init(data: $0.data, contentType: $0.contentType)) },
                    uniquingKeysWith: { _, last in last }))
            defer { server.stop() }
            let configuration = try ImagePipeline.Configuration.withDefaults(
                diskCacheDirectory: scratch.appendingPathComponent("cache"))
            let pipeline = ImagePipeline(configuration: configuration)
            let requests = gallery.items.map {
                ImageRequest(
                    url: server.url(for: $0.path), processors: [.resize(width: 256, height: 256)],
                    targetSize: PixelSize(width: 256, height: 256))
            }
            let bytes = gallery.items.reduce(0) { $0 + $1.data.count }
            console.print("imago demo — the whole pipeline on a loopback server at \(server.baseURL.absoluteString)")
            console.print(
                "Gallery: \(gallery.items.count) images, \(formatBytes(Int64(bytes))), from \(gallery.origin)")
            console.print("Cache: \(scratch.path)/cache (removed at the end)\n")
            #if DEBUG
                console.print(
                    "Note: this imago is a debug build, about 10x slower than release; `make demo` runs a release "
                        + "build.\n")
            #endif

            let passes: [(String, Int, () -> Void)] = [
                ("1 cold (network)", min(8, requests.count), {}),
                ("2 disk (memory cleared)", 0, { configuration.imageCache?.removeAll() }),
                ("3 memory", 0, {}),
            ]
            var results: [DemoPass.Result] = []
            for (name, duplicated, prepare) in passes {
                prepare()
                let display =
                    console.usesEscapeCodes
                    ? ProgressDisplay(total: requests.count + duplicated, console: console) : nil
                if display == nil { console.print("Pass \(name)…") } else { console.print("Pass \(name)") }
                let ticker = display.map { display in
                    Task {
                        while !Task.isCancelled {
                            display.redraw()
                            try? await Task.sleep(for: .milliseconds(100))
                        }
                    }
                }
                let result = await DemoPass(
                    name: name, pipeline: pipeline, requests: requests, duplicated: duplicated, concurrency: 6
                ).run(display: display)
                ticker?.cancel()
                _ = await ticker?.value
                // Writes run after delivery: the next pass reads from the disk only what has reached it.
                await pipeline.waitForPendingCacheWrites()
                display?.redraw()
                results.append(result)
            }
            console.print("")
            renderContactSheet(results.last?.thumbnails ?? [], args: args, console: console)
            console.print("")
            printTable(results, statistics: pipeline.statistics, console: console)
            let failures = results.flatMap(\.failures)
            for failure in Set(failures).sorted() { console.printError("failed: \(failure)") }
            return failures.isEmpty ? 0 : 1
        } catch {
            console.printError("imago demo: \(error)")
            return 1
        }
    }

    static func defaultCorpus() -> URL {
        // ../shared/corpus from the current directory (make demo runs in the project root).
        URL(fileURLWithPath: FileManager.default.currentDirectoryPath).deletingLastPathComponent()
            .appendingPathComponent("shared/corpus")
    }

    static func renderContactSheet(_ thumbnails: [PixelBuffer], args: ParsedArguments, console: Console) {
        let tile = PixelSize(width: 16, height: 12)
        let perRow = max(4, (console.width + 2) / (tile.width + 2))
        let mode: HalfBlockRenderer.ColorMode =
            args.has("--no-color") || !console.usesEscapeCodes
            ? .none : (console.supportsTrueColor ? .trueColor : .palette256)
        guard let sheet = try? ContactSheet.make(thumbnails, columns: perRow, tile: tile),
            let lines = try? HalfBlockRenderer(mode: mode).render(sheet, columns: sheet.width)
        else { return }
        console.print("Contact sheet (\(thumbnails.count) thumbnails, from the memory pass):")
        console.write(lines.joined(separator: "\n") + "\n")
    }

    static func printTable(_ results: [DemoPass.Result], statistics: ImagePipeline.Statistics, console: Console) {
        let header = ["pass", "time", "images", "memory", "disk", "network", "coalesced", "failed"]
        var rows: [[String]] = [header]
        for r in results {
            rows.append([
                r.name, String(format: "%.3f s", r.seconds), "\(r.images)", "\(r.sources[.memory] ?? 0)",
                "\(r.sources[.disk] ?? 0)", "\(r.sources[.network] ?? 0)", "\(r.coalesced)", "\(r.failures.count)",
            ])
        }
        let widths = header.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        for (index, row) in rows.enumerated() {
            let cells = row.enumerated().map { column, cell in
                column == 0
                    ? cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
                    : String(repeating: " ", count: widths[column] - cell.count) + cell
            }
            console.print(cells.joined(separator: "  "))
            if index == 0 { console.print(widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")) }
        }
        let decodeMs = statistics.decodeTime.timeInterval * 1000
        console.print(
            "\nPipeline: \(statistics.networkLoads) downloads (\(formatBytes(statistics.networkBytes))), \(statistics.decodeCount) decodes (\(String(format: "%.0f", decodeMs)) ms), \(statistics.diskWrites) disk writes, \(statistics.coalescedJoins) coalesced joins, memory hits \(statistics.memoryHits), disk hits \(statistics.diskHits)"
        )
    }
}
