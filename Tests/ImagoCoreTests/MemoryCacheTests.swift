import Foundation
import ImagoTesting
import Testing

@testable import ImagoCore

@Suite struct MemoryCacheLRUTests {
    @Test func hitPromotesEntryAndEvictionTakesLeastRecentlyUsed() throws {
        // Given a cache of three entries, stored a, b, c
        let cache = makeCache(countLimit: 3)
        for (tag, key) in ["a", "b", "c"].enumerated() {
            cache.store(try makeImage(cost: 10, tag: UInt8(tag)), for: ImageCacheKey(key))
        }
        #expect(cache.recency == ["c", "b", "a"])
        // When a is read (promoted) and d is stored
        #expect(cache.image(for: .init("a"))?.image.bytes[0] == 0)
        #expect(cache.recency == ["a", "c", "b"])
        cache.store(try makeImage(cost: 10, tag: 3), for: .init("d"))
        // Then b, now the least recently used, is the one evicted
        #expect(cache.image(for: .init("b")) == nil)
        #expect(cache.recency == ["d", "a", "c"])
        #expect(cache.statistics.evictions == 1)
        #expect(cache.invariantViolations() == [])
    }

    @Test func keysBuiltFromSeparateStringsFindTheSameEntry() throws {
        // Given an image stored under a key built from one String
        let cache = makeCache()
        let stored = String(format: "https://images.example.com/photos/%08d-large.jpg", 1234)
        cache.store(try makeImage(cost: 10, tag: 9), for: ImageCacheKey(stored))
        // When looked up with a key built from an equal but separately made String (and a different one)
        let lookup = "https://images.example.com/photos/" + "00001234" + "-large.jpg"
        // Then the equal text finds it (the precomputed hash is what the table uses) and the other does not
        #expect(cache.image(for: ImageCacheKey(lookup))?.image.bytes[0] == 9)
        #expect(cache.image(for: ImageCacheKey(lookup + "?v=2")) == nil)
        #expect(Set([ImageCacheKey(stored), ImageCacheKey(lookup)]).count == 1)
    }

    @Test func storingExistingKeyReplacesValueAndCost() throws {
        let cache = makeCache()
        cache.store(try makeImage(cost: 100, tag: 1), for: .init("k"))
        cache.store(try makeImage(cost: 40, tag: 2), for: .init("k"))
        #expect(cache.count == 1)
        #expect(cache.totalCost == 40)
        #expect(cache.image(for: .init("k"))?.image.bytes[0] == 2)
        #expect(cache.invariantViolations() == [])
    }

    @Test func costLimitEvictsLeastRecentlyUsedUntilWithinLimit() throws {
        // Given a cache limited to 100 bytes holding 30 + 30 + 30
        let cache = makeCache(costLimit: 100, entryCostLimit: 100)
        for key in ["a", "b", "c"] { cache.store(try makeImage(cost: 30), for: ImageCacheKey(key)) }
        // When a 50-byte image arrives
        cache.store(try makeImage(cost: 50), for: .init("d"))
        // Then the two oldest go (90 + 50 > 100, 60 + 50 > 100, 30 + 50 ≤ 100)
        #expect(cache.recency == ["d", "c"])
        #expect(cache.totalCost == 80)
        #expect(cache.statistics.evictions == 2)
    }

    @Test func countLimitKeepsAtMostThatManyEntries() throws {
        let cache = makeCache(countLimit: 5)
        for index in 0..<12 { cache.store(try makeImage(cost: 1), for: ImageCacheKey("k\(index)")) }
        #expect(cache.count == 5)
        #expect(cache.recency == ["k11", "k10", "k9", "k8", "k7"])
    }

    @Test func entryOverPerEntryLimitIsNotStoredAndEvictsNothing() throws {
        // Given a cache (limit 1000, entries at most 250) holding two small images and an old "big"
        let cache = makeCache(costLimit: 1000, entryCostLimit: 250)
        cache.store(try makeImage(cost: 100), for: .init("a"))
        cache.store(try makeImage(cost: 100), for: .init("big"))
        // When a 251-byte image is stored, once new and once over "big"
        cache.store(try makeImage(cost: 251), for: .init("new"))
        cache.store(try makeImage(cost: 251), for: .init("big"))
        // Then neither is kept, the stale "big" is gone too, and nothing else was evicted
        #expect(cache.image(for: .init("new")) == nil)
        #expect(cache.image(for: .init("big")) == nil)
        #expect(cache.recency == ["a"])
        #expect(cache.statistics.evictions == 0)
    }

    @Test func defaultEntryCostLimitIsAQuarterOfCostLimit() throws {
        let cache = makeCache(costLimit: 400)
        cache.store(try makeImage(cost: 100), for: .init("fits"))
        cache.store(try makeImage(cost: 101), for: .init("tooBig"))
        #expect(cache.recency == ["fits"])
    }

    @Test func defaultCostLimitIsFifteenPercentClamped() {
        let mib = 1 << 20
        #expect(MemoryCache.Configuration.defaultCostLimit(availableMemory: 1000 * mib) == 150 * mib)
        #expect(MemoryCache.Configuration.defaultCostLimit(availableMemory: 64 * mib) == 16 * mib)
        #expect(MemoryCache.Configuration.defaultCostLimit(availableMemory: 64 << 30) == 1 << 30)
        let limit = MemoryCache.Configuration.defaultCostLimit
        #expect(limit >= 16 * mib && limit <= 1 << 30)
    }

    @Test func removeImageAndSubscriptNilRemoveOneEntry() throws {
        let cache = makeCache()
        cache.store(try makeImage(cost: 10), for: .init("a"))
        cache[.init("b")] = try makeImage(cost: 20)
        cache.removeImage(for: .init("a"))
        #expect(cache[.init("a")] == nil)
        #expect(cache[.init("b")]?.cost == 20)
        cache[.init("b")] = nil
        #expect(cache.count == 0 && cache.totalCost == 0)
        #expect(cache.invariantViolations() == [])
    }

    @Test func removeImagesWherePredicateMatchesKeyText() throws {
        let cache = makeCache()
        for key in ["u1", "u1|resize", "u1|blur", "u2", "u2|resize"] {
            cache.store(try makeImage(cost: 5), for: ImageCacheKey(key))
        }
        cache.removeImages { $0.source.hasPrefix("u1") }
        #expect(Set(cache.recency) == ["u2", "u2|resize"])
        #expect(cache.totalCost == 10)
        #expect(cache.invariantViolations() == [])
    }

    @Test func removeAllEmptiesAndCacheStaysUsable() throws {
        let cache = makeCache()
        for index in 0..<50 { cache.store(try makeImage(cost: 3), for: ImageCacheKey("k\(index)")) }
        cache.removeAll()
        #expect(cache.count == 0 && cache.totalCost == 0)
        cache.store(try makeImage(cost: 3), for: .init("again"))
        #expect(cache.recency == ["again"])
        #expect(cache.invariantViolations() == [])
    }

    @Test func trimToCostAndToCountDropLeastRecentlyUsed() throws {
        let cache = makeCache()
        for index in 0..<10 { cache.store(try makeImage(cost: 10), for: ImageCacheKey("k\(index)")) }
        cache.trim(toCost: 55)
        #expect(cache.totalCost == 50)
        #expect(cache.recency.first == "k9" && cache.recency.last == "k5")
        cache.trim(toCount: 2)
        #expect(cache.recency == ["k9", "k8"])
        cache.trim(toCost: 0)
        #expect(cache.count == 0)
        #expect(cache.statistics.evictions == 10)
    }

    @Test func statisticsCountHitsMissesAndCurrentSize() throws {
        let cache = makeCache()
        cache.store(try makeImage(cost: 7), for: .init("a"))
        cache.store(try makeImage(cost: 8), for: .init("b"))
        _ = cache.image(for: .init("a"))
        _ = cache.image(for: .init("a"))
        _ = cache.image(for: .init("nope"))
        #expect(
            cache.statistics
                == MemoryCache.Statistics(
                    hits: 2, misses: 1, evictions: 0, expirations: 0, currentCost: 15, currentCount: 2))
    }

    @Test func zeroLimitsCacheNothing() throws {
        let cache = makeCache(countLimit: 0)
        cache.store(try makeImage(cost: 1), for: .init("a"))
        #expect(cache.count == 0)
        let noCost = makeCache(costLimit: 0)
        noCost.store(try makeImage(cost: 1), for: .init("a"))
        #expect(noCost.count == 0)
    }
}

@Suite struct MemoryCacheExpiryTests {
    @Test func entryExpiresAfterConfiguredTTL() throws {
        // Given a cache whose entries live 60 s on a hand-moved clock
        let clock = TestClock()
        let cache = makeCache(ttl: .after(.seconds(60)), clock: clock)
        cache.store(try makeImage(cost: 10), for: .init("a"))
        // When 59 s pass it is still a hit; at 60 s it is a miss and gone
        clock.advance(by: .seconds(59))
        #expect(cache.image(for: .init("a")) != nil)
        clock.advance(by: .seconds(1))
        #expect(cache.image(for: .init("a")) == nil)
        #expect(cache.count == 0 && cache.totalCost == 0)
        #expect(cache.statistics.expirations == 1)
        #expect(cache.statistics.misses == 1)
        #expect(cache.invariantViolations() == [])
    }

    @Test func perStoreTTLOverridesConfiguration() throws {
        let clock = TestClock()
        let cache = makeCache(ttl: .after(.seconds(60)), clock: clock)
        cache.store(try makeImage(cost: 10), for: .init("short"), ttl: .after(.seconds(5)))
        cache.store(try makeImage(cost: 10), for: .init("forever"), ttl: .never)
        cache.store(try makeImage(cost: 10), for: .init("default"))
        clock.advance(by: .seconds(10))
        #expect(cache.image(for: .init("short")) == nil)
        #expect(cache.image(for: .init("default")) != nil)
        clock.advance(by: .seconds(3600))
        #expect(cache.image(for: .init("default")) == nil)
        #expect(cache.image(for: .init("forever")) != nil)
    }

    @Test func expiryAtDateIsMeasuredFromNow() throws {
        let clock = TestClock()
        let cache = makeCache(clock: clock)
        cache.store(try makeImage(cost: 10), for: .init("a"), ttl: .at(Date().addingTimeInterval(30)))
        clock.advance(by: .seconds(20))
        #expect(cache.image(for: .init("a")) != nil)
        clock.advance(by: .seconds(11))
        #expect(cache.image(for: .init("a")) == nil)
    }

    @Test func alreadyExpiredStoreIsDeclinedAndRemovesOldValue() throws {
        let cache = makeCache(clock: TestClock())
        cache.store(try makeImage(cost: 10), for: .init("a"))
        cache.store(try makeImage(cost: 10), for: .init("a"), ttl: .after(.zero))
        cache.store(try makeImage(cost: 10), for: .init("b"), ttl: .at(Date().addingTimeInterval(-1)))
        #expect(cache.count == 0)
    }

    @Test func trimRemovesExpiredEntriesFirst() throws {
        // Given a fresh entry stored before an expiring one (so LRU alone would drop the fresh one first)
        let clock = TestClock()
        let cache = makeCache(clock: clock)
        cache.store(try makeImage(cost: 10), for: .init("fresh"))
        cache.store(try makeImage(cost: 10), for: .init("stale"), ttl: .after(.seconds(1)))
        clock.advance(by: .seconds(2))
        // When trimmed to one entry's cost
        cache.trim(toCost: 10)
        // Then the expired one went and the fresh one stayed
        #expect(cache.recency == ["fresh"])
        #expect(cache.statistics.expirations == 1)
        #expect(cache.statistics.evictions == 0)
    }
}

@Suite struct MemoryCacheLRUCoreTests {
    @Test func genericCoreHandsBackEveryValueItLetsGo() {
        // Given the generic core with Int keys, a cost limit of 10 and a count limit of 3
        var lru = LRUCache<Int, String>(costLimit: 10, countLimit: 3, entryCostLimit: 10)
        #expect(lru.setValue("a", for: 1, cost: 4) == [])
        #expect(lru.setValue("b", for: 2, cost: 4) == [])
        // When a replacement and an over-limit store happen, the replaced and evicted values come back
        #expect(lru.setValue("b2", for: 2, cost: 4) == ["b"])
        #expect(lru.setValue("c", for: 3, cost: 4) == ["a"])  // 12 > 10: the least recently used goes
        #expect(lru.setValue("huge", for: 4, cost: 11) == [])  // declined
        #expect(lru.removeValue(for: 2) == "b2")
        #expect(lru.keysByRecency == [3])
        // And freed slots are reused without breaking the structure
        for key in 10..<20 { lru.setValue("v\(key)", for: key, cost: 1) }
        #expect(lru.keysByRecency == [19, 18, 17])
        #expect(lru.invariantViolations() == [])
        #expect(Set(lru.removeAll()) == ["v19", "v18", "v17"])
        #expect(lru.count == 0 && lru.totalCost == 0)
    }

    @Test func genericCoreKeepsExactRecencyOrderOfAReferenceModel() {
        // Given the core with a count limit of 40 and a cost limit of 300, and a plain array as the model
        // (most recent first), driven by the same 20,000 random operations over 64 keys
        var lru = LRUCache<Int, Int>(costLimit: 300, countLimit: 40, entryCostLimit: 50)
        var model: [(key: Int, cost: Int)] = []
        var random = ImagoTesting.SeededGenerator(seed: 42)
        func evictModel() {
            while model.count > 40 || model.reduce(0, { $0 + $1.cost }) > 300 { model.removeLast() }
        }
        for step in 0..<20_000 {
            let key = random.next(below: 64)
            let index = model.firstIndex { $0.key == key }
            switch random.next(below: 10) {
            case 0..<5:
                // When a lookup hits, the entry moves to the front of both
                let hit = lru.value(for: key, now: { .zero })
                #expect((hit != nil) == (index != nil))
                if let index { model.insert(model.remove(at: index), at: 0) }
            case 5..<8:
                let cost = random.next(below: 60)  // above 50 is declined and removes the old entry
                lru.setValue(key * 1000 + cost, for: key, cost: cost)
                if let index { model.remove(at: index) }
                if cost <= 50 {
                    model.insert((key, cost), at: 0)
                    evictModel()
                }
            case 8:
                lru.removeValue(for: key)
                if let index { model.remove(at: index) }
            default:
                let cost = random.next(below: 300)
                lru.trim(toCost: cost)
                while model.reduce(0, { $0 + $1.cost }) > cost { model.removeLast() }
            }
            // Then the order, count and cost agree exactly after every step
            if lru.keysByRecency != model.map(\.key) || lru.totalCost != model.reduce(0, { $0 + $1.cost }) {
                Issue.record("diverged from the model at step \(step)")
                break
            }
        }
        #expect(lru.invariantViolations() == [])
        #expect(lru.count == model.count)
    }

    @Test func hitsReplayedFromTheBufferKeepExactRecencyOrder() {
        // Given 100 entries and a model of their order, and only hits (so the pending buffer fills and is
        // replayed many times over, with repeats of the same key in a row)
        var lru = LRUCache<Int, Int>()
        for key in 0..<100 { lru.setValue(key, for: key, cost: 1) }
        var model = Array((0..<100).reversed())
        var random = ImagoTesting.SeededGenerator(seed: 7)
        for step in 0..<5_000 {
            let key = random.next(below: 8) == 0 ? model[0] : random.next(below: 100)
            #expect(lru.value(for: key, now: { .zero }) == key)
            model.removeAll { $0 == key }
            model.insert(key, at: 0)
            // Then the order read at any moment, and the one left by a store, are exactly LRU
            if step % 37 == 0, lru.keysByRecency != model {
                Issue.record("diverged from the model at step \(step)")
                break
            }
        }
        #expect(lru.invariantViolations() == [])
        lru.setValue(1000, for: 1000, cost: 1)
        #expect(lru.keysByRecency == [1000] + model)
        #expect(lru.hits == 5_000)
        // And an eviction takes the true least recently used entry
        lru.trim(toCount: 100)
        #expect(lru.keysByRecency == [1000] + model.dropLast())
    }

    @Test func hitsOnSlotsBeyondTheBufferRangeMoveAtOnceInOrder() {
        // Given more entries than the pending buffer's 16-bit slot numbers reach
        var lru = LRUCache<Int, Int>()
        for key in 0..<66_000 { lru.setValue(key, for: key, cost: 1) }
        // When hits alternate between low slots (buffered) and high ones (moved at once)
        for key in [3, 65_900, 4, 65_999, 65_536, 5] { #expect(lru.value(for: key, now: { .zero }) == key) }
        // Then the order is exactly the order of the hits
        #expect(Array(lru.keysByRecency.prefix(7)) == [5, 65_536, 65_999, 4, 65_900, 3, 65_998])
        #expect(lru.invariantViolations() == [])
    }

    @Test func hotFieldsShareTheLockLineAndReadFieldsStayOffIt() {
        // The grouping LRUCache's hit path relies on: behind Locked's word, the fields every hit writes fill the
        // lock's cache line; the ones written on relinking sit on the next; the ones every hit reads start after.
        typealias Cache = LRUCache<ImageCacheKey, ImageContainer>
        let base = Locked<Cache>.stateOffset
        let offsets = Cache.hotFieldOffsets
        #expect(base + offsets.pendingCount >= 4 && base + offsets.hits + 8 <= 64)
        #expect(base + offsets.links >= 64 && base + offsets.expirations + 8 <= 128)
        #expect(base + offsets.nodes >= 128)
    }

    @Test func genericCoreExpiresByDeadlineOnLookupAndSweep() {
        var lru = LRUCache<Int, String>()
        lru.setValue("soon", for: 1, cost: 1, deadline: .seconds(10))
        lru.setValue("later", for: 2, cost: 1, deadline: .seconds(20))
        lru.setValue("never", for: 3, cost: 1)
        #expect(lru.value(for: 1, now: { .seconds(9) }) == "soon")
        #expect(lru.value(for: 1, now: { .seconds(10) }) == nil)
        #expect(lru.takeReleased() == ["soon"])
        #expect(lru.removeExpired(now: .seconds(30)) == ["later"])
        #expect(
            lru.value(
                for: 3,
                now: {
                    Issue.record("no deadline: the clock must not be read"); return .zero
                }) == "never")
        #expect(lru.expirations == 2 && lru.hits == 2 && lru.misses == 1)
        #expect(lru.invariantViolations() == [])
    }
}
