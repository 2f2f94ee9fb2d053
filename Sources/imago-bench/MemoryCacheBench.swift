import Foundation
import ImagoCore
import Synchronization

// memcache: the cost of a memory-cache hit, the pipeline's fast path, against a bare locked dictionary (the floor:
// one hash of the URL, one lock) and Foundation's NSCache. 1,000 keys of 55-byte URLs, all resident; lookups use
// fresh copies of the key strings (as a request would), so equality really compares bytes.
enum MemoryCacheBench {
    static let keyCount = 1000
    static let lookupsPerRound = 200_000
    // More rounds than the default 7: the medians must hold on a machine shared by several builds.
    static let rounds = 11

    /// The value type NSCache needs (a class).
    final class Box: @unchecked Sendable {  // immutable after init
        let image: ImageContainer
        init(_ image: ImageContainer) { self.image = image }
    }

    /// `Mutex<[String: ImageContainer]>`, boxed so closures can share it.
    final class LockedDictionary: Sendable {
        let mutex: Mutex<[String: ImageContainer]>
        init(_ dictionary: [String: ImageContainer]) { mutex = Mutex(dictionary) }
    }

    /// NSCache, shared across threads (it locks internally).
    final class SharedNSCache: @unchecked Sendable {  // NSCache is thread-safe; `lookups` is never mutated
        let cache = NSCache<NSString, Box>()
        let lookups: [NSString]
        init(lookups: [NSString]) { self.lookups = lookups }
    }

    static func url(_ index: Int) -> String {
        String(format: "https://images.example.com/photos/24/%08d-large.jpg", index)
    }

    static func run() throws {
        let stored = (0..<keyCount).map(url)
        precondition(stored.allSatisfy { $0.utf8.count == 55 })
        let lookups = (0..<keyCount).map(url)  // separate storage from the stored keys
        let prebuiltKeys = lookups.map(ImageCacheKey.init)
        let image = ImageContainer(image: try PixelBuffer(width: 16, height: 16))

        let cache = MemoryCache(
            configuration: .init(costLimit: 1 << 30, countLimit: 10_000, respondsToMemoryPressure: false))
        for key in stored { cache.store(image, for: ImageCacheKey(key)) }
        let dictionary = LockedDictionary(Dictionary(uniqueKeysWithValues: stored.map { ($0, image) }))
        let nsCache = SharedNSCache(lookups: lookups.map { NSString(string: $0) })
        nsCache.cache.countLimit = 10_000
        for key in stored { nsCache.cache.setObject(Box(image), forKey: NSString(string: key)) }

        // One thread's loop for each contender; each returns a checksum so nothing is optimised away.
        let imagoPrebuilt: @Sendable (Int) -> Int = { offset in
            var sum = 0
            var index = offset % keyCount
            for _ in 0..<lookupsPerRound {
                sum &+= cache.image(for: prebuiltKeys[index])?.image.width ?? 0
                index = index == keyCount - 1 ? 0 : index + 1
            }
            return sum
        }
        let imagoFromString: @Sendable (Int) -> Int = { offset in
            var sum = 0
            var index = offset % keyCount
            for _ in 0..<lookupsPerRound {
                sum &+= cache.image(for: ImageCacheKey(lookups[index]))?.image.width ?? 0
                index = index == keyCount - 1 ? 0 : index + 1
            }
            return sum
        }
        let dictionaryLookup: @Sendable (Int) -> Int = { offset in
            var sum = 0
            var index = offset % keyCount
            for _ in 0..<lookupsPerRound {
                sum &+= dictionary.mutex.withLock { $0[lookups[index]] }?.image.width ?? 0
                index = index == keyCount - 1 ? 0 : index + 1
            }
            return sum
        }
        let nsCacheLookup: @Sendable (Int) -> Int = { offset in
            var sum = 0
            var index = offset % keyCount
            for _ in 0..<lookupsPerRound {
                sum &+= nsCache.cache.object(forKey: nsCache.lookups[index])?.image.image.width ?? 0
                index = index == keyCount - 1 ? 0 : index + 1
            }
            return sum
        }

        // IMAGO_BENCH_MEMCACHE_THREADS=2 runs only the 2-thread rows (for profiling one case).
        let threadCounts =
            ProcessInfo.processInfo.environment["IMAGO_BENCH_MEMCACHE_THREADS"].flatMap(Int.init)
            .map { [$0] } ?? [1, 2]
        for threads in threadCounts {
            let suffix = threads == 1 ? "1 thread" : "\(threads) threads, ns/op per thread"
            compare(
                "memcache hit, prebuilt key vs Mutex<[String:V]> (\(suffix))", unit: "ns/op", goal: 1.2,
                peerName: "Mutex<[String: ImageContainer]>", rounds: rounds,
                imago: { measure(threads, imagoPrebuilt) }, peer: { measure(threads, dictionaryLookup) })
            compare(
                "memcache hit, key from String vs Mutex<[String:V]> (\(suffix))", unit: "ns/op", goal: 1.2,
                peerName: "Mutex<[String: ImageContainer]>", rounds: rounds,
                imago: { measure(threads, imagoFromString) }, peer: { measure(threads, dictionaryLookup) })
            compare(
                "memcache hit, prebuilt key vs NSCache (\(suffix))", unit: "ns/op", goal: 0.125,
                peerName: "NSCache<NSString, Box>", rounds: rounds,
                imago: { measure(threads, imagoPrebuilt) }, peer: { measure(threads, nsCacheLookup) })
            compare(
                "memcache hit, key from String vs NSCache (\(suffix))", unit: "ns/op", goal: 0.125,
                peerName: "NSCache<NSString, Box>", rounds: rounds,
                imago: { measure(threads, imagoFromString) }, peer: { measure(threads, nsCacheLookup) })
        }
        let statistics = cache.statistics
        precondition(statistics.misses == 0 && statistics.currentCount == keyCount, "every lookup must hit")
    }

    /// Runs `body` on `threads` threads at once; returns wall time ÷ lookups per thread, in ns.
    static func measure(_ threads: Int, _ body: @escaping @Sendable (Int) -> Int) -> Double {
        let checksum = Mutex(0)
        let elapsed = time {
            DispatchQueue.concurrentPerform(iterations: threads) { thread in
                let sum = body(thread * 500)
                checksum.withLock { $0 &+= sum }
            }
        }
        precondition(checksum.withLock { $0 } == threads * lookupsPerRound * 16, "every lookup must hit")
        return elapsed * 1e9 / Double(lookupsPerRound)
    }
}
