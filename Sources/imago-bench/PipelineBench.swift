import Dispatch
import Foundation
import ImagoCore
import ImagoTesting

/// The pipeline's own costs: the memory-hit path against a bare memory-cache lookup, and coalescing of a burst
/// of identical requests against one request alone.
enum PipelineBench {
    static func run() throws {
        // IMAGO_BENCH_BURST_REPEAT=N runs only the burst, N times, and prints its median (for profiling it).
        if let repeats = ProcessInfo.processInfo.environment["IMAGO_BENCH_BURST_REPEAT"].flatMap(Int.init) {
            return try burst(repeats: repeats)
        }
        try memoryHit()
        try burst()
        try PipelineGalleryBench.run()
    }

    /// Runs `body` on the cooperative pool and waits for it (the harness closures are synchronous).
    static func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
        let result = Locked<Result<T, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let value: Result<T, any Error>
            do { value = .success(try await body()) } catch { value = .failure(error) }
            result.withLock { $0 = value }
            done.signal()
        }
        done.wait()
        return try result.withLock { $0 }!.get()
    }

    static func memoryHit() throws {
        let cache = MemoryCache()
        var configuration = ImagePipeline.Configuration(dataLoader: MockDataLoader(), imageCache: cache)
        configuration.decoders = ImageDecoderRegistry([MockImageDecoder()])
        let pipeline = ImagePipeline(configuration: configuration)
        let request = ImageRequest(
            url: URL(string: "https://images.example.com/photos/2024/06/IMG_0042.jpg?w=512&h=512")!)
        let image = ImageContainer(
            image: try PixelBuffer.filled(size: PixelSize(width: 64, height: 64), color: RGBA(r: 1, g: 2, b: 3, a: 255))
        )
        cache.store(image, for: request.imageCacheKey)
        let key = request.imageCacheKey
        let n = 200_000

        try compare(
            "pipeline: memory hit, async image(for:) vs bare cache lookup", unit: "ns/op", goal: nil,
            peerName: "MemoryCache.image(for:) with a prebuilt key",
            imago: {
                try blocking {
                    let t0 = now()
                    for _ in 0..<n { _ = try await pipeline.image(for: request) }
                    return (now() - t0) * 1e9 / Double(n)
                }
            },
            peer: { nsPerOp(n) { _ = cache.image(for: key) } })

        compare(
            "pipeline: memory hit, sync cachedImage(for:) vs bare cache lookup", unit: "ns/op", goal: nil,
            peerName: "MemoryCache.image(for:) with a prebuilt key",
            imago: { nsPerOp(n) { _ = pipeline.cachedImage(for: request) } },
            peer: { nsPerOp(n) { _ = cache.image(for: key) } })

        compare(
            "pipeline: memory hit, sync cachedResponse(for:) (counted)", unit: "ns/op", goal: nil,
            peerName: "MemoryCache.image(for:) with a prebuilt key",
            imago: { nsPerOp(n) { _ = pipeline.cachedResponse(for: request) } },
            peer: { nsPerOp(n) { _ = cache.image(for: key) } })

        // A request made afresh for every lookup (as when a cell builds it each time) pays for its key once.
        let url = request.url!
        compare(
            "pipeline: memory hit, sync cachedImage(for:) of a new request", unit: "ns/op", goal: nil,
            peerName: "MemoryCache.image(for:) with a prebuilt key",
            imago: { nsPerOp(n) { _ = pipeline.cachedImage(for: ImageRequest(url: url)) } },
            peer: { nsPerOp(n) { _ = cache.image(for: key) } })
    }

    static func burst(repeats: Int? = nil) throws {
        let url = URL(string: "https://images.example.com/burst.img")!
        let data = MockImageDecoder.make(width: 256, height: 256, color: RGBA(r: 9, g: 9, b: 9, a: 255))
        let counts = Locked<(loads: Int, decodes: Int)>((0, 0))

        /// Cold pipeline per round (fresh caches): `count` identical requests at once, seconds until all finish.
        func round(_ count: Int) throws -> Double {
            let loader = MockDataLoader(latency: .milliseconds(5))
            loader.setResponse(data, for: url)
            let decoder = MockImageDecoder()
            var configuration = ImagePipeline.Configuration(dataLoader: loader, imageCache: MemoryCache())
            configuration.decoders = ImageDecoderRegistry([decoder])
            let pipeline = ImagePipeline(configuration: configuration)
            let seconds = try blocking {
                let t0 = now()
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for _ in 0..<count { group.addTask { _ = try await pipeline.image(for: url) } }
                    try await group.waitForAll()
                }
                return now() - t0
            }
            if count > 1 { counts.withLock { $0 = (loader.loadCount, decoder.decodeCount) } }
            return seconds
        }

        if let repeats {
            let seconds = try (0..<repeats).map { _ in try round(1000) }
            print("  burst of 1,000 × \(repeats): median \(median(seconds) * 1e3) ms, min \(seconds.min()! * 1e3) ms")
            return
        }
        try compare(
            "pipeline: 1,000 identical concurrent requests vs 1 (5 ms loader)", unit: "s", goal: nil,
            peerName: "one request alone",
            imago: { try round(1000) }, peer: { try round(1) })
        let (loads, decodes) = counts.withLock { $0 }
        print("  1,000 identical requests → \(loads) load(s), \(decodes) decode(s)")
    }
}
