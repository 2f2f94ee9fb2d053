import Foundation
import Testing

@testable import ImagoCore

/// A still image whose cost is exactly `cost` bytes (a gray8 row of `cost` pixels), its first byte `tag`.
func makeImage(cost: Int, tag: UInt8 = 0) throws -> ImageContainer {
    let buffer = try PixelBuffer(width: max(1, cost), height: 1, format: .gray8) { bytes in
        bytes.initializeMemory(as: UInt8.self, repeating: 0)
        bytes[0] = tag
    }
    return ImageContainer(image: buffer)
}

/// A cache that never subscribes to the machine's real memory pressure.
func makeCache(
    costLimit: Int = 1_000_000, countLimit: Int = 1000, entryCostLimit: Int? = nil,
    ttl: CacheExpiration = .never, clock: TestClock? = nil
) -> MemoryCache {
    var configuration = MemoryCache.Configuration(
        costLimit: costLimit, countLimit: countLimit, entryCostLimit: entryCostLimit, ttl: ttl,
        respondsToMemoryPressure: false)
    if let clock { configuration.now = { clock.now() } }
    return MemoryCache(configuration: configuration)
}

/// A monotonic clock a test moves by hand.
final class TestClock: Sendable {
    private let start = ContinuousClock.now
    private let offset = Locked(Duration.zero)

    func now() -> ContinuousClock.Instant { start + offset.value }
    func advance(by duration: Duration) { offset.withLock { $0 += duration } }
}

/// A pressure source whose level the test sets; counts how often it is sampled.
final class FakePressureSource: MemoryPressureSource {
    private let state = Locked((level: MemoryPressureLevel.normal, samples: 0))

    var level: MemoryPressureLevel {
        get { state.value.level }
        set { state.withLock { $0.level = newValue } }
    }
    var sampleCount: Int { state.value.samples }

    func currentLevel() -> MemoryPressureLevel {
        state.withLock { state in
            state.samples += 1
            return state.level
        }
    }
}

extension MemoryCache {
    /// The key texts from most to least recently used.
    var recency: [String] { keysByRecency.map(\.source) }
}
