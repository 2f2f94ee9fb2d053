import Foundation
import Imago
import ImagoCore
import ImagoRedis
import ImagoTesting

#if canImport(Glibc)
    import Glibc
#endif
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

// imago-redis-bench: the shared tier's rows of issue 21, each measured side by side in one run (make bench-redis).
//   get-200k   a 200 KB get through RedisCache vs redis-py's GET of the same key       (goal ≤ 0.5)
//   warm       a new process loading N images: warm Redis + empty local caches vs warm local disk (goal ≤ 1.5)
//   fleet      3 imago serve processes, 300 requests over 30 images: origin fetches = 30
// Arguments: --python PATH (a Python with redis-py), --corpus DIR (PNG/JPEG images), --imago PATH (release imago).
// --floor PATH: also time bench/redis-get-floor.c (compiled) on the same key, the get row's transport floor.
// --get-profile-seconds S: the get row only times RedisCache's default gets for S seconds (for perf and strace).
// Child mode: --child-load {redis URL|disk DIR} CACHE_DIR URL... prints the milliseconds the loads took.

func argument(_ name: String) -> String? {
    let args = CommandLine.arguments
    guard let i = args.firstIndex(of: name), i + 1 < args.count else { return nil }
    return args[i + 1]
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? .nan : sorted[sorted.count / 2]
}

func milliseconds(_ d: Duration) -> Double {
    Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15
}

func runChild(_ args: [String]) async -> Int32 {
    // --child-load MODE ARG CACHE_DIR URL...
    guard args.count >= 4 else { return 2 }
    let (mode, value, cacheDir) = (args[0], args[1], URL(fileURLWithPath: args[2]))
    let urls = args.dropFirst(3).compactMap(URL.init(string:))
    guard var configuration = try? ImagePipeline.Configuration.withDefaults(diskCacheDirectory: cacheDir) else {
        return 1
    }
    var shared: RedisCache?
    if mode == "redis" {
        shared = try? RedisCache(urls: [value])
        configuration.sharedCache = shared
    }
    let pipeline = ImagePipeline(configuration: configuration)
    let started = ContinuousClock.now
    var failures = 0
    for url in urls {
        if (try? await pipeline.image(for: ImageRequest(url: url))) == nil { failures += 1 }
    }
    let elapsed = ContinuousClock.now - started
    let stats = pipeline.statistics
    print("\(milliseconds(elapsed)) \(failures) \(stats.networkLoads) \(stats.sharedCacheHits) \(stats.diskHits)")
    await pipeline.waitForPendingCacheWrites()
    (configuration.dataCache as? DiskCache)?.close()
    shared?.close()
    return 0
}

func run(_ executable: String, _ args: [String]) throws -> String {
    try ImagoTesting.run(executable, args).trimmedOutput
}

func scratch(_ name: String) -> URL {
    let url = URL(fileURLWithPath: "/tmp").appendingPathComponent(
        "imago-redis-bench-\(name)-\(UUID().uuidString.prefix(6))")
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

func benchGet(python: String, script: String, floor: String?) async throws {
    let server = try RedisServer(tcp: true)
    let cache = try RedisCache(urls: [server.url])
    defer { cache.close() }
    var bytes = Data(count: 200 * 1024)
    for i in bytes.indices { bytes[i] = UInt8(truncatingIfNeeded: i &* 2_654_435_761 >> 13) }
    try await cache.store(
        DataCacheEntry(data: bytes, metadata: DataCacheMetadata()), for: "bench-200k", timeToLive: nil)
    let key = try server.cli(["KEYS", "imago:v:*"])
    if let seconds = argument("--get-profile-seconds").flatMap(Double.init) {
        // Profiling mode (perf record / strace -c on this process): only the default gets, for `seconds`.
        let until = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        var runs: [Double] = []
        var switches: [Double] = []
        let cpuBefore = processorMicroseconds()
        var gets = 0
        while ContinuousClock.now < until {
            gets += 2000
            let round = try await medianGet(cache, rounds: 2000, size: bytes.count)
            runs.append(round.micros)
            switches.append(round.switches)
        }
        print(
            String(
                format:
                    "get-200k      profile: %d × 2000 gets, median %.1f µs, context switches per get %.2f,"
                    + " this process's CPU per get %.1f µs",
                runs.count, median(runs), median(switches), (processorMicroseconds() - cpuBefore) / Double(gets)))
        return
    }
    // The same gets with every reply waited for on the node's queue (`inlineReplyWait` zero: the path before
    // replies were read on the calling thread), interleaved round by round with the default ones.
    var queuedConfiguration = try RedisCache.Configuration(urls: [server.url])
    queuedConfiguration.inlineReplyWait = .zero
    let queued = RedisCache(configuration: queuedConfiguration)
    defer { queued.close() }
    let rounds = 2000
    var medians: [Double] = []
    var queuedMedians: [Double] = []
    var switches: [Double] = []
    var queuedSwitches: [Double] = []
    for _ in 0..<5 {
        let inline = try await medianGet(cache, rounds: rounds, size: bytes.count)
        let onQueue = try await medianGet(queued, rounds: rounds, size: bytes.count)
        medians.append(inline.micros)
        switches.append(inline.switches)
        queuedMedians.append(onQueue.micros)
        queuedSwitches.append(onQueue.switches)
    }
    let ours = median(medians)
    let ourQueued = median(queuedMedians)
    // The payload check every read pays (the issue requires it), and a copy of the same bytes, for scale.
    var checksumTimes: [Double] = []
    var copyTimes: [Double] = []
    var sink: UInt64 = 0
    let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 64)
    defer { copy.deallocate() }
    bytes.withUnsafeBytes { buffer in
        for _ in 0..<2000 {
            let started = ContinuousClock.now
            sink &+= LaneChecksum.hash(buffer)
            checksumTimes.append(milliseconds(ContinuousClock.now - started) * 1000)
            let copied = ContinuousClock.now
            copy.copyMemory(from: buffer)
            copyTimes.append(milliseconds(ContinuousClock.now - copied) * 1000)
        }
    }
    let checksum = median(checksumTimes)
    let copied = median(copyTimes)
    let peerText = try run(python, [script, "\(server.port ?? 0)", key, "\(rounds)"])
    let peer = Double(peerText) ?? .nan
    // The transport floor: a C client doing only write, poll and reads (bench/redis-get-floor.c), same key.
    let floorText = try floor.map {
        try run($0, ["\(server.port ?? 0)", key, "\(rounds)", "\(cache.configuration.maximumValueSize)"])
    }
    print(
        String(
            format: "get-200k      imago RedisCache %.1f µs   redis-py GET %.1f µs   ratio %.2f (goal ≤ 0.5)",
            ours, peer, ours / peer))
    if let floorText, let floorMicros = Double(floorText) {
        print(
            String(
                format:
                    "              C transport floor (write, poll, reads; bench/redis-get-floor.c) %.1f µs:"
                    + " imago %.1f µs above it, redis-py %.1f µs",
                floorMicros, ours - floorMicros, peer - floorMicros))
    }
    print(
        String(
            format:
                "              every reply on the node's queue (inlineReplyWait 0) %.1f µs   ratio %.2f;"
                + " context switches per get %.2f (default) vs %.2f (queue)",
            ourQueued, ourQueued / peer, median(switches), median(queuedSwitches)))
    print(
        String(
            format:
                "              LaneChecksum of the 200 KB payload %.1f µs (%.1f GB/s); memcpy %.1f µs (%.1f GB/s) [%llu]",
            checksum, Double(bytes.count) / checksum / 1000, copied, Double(bytes.count) / copied / 1000,
            sink & 1))
}

/// The median time of `rounds` gets of the 200 KB key, in µs, and this process's context switches per get
/// (voluntary and involuntary, every thread: `getrusage`).
func medianGet(_ cache: RedisCache, rounds: Int, size: Int) async throws -> (micros: Double, switches: Double) {
    var times: [Double] = []
    times.reserveCapacity(rounds)
    let before = contextSwitches()
    for _ in 0..<rounds {
        let started = ContinuousClock.now
        guard let entry = try await cache.entry(for: "bench-200k"), entry.data.count == size else {
            throw BenchError("get-200k: the value did not come back")
        }
        times.append(milliseconds(ContinuousClock.now - started) * 1000)
    }
    return (median(times), Double(contextSwitches() - before) / Double(rounds))
}

/// This process's CPU time so far (user and system, every thread), in µs.
func processorMicroseconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e6
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec)
}

/// This process's context switches so far, every thread.
func contextSwitches() -> Int {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return usage.ru_nvcsw + usage.ru_nivcsw
}

func benchWarm(corpus: URL, self executable: String) async throws {
    let server = try RedisServer(tcp: true)
    let origin = try LoopbackServer()
    defer { origin.stop() }
    let files = try FileManager.default.contentsOfDirectory(atPath: corpus.path).filter {
        $0.hasSuffix(".png") || $0.hasSuffix(".jpg")
    }.sorted()
    for file in files {
        origin.setRoute("/\(file)", .bytes(try Data(contentsOf: corpus.appendingPathComponent(file))))
    }
    let urls = files.map { origin.url(for: "/\($0)").absoluteString }
    // Warm Redis and one local disk cache from the origin (children, as the measured runs).
    let warmDisk = scratch("disk")
    _ = try run(executable, ["--child-load", "redis", server.url, warmDisk.path] + urls)
    var redisTimes: [Double] = []
    var diskTimes: [Double] = []
    var lastRedis = ""
    var lastDisk = ""
    for _ in 0..<5 {
        let empty = scratch("empty")
        lastRedis = try run(executable, ["--child-load", "redis", server.url, empty.path] + urls)
        try? FileManager.default.removeItem(at: empty)
        lastDisk = try run(executable, ["--child-load", "disk", "-", warmDisk.path] + urls)
        redisTimes.append(Double(lastRedis.split(separator: " ").first ?? "") ?? .nan)
        diskTimes.append(Double(lastDisk.split(separator: " ").first ?? "") ?? .nan)
    }
    try? FileManager.default.removeItem(at: warmDisk)
    let (r, d) = (median(redisTimes), median(diskTimes))
    print(
        String(
            format:
                "warm          %d images, new process: from Redis %.0f ms   from local disk %.0f ms   ratio %.2f (goal ≤ 1.5)",
            urls.count, r, d, r / d))
    print("              (ms failures networkLoads sharedHits diskHits) redis: \(lastRedis)  disk: \(lastDisk)")
}

let fleetExtra = argument("--fleet-redis-timeout").map { ["--redis-timeout", $0] } ?? []

func benchFleet(corpus: URL, imago: String) async throws {
    let nodes = [try RedisServer(), try RedisServer()]
    let origin = try LoopbackServer()
    defer { origin.stop() }
    let files = try FileManager.default.contentsOfDirectory(atPath: corpus.path).filter { $0.hasSuffix(".png") }
        .sorted()
    let images = (0..<30).map { i in (path: "/f\(i).png", file: files[i % files.count], index: i) }
    for image in images {
        // Distinct sources (30 paths) over the corpus files.
        origin.setRoute(
            image.path,
            .bytes(try Data(contentsOf: corpus.appendingPathComponent(image.file)), contentType: "image/png"))
    }
    var processes: [(Process, Int)] = []
    let root = scratch("fleet")
    for i in 0..<3 {
        let dir = root.appendingPathComponent("s\(i)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let stderrPath = dir.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: stderrPath.path, contents: nil)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: imago)
        p.arguments =
            ["serve", "--listen", "127.0.0.1:0", "--unsigned", "--allow-private", "--cache-dir", dir.path]
            + nodes.flatMap { ["--redis", $0.url] } + fleetExtra
        p.standardOutput = FileHandle.nullDevice
        p.standardError = try FileHandle(forWritingTo: stderrPath)
        try p.run()
        var port = 0
        for _ in 0..<2000 where port == 0 {
            let text = (try? String(contentsOf: stderrPath, encoding: .utf8)) ?? ""
            if let range = text.range(of: "listening on http://127.0.0.1:") {
                port = Int(text[range.upperBound...].prefix { $0.isNumber }) ?? 0
            }
            usleep(10_000)
        }
        processes.append((p, port))
    }
    defer {
        for (p, _) in processes where p.isRunning {
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: root)
    }
    let ports = processes.map(\.1)
    let started = ContinuousClock.now
    let ok = await withTaskGroup(of: Bool.self) { group in
        for round in 0..<10 {
            for image in images {
                let port = ports[(image.index + round) % 3]
                let source = origin.url(for: image.path).absoluteString
                group.addTask {
                    let url = URL(string: "http://127.0.0.1:\(port)/_/rs:fit:256:256/plain/\(source)")!
                    var request = URLRequest(url: url)
                    request.timeoutInterval = 60
                    guard let (_, response) = try? await URLSession.shared.data(for: request) else { return false }
                    return (response as? HTTPURLResponse)?.statusCode == 200
                }
            }
        }
        return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
    }
    let elapsed = ContinuousClock.now - started
    // The servers must outlive the requests: ARC may release `nodes` after its last use (killing Redis).
    withExtendedLifetime(nodes) {}
    let fetches = images.reduce(0) { $0 + origin.requestCount(for: $1.path) }
    print(
        String(
            format:
                "fleet         3 imago serve, 2 Redis nodes, 300 requests over 30 images: %d × 200, origin fetches %d (goal 30), %.2f s",
            ok, fetches, milliseconds(elapsed) / 1000))
}

if let index = CommandLine.arguments.firstIndex(of: "--child-load") {
    exit(await runChild(Array(CommandLine.arguments[(index + 1)...])))
}
let executable = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL.path
let wanted = Set(CommandLine.arguments.dropFirst().filter { ["get-200k", "warm", "fleet"].contains($0) })
let corpus = URL(fileURLWithPath: argument("--corpus") ?? "../shared/corpus/kodak")
let imago =
    argument("--imago")
    ?? URL(fileURLWithPath: executable).deletingLastPathComponent().appendingPathComponent("imago").path
print(
    "imago-redis-bench (release) on \(ProcessInfo.processInfo.activeProcessorCount) cores, load \(String((try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.prefix(14) ?? ""))"
)
do {
    if wanted.isEmpty || wanted.contains("get-200k") {
        try await benchGet(
            python: argument("--python") ?? "python3", script: argument("--script") ?? "bench/redis-get.py",
            floor: argument("--floor"))
    }
    if wanted.isEmpty || wanted.contains("warm") { try await benchWarm(corpus: corpus, self: executable) }
    if wanted.isEmpty || wanted.contains("fleet") { try await benchFleet(corpus: corpus, imago: imago) }
} catch {
    print("imago-redis-bench: \(error)")
    exit(1)
}
