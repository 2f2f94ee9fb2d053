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
        // One image per key, as a real cache holds: a hit then retains an image the other thread is not also
        // retaining at that moment (with one image shared by all keys, its reference count's line moves between
        // the cores on every hit, for both contenders).
        let images = try (0..<keyCount).map { _ in ImageContainer(image: try PixelBuffer(width: 16, height: 16)) }

        let cache = MemoryCache(
            configuration: .init(costLimit: 1 << 30, countLimit: 10_000, respondsToMemoryPressure: false))
        for key in stored { cache.store(image, for: ImageCacheKey(key)) }
        let dictionary = LockedDictionary(Dictionary(uniqueKeysWithValues: stored.map { ($0, image) }))
        let cacheOfDistinct = MemoryCache(
            configuration: .init(costLimit: 1 << 30, countLimit: 10_000, respondsToMemoryPressure: false))
        for (key, image) in zip(stored, images) { cacheOfDistinct.store(image, for: ImageCacheKey(key)) }
        let dictionaryOfDistinct = LockedDictionary(Dictionary(uniqueKeysWithValues: zip(stored, images).map { $0 }))
        let nsCache = SharedNSCache(lookups: lookups.map { NSString(string: $0) })
        nsCache.cache.countLimit = 10_000
        for key in stored { nsCache.cache.setObject(Box(image), forKey: NSString(string: key)) }

        // One thread's loop for each contender; each returns a checksum so nothing is optimised away. Each lookup is
        // written out in its loop on purpose: a shared loop taking the lookup as a closure calls it indirectly (the
        // compiler does not specialise it), adding a call to every lookup of every side. Loops that differ only in
        // the cache or dictionary they read come from one function.
        let imagoPrebuilt: @Sendable (Int) -> Int = { offset in
            var sum = 0
            var index = offset % keyCount
            for _ in 0..<lookupsPerRound {
                sum &+= cache.image(for: prebuiltKeys[index])?.image.width ?? 0
                index = index == keyCount - 1 ? 0 : index + 1
            }
            return sum
        }
        let imagoFromString = fromStringLoop(cache, lookups)
        let imagoDistinctFromString = fromStringLoop(cacheOfDistinct, lookups)
        let dictionaryLookup = dictionaryLoop(dictionary, lookups)
        let dictionaryDistinctLookup = dictionaryLoop(dictionaryOfDistinct, lookups)
        let nsCacheLookup: @Sendable (Int) -> Int = { offset in
            var sum = 0
            var index = offset % keyCount
            for _ in 0..<lookupsPerRound {
                sum &+= nsCache.cache.object(forKey: nsCache.lookups[index])?.image.image.width ?? 0
                index = index == keyCount - 1 ? 0 : index + 1
            }
            return sum
        }

        // IMAGO_BENCH_MEMCACHE_THREADS=2 runs only the 2-thread rows (for profiling one case);
        // IMAGO_BENCH_MEMCACHE_ONLY=text only the rows whose name contains the text (e.g. "Mutex");
        // IMAGO_BENCH_PAIRS=1 prints every contended round pair with the hand-over measured around it.
        let threadCounts =
            ProcessInfo.processInfo.environment["IMAGO_BENCH_MEMCACHE_THREADS"].flatMap(Int.init)
            .map { [$0] } ?? [1, 2]
        let only = ProcessInfo.processInfo.environment["IMAGO_BENCH_MEMCACHE_ONLY"]
        for threads in threadCounts {
            let contenders: [(String, Double, String, @Sendable (Int) -> Int, @Sendable (Int) -> Int)] = [
                (
                    "memcache hit, prebuilt key vs Mutex<[String:V]>", 1.2, "Mutex<[String: ImageContainer]>",
                    imagoPrebuilt, dictionaryLookup
                ),
                (
                    "memcache hit, key from String vs Mutex<[String:V]>", 1.2, "Mutex<[String: ImageContainer]>",
                    imagoFromString, dictionaryLookup
                ),
                (
                    "memcache hit, key from String, one image per key vs Mutex<[String:V]>", 1.2,
                    "Mutex<[String: ImageContainer]>", imagoDistinctFromString, dictionaryDistinctLookup
                ),
                (
                    "memcache hit, prebuilt key vs NSCache", 0.125, "NSCache<NSString, Box>", imagoPrebuilt,
                    nsCacheLookup
                ),
                (
                    "memcache hit, key from String vs NSCache", 0.125, "NSCache<NSString, Box>", imagoFromString,
                    nsCacheLookup
                ),
            ]
            for (name, goal, peerName, imago, peer) in contenders where only.map({ name.contains($0) }) ?? true {
                if threads == 1 {
                    compare(
                        "\(name) (1 thread)", unit: "ns/op", goal: goal, peerName: peerName, rounds: rounds,
                        imago: { measure(1, imago) }, peer: { measure(1, peer) })
                } else {
                    compareByPlacement(
                        name, threads: threads, goal: goal, peerName: peerName, imago: imago, peer: peer)
                }
            }
        }
        for cache in [cache, cacheOfDistinct] {
            let statistics = cache.statistics
            precondition(statistics.misses == 0 && statistics.currentCount == keyCount, "every lookup must hit")
        }
    }

    /// One thread's loop over `cache`, each lookup with a key made from the String (as a request makes it).
    static func fromStringLoop(_ cache: MemoryCache, _ lookups: [String]) -> @Sendable (Int) -> Int {
        { offset in
            var sum = 0
            var index = offset % keyCount
            for _ in 0..<lookupsPerRound {
                sum &+= cache.image(for: ImageCacheKey(lookups[index]))?.image.width ?? 0
                index = index == keyCount - 1 ? 0 : index + 1
            }
            return sum
        }
    }

    /// One thread's loop over `dictionary`, each lookup under its mutex.
    static func dictionaryLoop(_ dictionary: LockedDictionary, _ lookups: [String]) -> @Sendable (Int) -> Int {
        { offset in
            var sum = 0
            var index = offset % keyCount
            for _ in 0..<lookupsPerRound {
                sum &+= dictionary.mutex.withLock { $0[lookups[index]] }?.image.width ?? 0
                index = index == keyCount - 1 ? 0 : index + 1
            }
            return sum
        }
    }

    /// The contended rows, sorted by where the two threads ran. A contended hit costs about one cache-line
    /// hand-over per line it writes, and this machine's hand-over time changes five-fold as the hypervisor moves
    /// its vCPUs (``CoreHandoff``), so one median over rounds from both placements measures the placement mix
    /// more than either side. Each round pair (A then B) is bracketed by two hand-over measurements and counted
    /// under its placement; pairs that straddle a change are dropped, and a placement seen in fewer than three
    /// pairs is not reported.
    static func compareByPlacement(
        _ name: String, threads: Int, goal: Double, peerName: String, imago: @escaping @Sendable (Int) -> Int,
        peer: @escaping @Sendable (Int) -> Int
    ) {
        _ = measure(threads, imago)
        _ = measure(threads, peer)
        var pairs: [CoreHandoff.Placement: [(imago: Double, peer: Double, handoff: Double)]] = [:]
        let printsPairs = ProcessInfo.processInfo.environment["IMAGO_BENCH_PAIRS"] != nil
        for _ in 0..<placementRounds {
            let before = CoreHandoff.nanoseconds()
            let a = measure(threads, imago)
            let b = measure(threads, peer)
            let after = CoreHandoff.nanoseconds()
            pairs[CoreHandoff.placement(before: before, after: after), default: []].append((a, b, (before + after) / 2))
            if printsPairs {
                print(String(format: "    pair %.0f/%.0f ns: %.1f vs %.1f = %.3f", before, after, a, b, a / b))
            }
        }
        let handoffs = pairs.mapValues { found in median(found.map(\.handoff)) }
        print(
            "  \(name), \(threads) threads: \(placementRounds) round pairs: "
                + [CoreHandoff.Placement.near, .far, .mixed].map { placement in
                    let handoff = handoffs[placement].map { String(format: " (hand-over %.0f ns)", $0) } ?? ""
                    return "\(pairs[placement]?.count ?? 0) \(placement.rawValue)\(handoff)"
                }.joined(separator: ", "))
        for placement in [CoreHandoff.Placement.near, .far] {
            guard let found = pairs[placement], let handoff = handoffs[placement], found.count >= 3 else { continue }
            record(
                "\(name) (\(threads) threads, \(placement.rawValue) cores, ns/op per thread)", unit: "ns/op",
                goal: goal, peerName: peerName, imago: median(found.map(\.imago)), peer: median(found.map(\.peer)),
                note: "\(found.count) of \(placementRounds) rounds, line hand-over \(Int(handoff.rounded())) ns")
        }
    }

    /// Round pairs for each contended row: enough that a placement seen for a third of the run still gets
    /// several pairs.
    static let placementRounds = 15

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
