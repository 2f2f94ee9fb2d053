import Foundation
import ImagoTesting
import Testing

@testable import ImagoCore

@Suite struct MemoryCachePressureTests {
    /// A cache subscribed to `monitor`, filled with ten 100-byte images (1000 of its 1000-byte limit).
    private func filledCache(monitor: MemoryPressureMonitor) throws -> MemoryCache {
        let cache = MemoryCache(
            configuration: .init(costLimit: 1000, entryCostLimit: 100, respondsToMemoryPressure: true),
            pressureMonitor: monitor)
        for index in 0..<10 { cache.store(try makeImage(cost: 100), for: ImageCacheKey("k\(index)")) }
        return cache
    }

    @Test func warningTrimsToHalfAndCriticalEmpties() async throws {
        // Given a full cache subscribed to a monitor over a fake source
        let source = FakePressureSource()
        let monitor = MemoryPressureMonitor(source: source, interval: .milliseconds(5))
        defer { monitor.stop() }
        let cache = try filledCache(monitor: monitor)
        #expect(cache.totalCost == 1000)
        // When the source reports a warning, the monitor's thread trims the cache to half, dropping the oldest
        source.level = .warning
        #expect(await ImagoTesting.eventually { cache.totalCost <= 500 }, "the warning reaches the cache")
        #expect(cache.totalCost == 500)
        #expect(cache.recency == ["k9", "k8", "k7", "k6", "k5"])
        #expect(monitor.level == .warning)
        // When it turns critical, the cache empties
        source.level = .critical
        #expect(await ImagoTesting.eventually { cache.count == 0 }, "the critical level reaches the cache")
        #expect(cache.totalCost == 0)
        #expect(cache.invariantViolations() == [])
    }

    @Test func simulatedPressureTrimsSynchronously() async throws {
        // The cache's subscription starts the monitor's polling thread, whose first sample (the fake source's
        // level) could otherwise land after the simulated warning and reset the level to normal; the source
        // reports what is simulated, and the test starts once that first sample was taken.
        let source = FakePressureSource()
        let monitor = MemoryPressureMonitor(source: source, interval: .seconds(3600))
        defer { monitor.stop() }
        let cache = try filledCache(monitor: monitor)
        #expect(await ImagoTesting.eventually { source.sampleCount >= 1 })
        source.level = .warning
        monitor.simulate(.warning)
        #expect(cache.totalCost == 500)
        monitor.simulate(.warning)  // same level: not told again
        #expect(cache.totalCost == 500)
        source.level = .critical
        monitor.simulate(.critical)
        #expect(cache.count == 0)
    }

    @Test func cacheWithoutPressureResponseIsNotSubscribed() throws {
        let source = FakePressureSource()
        let monitor = MemoryPressureMonitor(source: source, interval: .milliseconds(1))
        let cache = MemoryCache(
            configuration: .init(costLimit: 1000, respondsToMemoryPressure: false), pressureMonitor: monitor)
        cache.store(try makeImage(cost: 100), for: ImageCacheKey("a"))
        monitor.simulate(.critical)
        #expect(cache.count == 1)
        #expect(!monitor.isRunning && monitor.subscriberCount == 0 && source.sampleCount == 0)
    }
}

@Suite struct MemoryPressureMonitorTests {
    final class Recorder: MemoryPressureResponding {
        let levels = Locked<[MemoryPressureLevel]>([])
        func didReceiveMemoryPressure(_ level: MemoryPressureLevel) { levels.withLock { $0.append(level) } }
    }

    @Test func startsNoThreadWithoutSubscribers() {
        let source = FakePressureSource()
        let monitor = MemoryPressureMonitor(source: source, interval: .milliseconds(1))
        #expect(!monitor.isRunning)
        #expect(monitor.activeThreadCount == 0)
        #expect(source.sampleCount == 0)
    }

    @Test func samplesWhileSubscribedAndStopEndsThreadCleanly() async throws {
        // Given a monitor with one subscriber, sampling every 2 ms
        let source = FakePressureSource()
        let monitor = MemoryPressureMonitor(source: source, interval: .milliseconds(2))
        let recorder = Recorder()
        monitor.subscribe(recorder)
        #expect(monitor.isRunning)
        #expect(await ImagoTesting.eventually { source.sampleCount >= 3 }, "the thread has sampled a few times")
        #expect(monitor.activeThreadCount == 1)
        // When stopped
        monitor.stop()
        // Then the thread has ended by the time stop returns, and nothing more is sampled or told
        #expect(!monitor.isRunning)
        #expect(monitor.activeThreadCount == 0)
        #expect(monitor.subscriberCount == 0)
        let samples = source.sampleCount
        source.level = .critical
        monitor.sampleNow()  // the one sample this makes is on our thread, and reaches nobody
        #expect(source.sampleCount == samples + 1)
        #expect(recorder.levels.value == [])
    }

    @Test func lastUnsubscribeStopsThreadAndSubscribeRestartsIt() async throws {
        let source = FakePressureSource()
        let monitor = MemoryPressureMonitor(source: source, interval: .milliseconds(2))
        let first = Recorder()
        let second = Recorder()
        monitor.subscribe(first)
        monitor.subscribe(second)
        monitor.unsubscribe(first)
        #expect(monitor.isRunning)
        monitor.unsubscribe(second)
        #expect(!monitor.isRunning && monitor.activeThreadCount == 0)
        // A new subscriber starts a new thread, which delivers level changes
        monitor.subscribe(first)
        source.level = .warning
        #expect(await ImagoTesting.eventually { first.levels.value == [.warning] }, "the warning arrives")
        monitor.stop()
        #expect(monitor.activeThreadCount == 0)
    }

    @Test func deallocatedSubscriberIsDroppedAndThreadStops() throws {
        let monitor = MemoryPressureMonitor(source: FakePressureSource(), interval: .milliseconds(2))
        do {
            let cache = MemoryCache(
                configuration: .init(costLimit: 1000, respondsToMemoryPressure: true), pressureMonitor: monitor)
            #expect(monitor.subscriberCount == 1)
            withExtendedLifetime(cache) {}
        }
        // MemoryCache.deinit unsubscribed it; as the last subscriber, the thread was stopped and joined
        #expect(monitor.subscriberCount == 0)
        #expect(!monitor.isRunning && monitor.activeThreadCount == 0)
    }

    @Test func subscriberMayUnsubscribeFromItsCallbackWithoutDeadlock() async throws {
        final class Leaver: MemoryPressureResponding {
            let monitor: MemoryPressureMonitor
            let told = Locked(0)
            init(monitor: MemoryPressureMonitor) { self.monitor = monitor }
            func didReceiveMemoryPressure(_ level: MemoryPressureLevel) {
                told.withLock { $0 += 1 }
                monitor.unsubscribe(self)  // on the monitor's own thread: must not wait for itself
            }
        }
        let source = FakePressureSource()
        let monitor = MemoryPressureMonitor(source: source, interval: .milliseconds(2))
        let leaver = Leaver(monitor: monitor)
        monitor.subscribe(leaver)
        source.level = .critical
        #expect(
            await ImagoTesting.eventually { leaver.told.value == 1 && monitor.activeThreadCount == 0 },
            "the thread has ended")
        #expect(!monitor.isRunning)
    }

    @Test func toldOnlyOnLevelChanges() async throws {
        let source = FakePressureSource()
        let monitor = MemoryPressureMonitor(source: source, interval: .milliseconds(1))
        defer { monitor.stop() }
        let recorder = Recorder()
        monitor.subscribe(recorder)
        source.level = .warning
        #expect(await ImagoTesting.eventually { recorder.levels.value.count == 1 }, "warning told")
        let samplesAtWarning = source.sampleCount
        #expect(await ImagoTesting.eventually { source.sampleCount >= samplesAtWarning + 5 }, "several more samples")
        source.level = .normal
        #expect(await ImagoTesting.eventually { recorder.levels.value.count == 2 }, "normal told")
        #expect(recorder.levels.value == [.warning, .normal])
    }
}
