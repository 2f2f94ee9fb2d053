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
/// bytes inside the arenas at every tenth, and RSS after `malloc_trim(0)` at the end. IMAGO_SOAK_SERVER=process
/// runs the server in a child process (the default, in this process, adds its threads' allocations to the figures),
/// IMAGO_SOAK_TRIM_SECONDS=N opts in to a `MallocTrimmer` every N seconds, IMAGO_SOAK_SETTLE=1 waits for the
/// pending cache writes before each sample, IMAGO_SOAK_DUMP_DIR=DIR saves smaps and `malloc_info` after 10,000
/// requests and at the end.
///
/// Besides those samples, taken the moment a batch ends (the caches' queued writes and the shared work of
/// cancelled requests still in memory), the soak takes a *quiet* sample every IMAGO_SOAK_QUIET_EVERY requests
/// (default 10,000; 0 turns them off): it stops issuing, waits for the queued cache writes, flushes the disk
/// cache's staged writes and waits for the cancelled requests' work to end, then samples. The growth between the
/// quiet samples is the memory the process keeps as it goes on serving (RELIABILITY.md §17).
/// IMAGO_SOAK_QUIET_TRIM=1 also trims (`MallocTrimmer.trimNow()`) at each quiet point and samples again.
enum SoakBench {
    static func run() throws {
        let total = Int(ProcessInfo.processInfo.environment["IMAGO_SOAK_REQUESTS"] ?? "") ?? 50_000
        // IMAGO_SOAK_SERVER=process: the loopback server runs in a child process (`imago-bench --child
        // soak-server`), so that the RSS and arenas measured are the pipeline's alone; by default it runs in this
        // process, as in the earlier figures (its thread per connection then allocates in this process's arenas).
        let server = try SoakServer(inProcess: ProcessInfo.processInfo.environment["IMAGO_SOAK_SERVER"] != "process")
        defer { server.stop() }
        print("soak: loopback server \(server.inProcess == nil ? "in a child process" : "in this process")")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("soak-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let fdsBefore = openFileDescriptors()
        let memoryLimit = 4 << 20
        let diskLimit = 2 << 20
        var diskConfiguration = DiskCache.Configuration()
        diskConfiguration.sizeLimit = diskLimit
        // IMAGO_SOAK_MAX_STAGED=BYTES: the disk cache's bound on writes staged in memory (default 32 MB).
        if let staged = Int(ProcessInfo.processInfo.environment["IMAGO_SOAK_MAX_STAGED"] ?? "") {
            diskConfiguration.maxStagedBytes = staged
        }
        print("soak: disk cache stages at most \(diskConfiguration.maxStagedBytes) bytes of writes")
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
        let urlCount = SoakServer.urlCount
        let urls = (0..<urlCount).map { server.url(for: "/img/\($0)") }

        // IMAGO_SOAK_TRIM_SECONDS=N: the explicit opt-in a server can make, a MallocTrimmer every N seconds.
        let trimmer = Double(ProcessInfo.processInfo.environment["IMAGO_SOAK_TRIM_SECONDS"] ?? "").map {
            MallocTrimmer(interval: .milliseconds(Int($0 * 1000)))
        }
        print(
            "soak: MallocTrimmer \(trimmer == nil ? "off" : "every \(ProcessInfo.processInfo.environment["IMAGO_SOAK_TRIM_SECONDS"] ?? "") s")"
        )

        let settles = ProcessInfo.processInfo.environment["IMAGO_SOAK_SETTLE"] == "1"
        print("soak: samples \(settles ? "after the pending cache writes" : "as the last batch ends")")
        let start = Date()
        let warmup = total / 10
        var rssAfterWarmup = 0
        var rssAfter10k = 0
        var rssEnd = 0
        var maxMemoryCost = 0
        var maxDiskBytes = 0
        let outcome = Locked((ok: 0, cancelled: 0, failed: 0))
        var done = 0
        var samples: [String] = []
        var arenaSamples: [String] = []
        let quietEvery = Int(ProcessInfo.processInfo.environment["IMAGO_SOAK_QUIET_EVERY"] ?? "") ?? 10_000
        var quiet: [SoakSample] = []
        var quietPauses: [Duration] = []
        // IMAGO_SOAK_QUIET_TRIM=1: after each quiet sample, `MallocTrimmer.trimNow()` and a second sample, so that
        // the growth of what the process cannot give back (live memory and the pages malloc cannot release) is
        // measured on its own, as a server that trims when it is idle would see it.
        let quietTrims = ProcessInfo.processInfo.environment["IMAGO_SOAK_QUIET_TRIM"] == "1"
        var quietTrimmed: [SoakSample] = []
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
            // IMAGO_SOAK_SETTLE=1: let the disk cache's queued writes (each holding its body) finish before a
            // sample, so that a writer lagging behind on a loaded machine does not show as growth.
            if settles && (done == 10_000 || done % max(1, total / 10) < batch) {
                try PipelineBench.blocking { await pipeline.waitForPendingCacheWrites() }
            }
            maxMemoryCost = max(maxMemoryCost, memory.totalCost)
            maxDiskBytes = max(maxDiskBytes, disk.statistics.totalBytes)
            if done == warmup || (warmup == 0 && done == batch) { rssAfterWarmup = residentKiB() }
            if done == 10_000 {
                rssAfter10k = residentKiB()
                dumpMemoryMaps(as: "10k")
            }
            if done % max(1, total / 10) < batch {
                let sample = SoakSample.take(done: done, memory: memory, disk: disk)
                samples.append(sample.short)
                arenaSamples.append(
                    "\(done / 1000)k:\(sample.arenaBytes >> 20)/\(sample.arenaFreeBytes >> 20)/\(sample.stagedWrites)st"
                )
            }
            // The instantaneous end, before the last quiet pause.
            if done == total { rssEnd = residentKiB() }
            // The quiet samples, from 10,000 requests on (the first one is the baseline of the growth).
            if quietEvery > 0 && done >= min(10_000, total) && done % quietEvery < batch {
                quietPauses.append(try quiesce(pipeline, disk: disk))
                let sample = SoakSample.take(done: done, memory: memory, disk: disk)
                quiet.append(sample)
                if quiet.count == 1 { dumpMemoryMaps(as: "10k-quiet") }
                if quietTrims {
                    MallocTrimmer.trimNow()
                    quietTrimmed.append(SoakSample.take(done: done, memory: memory, disk: disk))
                }
            }
        }
        let elapsed = Date().timeIntervalSince(start)
        trimmer?.cancel()
        // Background disk writes and connection teardown: give them a moment before counting descriptors.
        disk.close()
        Thread.sleep(forTimeInterval: 1)
        let fdsAfter = openFileDescriptors()
        // What of the end's RSS is memory malloc keeps free (fragmentation) rather than objects alive: the heap in
        // use, then RSS after `malloc_trim(0)` hands the arenas' free pages back.
        let (heapEnd, rssBeforeTrim) = (heapInUseKiB(), residentKiB())
        dumpMemoryMaps(as: "end")
        _ = MallocTrimmer.trimNow()
        let rssTrimmed = residentKiB()
        let counts = outcome.withLock { $0 }
        print(
            """
            soak: \(total) requests over \(urlCount) URLs in \(String(format: "%.1f", elapsed)) s: \
            \(counts.ok) ok, \(counts.cancelled) cancelled, \(counts.failed) failed
            soak: RSS after warm-up (\(warmup) requests) \(rssAfterWarmup) KiB, at the end \(rssEnd) KiB, \
            peak \(peakKiB()) KiB
            soak: RSS after 10,000 requests \(rssAfter10k) KiB, growth since \(rssEnd - rssAfter10k) KiB
            soak: RSS / malloc heap in use (MiB) / open fds / threads, by requests done: \(samples.joined(separator: " "))
            soak: arena bytes / free inside the arenas (MiB) / staged disk writes, by requests done: \(arenaSamples.joined(separator: " "))
            soak: quiet samples, RSS / heap in use (MiB) / open fds / threads: \(quiet.map(\.short).joined(separator: " "))
            soak: quiet samples, memory-cache cost (KiB) / arena / free in arenas (MiB): \(quiet.map { "\($0.done / 1000)k:\($0.memoryCost >> 10)/\($0.arenaBytes >> 20)/\($0.arenaFreeBytes >> 20)" }.joined(separator: " "))
            soak: quiet pauses \(quietPauses.count), longest \(quietPauses.max().map { "\($0)" } ?? "none")
            \(retainedSummary(quiet))
            \(quietTrims ? "soak: trimmed at each quiet point, RSS / heap in use (MiB) / open fds / threads: \(quietTrimmed.map(\.short).joined(separator: " "))\n\(retainedSummary(quietTrimmed).replacingOccurrences(of: "soak: quiet", with: "soak: quiet, trimmed,"))" : "soak: quiet samples not trimmed")
            soak: after the caches closed: heap in use \(heapEnd) KiB, RSS \(rssBeforeTrim) KiB; after malloc_trim(0) \
            RSS \(rssTrimmed) KiB (\(rssTrimmed - rssAfter10k) KiB since 10,000 requests)
            soak: open fds before \(fdsBefore), after \(fdsAfter)
            soak: trims \(trimmer.map { "\($0.statistics)" } ?? "none")
            soak: memory cache max cost \(maxMemoryCost) of \(memoryLimit); disk max \(maxDiskBytes) of \(diskLimit) bytes
            soak: server requests \(server.requestCount.map(String.init) ?? "not counted (child process)"), \
            pipeline network loads \
            \(pipeline.statistics.networkLoads), memory hits \(pipeline.statistics.memoryHits), disk hits \
            \(pipeline.statistics.diskHits)
            """)
    }

    /// With IMAGO_SOAK_DUMP_DIR set, copies `/proc/self/smaps` (which mappings hold the resident pages: the main
    /// heap, the thread arenas' 64 MiB heaps, thread stacks, mmapped blocks) and glibc's `malloc_info` (every
    /// arena's size and free chunks) into that folder as `smaps-<tag>` and `malloc-<tag>.xml`.
    static func dumpMemoryMaps(as tag: String) {
        guard let directory = ProcessInfo.processInfo.environment["IMAGO_SOAK_DUMP_DIR"] else { return }
        // Read to the end: /proc files report a size of 0, so a sized read would stop after the first page.
        if let maps = try? FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/self/smaps")).readToEnd() {
            _ = FileManager.default.createFile(atPath: "\(directory)/smaps-\(tag)", contents: maps)
        }
        _ = imago_bench_malloc_info("\(directory)/malloc-\(tag).xml")
    }

    static func threadCount() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Threads:") })
        else { return -1 }
        return Int(line.split(separator: "\t").last?.trimmingCharacters(in: .whitespaces) ?? "") ?? -1
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
