import CBenchShims
import Dispatch
import Foundation
import Imago
import ImagoCore
import ImagoTesting

/// Not a comparison: a soak of the whole pipeline (`imago-bench soak`, IMAGO_SOAK_REQUESTS requests, default
/// 50,000) against a loopback server, over 3,000 URLs of real PNG and JPEG bytes, with a 4 MB memory cache, a 2 MB
/// disk cache, 32 requests in flight and 10 % of them cancelled at a random moment. Prints RSS after warm-up (the
/// first 10 %) and at the end, open file descriptors before and after, and whether the limits held; and, to tell
/// objects kept alive from memory malloc keeps after they are freed, glibc's heap in use, arena bytes and free
/// bytes inside the arenas at every tenth, and RSS after `malloc_trim(0)` at the end.
enum SoakBench {
    static func run() throws {
        let total = Int(ProcessInfo.processInfo.environment["IMAGO_SOAK_REQUESTS"] ?? "") ?? 50_000
        let urlCount = 3_000
        let server = try LoopbackServer()
        defer { server.stop() }
        let payloads = try [
            "formats/TestImage.png", "pngsuite/png/basn6a08.png", "jpeg/reference/grayscale_square.jpg",
        ]
        .map { try DecodeBench.corpus($0) }
        for i in 0..<urlCount {
            let data = payloads[i % payloads.count]
            server.setRoute("/img/\(i)", .bytes(data, contentType: i % 3 == 2 ? "image/jpeg" : "image/png"))
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("soak-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let fdsBefore = openFileDescriptors()
        let memoryLimit = 4 << 20
        let diskLimit = 2 << 20
        var diskConfiguration = DiskCache.Configuration()
        diskConfiguration.sizeLimit = diskLimit
        let disk = try DiskCache(directory: directory, configuration: diskConfiguration)
        let memory = MemoryCache(configuration: .init(costLimit: memoryLimit, respondsToMemoryPressure: false))
        // IMAGO_SOAK_LOADER=urlsession soaks HTTPDataLoader; the default is the umbrella's CurlDataLoader.
        let usesURLSession = ProcessInfo.processInfo.environment["IMAGO_SOAK_LOADER"] == "urlsession"
        print("soak: loader \(usesURLSession ? "HTTPDataLoader (URLSession)" : "CurlDataLoader (libcurl)")")
        let loader: any DataLoading = usesURLSession ? HTTPDataLoader() : CurlDataLoader()
        var configuration = ImagePipeline.Configuration(dataLoader: loader, imageCache: memory, dataCache: disk)
        configuration.decoders = .makeDefault()
        configuration.failureCache = nil
        let pipeline = ImagePipeline(configuration: configuration)
        let urls = (0..<urlCount).map { server.url(for: "/img/\($0)") }

        let start = Date()
        let warmup = total / 10
        var rssAfterWarmup = 0
        var rssAfter10k = 0
        var maxMemoryCost = 0
        var maxDiskBytes = 0
        let outcome = Locked((ok: 0, cancelled: 0, failed: 0))
        var done = 0
        var samples: [String] = []
        var arenaSamples: [String] = []
        while done < total {
            let batch = min(1_000, total - done)
            try PipelineBench.blocking { [urls] in
                await withTaskGroup(of: Void.self) { group in
                    var rng = SystemRandomNumberGenerator()
                    for n in 0..<batch {
                        if n >= 32 { await group.next() }
                        // Skewed: a third of the requests go to the 100 hottest URLs.
                        let index =
                            Int.random(in: 0..<3, using: &rng) == 0
                            ? Int.random(in: 0..<100, using: &rng) : Int.random(in: 0..<urlCount, using: &rng)
                        let cancels = Int.random(in: 0..<10, using: &rng) == 0
                        let delay = Int.random(in: 0..<2_000, using: &rng)
                        group.addTask {
                            let task = Task { try await pipeline.image(for: urls[index]) }
                            if cancels {
                                try? await Task.sleep(for: .microseconds(delay))
                                task.cancel()
                            }
                            switch await task.result {
                            case .success: outcome.withLock { $0.ok += 1 }
                            case .failure(let error as ImagePipeline.Error) where error == .cancelled:
                                outcome.withLock { $0.cancelled += 1 }
                            case .failure(let error):
                                if error is CancellationError {
                                    outcome.withLock { $0.cancelled += 1 }
                                } else {
                                    outcome.withLock { $0.failed += 1 }
                                    print("soak: failure \(error)")
                                }
                            }
                        }
                    }
                }
            }
            done += batch
            maxMemoryCost = max(maxMemoryCost, memory.totalCost)
            maxDiskBytes = max(maxDiskBytes, disk.statistics.totalBytes)
            if done == warmup || (warmup == 0 && done == batch) { rssAfterWarmup = residentKiB() }
            if done == 10_000 { rssAfter10k = residentKiB() }
            if done % max(1, total / 10) < batch {
                samples.append(
                    "\(done / 1000)k:\(residentKiB() / 1024)/\(heapInUseKiB() / 1024)/\(openFileDescriptors())fd")
                arenaSamples.append(
                    "\(done / 1000)k:\(imago_bench_arena_bytes() >> 20)/\(imago_bench_arena_free_bytes() >> 20)")
            }
        }
        let elapsed = Date().timeIntervalSince(start)
        let rssEnd = residentKiB()
        // Background disk writes and connection teardown: give them a moment before counting descriptors.
        disk.close()
        Thread.sleep(forTimeInterval: 1)
        let fdsAfter = openFileDescriptors()
        // What of the end's RSS is memory malloc keeps free (fragmentation) rather than objects alive: the heap in
        // use, then RSS after `malloc_trim(0)` hands the arenas' free pages back.
        let (heapEnd, rssBeforeTrim) = (heapInUseKiB(), residentKiB())
        _ = imago_bench_malloc_trim()
        let rssTrimmed = residentKiB()
        let counts = outcome.withLock { $0 }
        print(
            """
            soak: \(total) requests over \(urlCount) URLs in \(String(format: "%.1f", elapsed)) s: \
            \(counts.ok) ok, \(counts.cancelled) cancelled, \(counts.failed) failed
            soak: RSS after warm-up (\(warmup) requests) \(rssAfterWarmup) KiB, at the end \(rssEnd) KiB, \
            peak \(peakKiB()) KiB
            soak: RSS after 10,000 requests \(rssAfter10k) KiB, growth since \(rssEnd - rssAfter10k) KiB
            soak: RSS / malloc heap in use (MiB) / open fds, by requests done: \(samples.joined(separator: " "))
            soak: arena bytes / free inside the arenas (MiB), by requests done: \(arenaSamples.joined(separator: " "))
            soak: after the caches closed: heap in use \(heapEnd) KiB, RSS \(rssBeforeTrim) KiB; after malloc_trim(0) \
            RSS \(rssTrimmed) KiB (\(rssTrimmed - rssAfter10k) KiB since 10,000 requests)
            soak: open fds before \(fdsBefore), after \(fdsAfter)
            soak: memory cache max cost \(maxMemoryCost) of \(memoryLimit); disk max \(maxDiskBytes) of \(diskLimit) bytes
            soak: server requests \(server.statistics.requestCounts.values.reduce(0, +)), pipeline network loads \
            \(pipeline.statistics.networkLoads), memory hits \(pipeline.statistics.memoryHits), disk hits \
            \(pipeline.statistics.diskHits)
            """)
    }

    static func openFileDescriptors() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
    }

    static func residentKiB() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { return -1 }
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? -1
    }

    /// Bytes malloc has handed out and not had back (glibc `mallinfo2`): when RSS grows but this stays flat, the
    /// growth is the allocator's free lists (fragmentation), not objects kept alive.
    static func heapInUseKiB() -> Int {
        Int(imago_bench_heap_in_use()) / 1024
    }

    static func peakKiB() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") })
        else { return -1 }
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? -1
    }
}
