import CBenchShims
import Foundation
import ImagoCore

/// One look at the soak's process: what RSS holds, what of it malloc has handed out, and what the caches and
/// descriptors are at that moment.
struct SoakSample {
    /// Requests finished when the sample was taken.
    var done: Int
    var rssKiB: Int
    /// Bytes malloc has handed out and not had back (`mallinfo2`), in KiB.
    var heapKiB: Int
    /// Bytes the arenas hold from the kernel, and the free bytes inside them (`mallinfo2` `arena`, `fordblks`).
    var arenaBytes: Int
    var arenaFreeBytes: Int
    var fds: Int
    var threads: Int
    /// The memory cache's cost and the disk cache's writes staged in memory at that moment.
    var memoryCost: Int
    var stagedWrites: Int

    static func take(done: Int, memory: MemoryCache, disk: DiskCache) -> SoakSample {
        SoakSample(
            done: done, rssKiB: SoakBench.residentKiB(), heapKiB: SoakBench.heapInUseKiB(),
            arenaBytes: Int(imago_bench_arena_bytes()), arenaFreeBytes: Int(imago_bench_arena_free_bytes()),
            fds: SoakBench.openFileDescriptors(), threads: SoakBench.threadCount(), memoryCost: memory.totalCost,
            stagedWrites: disk.statistics.stagedWrites)
    }

    /// `20k:RSS/heap/fds/threads` in MiB, as the soak has always printed its samples.
    var short: String {
        "\(done / 1000)k:\(rssKiB / 1024)/\(heapKiB / 1024)/\(fds)fd/\(threads)t"
    }
}

extension SoakBench {
    /// Brings the pipeline to a quiet point between two batches (no request of the soak is in flight when it is
    /// called): waits for the queued cache writes, puts the disk cache's staged writes on disk, and waits until
    /// the shared work of cancelled requests (loads and decodes nobody waits for any more) has ended. Returns how
    /// long that took.
    static func quiesce(_ pipeline: ImagePipeline, disk: DiskCache) throws -> Duration {
        let clock = ContinuousClock()
        let start = clock.now
        try PipelineBench.blocking { await pipeline.waitForPendingCacheWrites() }
        disk.flush()
        let deadline = clock.now + .seconds(10)
        while !(pipeline.graphIsIdle && pipeline.tasksInFlightCount == 0) && clock.now < deadline {
            Thread.sleep(forTimeInterval: 0.005)
        }
        // The threads that ran the last work release what they held as they return to their pools.
        Thread.sleep(forTimeInterval: 0.05)
        return clock.now - start
    }

    /// What the quiet samples say about retained memory after the first sample (at 10,000 requests): the growth
    /// to the last sample, the highest growth at any sample, and the least-squares slope through them all, in MiB
    /// per 100,000 requests (a leak shows as a slope; a band that stops rising does not), and the growth between the
    /// medians of the first and the last quarter of the samples. Also for
    /// RSS − heap in use (what the allocator keeps, plus code and stacks).
    static func retainedSummary(_ quiet: [SoakSample]) -> String {
        guard let first = quiet.first, let last = quiet.last, quiet.count > 1 else {
            return "soak: quiet samples: fewer than two (the run is too short)"
        }
        func mib(_ kib: Int) -> String { String(format: "%+.1f", Double(kib) / 1024) }
        func slope(_ value: (SoakSample) -> Int) -> String {
            let xs = quiet.map { Double($0.done) / 100_000 }
            let ys = quiet.map { Double(value($0)) / 1024 }
            let (mx, my) = (xs.reduce(0, +) / Double(xs.count), ys.reduce(0, +) / Double(ys.count))
            let sxx = zip(xs, xs).map { ($0 - mx) * ($1 - mx) }.reduce(0, +)
            let sxy = zip(xs, ys).map { ($0 - mx) * ($1 - my) }.reduce(0, +)
            return String(format: "%+.2f", sxx == 0 ? 0 : sxy / sxx)
        }
        let rssMax = quiet.map(\.rssKiB).max() ?? first.rssKiB
        // Medians over the first and the last quarter of the quiet samples (at least one each): a window that
        // neither one high sample at the start nor one at the end decides.
        let window = max(1, quiet.count / 4)
        func median(_ samples: ArraySlice<SoakSample>) -> Int {
            let sorted = samples.map(\.rssKiB).sorted()
            return sorted.count % 2 == 1
                ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
        }
        let (medianFirst, medianLast) = (median(quiet.prefix(window)), median(quiet.suffix(window)))
        let allocatorKeeps = { (s: SoakSample) in s.rssKiB - s.heapKiB }
        let fdRange = (quiet.map(\.fds).min() ?? 0, quiet.map(\.fds).max() ?? 0)
        return """
            soak: quiet RSS after \(first.done) requests \(first.rssKiB) KiB, at the end \(last.rssKiB) KiB: \
            growth \(mib(last.rssKiB - first.rssKiB)) MiB, highest \(mib(rssMax - first.rssKiB)) MiB, \
            slope \(slope(\.rssKiB)) MiB per 100,000 requests; median of the first \(window) \(medianFirst) KiB, of the \
            last \(window) \(medianLast) KiB: growth \(mib(medianLast - medianFirst)) MiB
            soak: quiet heap in use \(first.heapKiB) → \(last.heapKiB) KiB (\(mib(last.heapKiB - first.heapKiB)) MiB, \
            slope \(slope(\.heapKiB))); RSS − heap in use \(allocatorKeeps(first)) → \(allocatorKeeps(last)) KiB \
            (\(mib(allocatorKeeps(last) - allocatorKeeps(first))) MiB, slope \(slope(allocatorKeeps)))
            soak: quiet open fds \(first.fds) → \(last.fds) (band \(fdRange.0)–\(fdRange.1))
            """
    }
}
