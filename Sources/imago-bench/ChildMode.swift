import Foundation
import Imago

/// `imago-bench --child MODE ARGS…`: one round of Imago's side of a `peers` comparison in a fresh process, so that
/// its peak RSS is measured exactly as the Python peer's is (`ru_maxrss` of a process that did only this work).
/// Prints one JSON object like bench/peer.py does.
///
/// Modes: `cold|warm-disk|warm-memory URLS_FILE CACHE_DIR`, `rss-thumbnail FILE` and `soak-server` (the soak's
/// loopback server, see `SoakServer`). `cold-encoded` and
/// `warm-disk-encoded` are `cold` and `warm-disk` with the disk cache policy `.storeEncodedImages` (the
/// 256-px thumbnails are stored, encoded, instead of the downloads).
enum ChildMode {
    /// The side of a thumbnail in the peers' workload, and how many requests are in flight at once.
    static let thumbnail = 256
    static let concurrency = 6

    static func main(_ arguments: [String]) -> Int32 {
        if arguments.first == "soak-server" { return SoakServer.serveAsChild() }
        do {
            var figures: [String: Double]
            switch arguments.first {
            case "cold", "warm-disk", "warm-memory", "cold-encoded", "warm-disk-encoded":
                guard arguments.count == 3 else { throw Usage() }
                figures = try pipelineRound(mode: arguments[0], urlsFile: arguments[1], cacheDirectory: arguments[2])
            case "rss-thumbnail":
                guard arguments.count == 2 else { throw Usage() }
                figures = try thumbnailRSS(path: arguments[1])
            default:
                throw Usage()
            }
            figures["peak_rss_kb"] = peakRSSKiB()
            let json = try JSONSerialization.data(withJSONObject: figures, options: [.sortedKeys])
            print(String(decoding: json, as: UTF8.self))
            return 0
        } catch {
            FileHandle.standardError.write(Data("imago-bench --child: \(error)\n".utf8))
            return 1
        }
    }

    struct Usage: Error, CustomStringConvertible {
        var description: String {
            "usage: imago-bench --child cold|warm-disk|warm-memory|cold-encoded|warm-disk-encoded URLS_FILE CACHE_DIR"
                + " | rss-thumbnail FILE"
        }
    }

    /// The request every peers round makes: decode downsampled towards 256 px (JPEG DCT scaling, like Pillow's
    /// `draft()`), then resize to fit 256 × 256 (like Pillow's `thumbnail()`).
    static func request(_ source: ImageRequest.Source) -> ImageRequest {
        ImageRequest(
            source: source, processors: [.resize(width: thumbnail, height: thumbnail)],
            targetSize: PixelSize(width: thumbnail, height: thumbnail))
    }

    /// A pipeline with the defaults, a disk cache in `directory` and a memory cache of `memoryLimit` bytes.
    static func pipeline(
        directory: URL?, memoryLimit: Int, policy: ImagePipeline.DataCachePolicy = .storeOriginalData
    ) throws -> (ImagePipeline, DiskCache?) {
        var configuration = try ImagePipeline.Configuration.withDefaults()
        configuration.dataCachePolicy = policy
        let disk = try directory.map { try DiskCache(directory: $0) }
        configuration.dataCache = disk
        configuration.imageCache = MemoryCache(
            configuration: MemoryCache.Configuration(costLimit: memoryLimit, respondsToMemoryPressure: false))
        return (ImagePipeline(configuration: configuration), disk)
    }

    /// Loads every request with at most `window` in flight (a task group refilled as tasks finish).
    static func loadAll(_ pipeline: ImagePipeline, _ requests: [ImageRequest], window: Int) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            var next = 0
            func addNext() {
                guard next < requests.count else { return }
                let request = requests[next]
                next += 1
                group.addTask { _ = try await pipeline.image(for: request) }
            }
            for _ in 0..<window { addNext() }
            while try await group.next() != nil { addNext() }
        }
    }

    /// One pass over the URLs: cold (empty caches, memory limit 64 MB), warm-disk (the disk cache a cold run
    /// filled, memory empty) or warm-memory (a first untimed pass fills an unbounded memory cache, then the
    /// timed pass). The timed part ends when every write has reached the disk (Python's diskcache writes
    /// synchronously, so its timing includes them too).
    static func pipelineRound(mode: String, urlsFile: String, cacheDirectory: String) throws -> [String: Double] {
        let urls = try String(contentsOfFile: urlsFile, encoding: .utf8).split(separator: "\n").compactMap {
            URL(string: String($0))
        }
        let requests = urls.map { request(.url($0)) }
        let encoded = mode.hasSuffix("-encoded")
        let memoryLimit = mode == "warm-memory" ? 1 << 40 : 64 << 20
        // Like the peer (which opens its diskcache inside the timed part), opening the caches is timed, except
        // for warm-memory, whose timed part is the second pass.
        var t0 = now()
        var cpu0 = processCPUTime()
        let (pipeline, disk) = try pipeline(
            directory: URL(fileURLWithPath: cacheDirectory), memoryLimit: memoryLimit,
            policy: encoded ? .storeEncodedImages : .storeOriginalData)
        if mode == "warm-memory" {
            try PipelineBench.blocking { try await loadAll(pipeline, requests, window: concurrency) }
            t0 = now()
            cpu0 = processCPUTime()
        }
        try PipelineBench.blocking {
            try await loadAll(pipeline, requests, window: concurrency)
            await pipeline.waitForPendingCacheWrites()
        }
        disk?.flush()
        let seconds = now() - t0
        let cpu = processCPUTime() - cpu0
        let statistics = pipeline.statistics
        disk?.close()
        return [
            "seconds": seconds, "cpu_seconds": cpu, "count": Double(requests.count),
            "decode_seconds": statistics.decodeTime.timeInterval,
            "process_seconds": statistics.processTime.timeInterval,
            "network_loads": Double(statistics.networkLoads), "decodes": Double(statistics.decodeCount),
            "disk_hits": Double(statistics.diskHits),
            "memory_hits": Double(statistics.memoryHits),
        ]
    }

    /// CPU seconds used by all threads of this process.
    static func processCPUTime() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// Peak RSS above the baseline while one 256-px thumbnail of a large JPEG is loaded (bytes read from the
    /// file after the baseline, as the Python peer does).
    static func thumbnailRSS(path: String) throws -> [String: Double] {
        let (pipeline, _) = try pipeline(directory: nil, memoryLimit: 64 << 20)
        let baseline = peakRSSKiB()
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let request = request(.data(id: path, data))
        let image = try PipelineBench.blocking { try await pipeline.image(for: request) }
        return [
            "baseline_rss_kb": baseline, "width": Double(image.image.size.width),
            "height": Double(image.image.size.height),
        ]
    }
}
