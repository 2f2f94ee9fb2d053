import Foundation
import ImagoTesting
import Testing

@testable import ImagoCore

@Suite struct MemoryCacheConcurrencyTests {
    @Test func manyTasksMixingOperationsKeepInvariants() async throws {
        // Given a small cache (50 entries, 5000 bytes) and 200 keys with images of 1…200 bytes
        let cache = makeCache(costLimit: 5000, countLimit: 50, entryCostLimit: 200)
        let keys = (0..<200).map { ImageCacheKey("https://images.example.com/photos/\($0).jpg") }
        let images = try (1...200).map { try makeImage(cost: $0) }
        let tasks = 8
        let operations = 10_000
        // When 8 tasks each run 10,000 mixed operations
        let lookups = await withTaskGroup(of: Int.self) { group in
            for seed in 0..<tasks {
                group.addTask {
                    var random = ImagoTesting.SeededGenerator(seed: UInt64(seed))
                    var lookups = 0
                    for _ in 0..<operations {
                        let key = keys[random.next(below: keys.count)]
                        switch random.next(below: 100) {
                        case 0..<50:
                            _ = cache.image(for: key)
                            lookups += 1
                        case 50..<85: cache.store(images[random.next(below: images.count)], for: key)
                        case 85..<95: cache.removeImage(for: key)
                        case 95..<97: cache.removeImages { $0.source.hasSuffix("7.jpg") }
                        case 97..<99: cache.trim(toCost: 2500)
                        default: cache.trim(toCount: 25)
                        }
                    }
                    return lookups
                }
            }
            return await group.reduce(0, +)
        }
        // Then the structure is sound, within its limits, and every lookup was counted once
        #expect(cache.invariantViolations() == [])
        let statistics = cache.statistics
        #expect(statistics.currentCount <= 50 && statistics.currentCost <= 5000)
        #expect(statistics.hits + statistics.misses == lookups)
        #expect(statistics.hits > 0)
        let sum = cache.keysByRecency.compactMap { cache.image(for: $0)?.cost }.reduce(0, +)
        #expect(sum == statistics.currentCost)
    }
}
