/// A least-recently-used map with cost and count limits and optional per-entry deadlines; get, set and remove in
/// O(1).
///
/// The one least-recently-used map in Imago. Not thread-safe: a value type meant to live inside exactly one lock
/// (``MemoryCache`` keeps its images in one, ``FailureCache`` its failures, the codecs' colour transforms and the
/// server's renditions theirs). Entries live in an arena indexed by slot, so a
/// hit allocates nothing and touches no reference counts beyond the value it returns; freed slots are reused
/// through a free list. The doubly linked recency list is kept apart from the entries, in an array of 8-byte links
/// (two `Int32` slot numbers): moving an entry to the front rewrites four links, which share a cache line or two,
/// instead of touching the lines of four whole entries (each a key, an image and its limits). Under two threads
/// those lines travel between cores with the lock, so fewer of them is what keeps a contended hit cheap.
///
/// A hit does not relink at once: it appends the slot to a small buffer of pending hits, kept at the front of the
/// struct beside the hit count, so that a contended hit writes one cache line of the table's own instead of the
/// four or five its relinking touches (lines last written by the other thread, each a hand-over between cores).
/// The buffer is replayed, in order, when it fills and before anything that reads or changes the order (a store,
/// a removal, a trim, an eviction, an inspection), so the recency order seen from outside is exactly LRU.
///
/// Methods that drop entries hand the dropped values back, so that the caller lets them go (and frees their
/// pixel memory) after it has released its lock.
///
/// Times are `Duration`s since any fixed reference the caller picks (``MemoryCache`` uses an instant taken at
/// launch): `ContinuousClock.Instant` is a resilient type whose layout is only known at run time, and storing it
/// in the nodes would make every node access go through value witnesses.
package struct LRUCache<Key: Hashable, Value> {
    /// A moment, as the time since the caller's fixed reference.
    package typealias Instant = Duration

    // One entry, or a free slot (key and value nil).
    private struct Node {
        var key: Key?
        var value: Value?
        var cost: Int
        var deadline: Instant?
    }

    // A slot's place in the recency list, or in the free list (`next` only) when the slot is free.
    private struct Link {
        var previous: Int32  // towards the most recently used end; -1 at the head
        var next: Int32  // towards the least recently used end; -1 at the tail
    }

    // The most slots the arena holds: links are 32-bit. A new key beyond it is declined like an over-cost value.
    private static var slotLimit: Int { Int(Int32.max) }

    // The fields are grouped by who writes them, so that a contended hit moves as few cache lines as it can.
    // `Locked` puts the state 8 bytes into a cache-line-aligned allocation, behind its word.
    //
    // Line 0, with the lock's word, written by every hit (56 bytes): the pending hits (slots, oldest first, not
    // yet moved to the front; replayed when all 23 are used) and the hit count.
    private var pendingCount: UInt16 = 0
    private var pending = InlineArray<23, UInt16>(repeating: 0)
    /// Lookups that found a live entry.
    package private(set) var hits = 0

    // Line 1, written when the order changes (a replay, a store, a removal) and by misses, never read by a hit.
    private var links: [Link] = []
    private var head = -1  // most recently used
    private var tail = -1  // least recently used: evicted first
    private var freeList = -1
    /// The sum of the costs of all entries.
    package private(set) var totalCost = 0
    /// Lookups that found nothing or an expired entry.
    package private(set) var misses = 0
    /// Entries dropped to keep within the limits (stores and trims), not counting explicit removals.
    package private(set) var evictions = 0
    /// Entries dropped because their deadline had passed.
    package private(set) var expirations = 0

    // Line 2 onwards, read by every hit and written only by stores and removals: both threads keep a copy.
    private var nodes: [Node] = []
    private var slots: [Key: Int] = [:]
    // Entries with a deadline; while zero, nothing ever reads the clock.
    private var deadlineCount = 0
    /// Expired values removed by lookups, kept until the caller takes them (out of the lock) with
    /// ``takeReleased()``; a lookup cannot hand them back without costing every hit a second optional.
    package private(set) var released: [Value] = []
    /// The most total cost kept; a store beyond it evicts from the least recently used end.
    package var costLimit: Int
    /// The most entries kept.
    package var countLimit: Int
    /// The most one entry may cost; a dearer value is not stored.
    package var entryCostLimit: Int

    /// An empty cache with the given limits (default: unlimited).
    package init(costLimit: Int = .max, countLimit: Int = .max, entryCostLimit: Int = .max) {
        self.costLimit = costLimit
        self.countLimit = countLimit
        self.entryCostLimit = entryCostLimit
    }

    /// The number of entries.
    package var count: Int { slots.count }

    /// The keys of all entries, in no particular order.
    package var keys: [Key] { Array(slots.keys) }

    /// The value for `key`, made the most recently used; `nil` on a miss.
    ///
    /// `now` is called only when the entry has a deadline; it returns `nil` when the caller has no time to give
    /// (the entry then counts as live). An entry whose deadline has passed is removed and counted as a miss; its
    /// value waits in ``released`` for the caller to take and let go after unlocking.
    @inline(__always)
    package mutating func value(for key: Key, now: () -> Instant?) -> Value? {
        guard let slot = slots[key] else {
            misses &+= 1
            return nil
        }
        // Fields are read through a buffer pointer: `nodes[slot].field` goes through Array's getter, which copies
        // the whole node (retaining its key and every reference in its value) to read one field.
        if deadlineCount > 0, let deadline = nodes.withUnsafeBufferPointer({ $0[slot].deadline }),
            let now = now(), deadline <= now
        {
            applyPendingHits()
            misses &+= 1
            expirations &+= 1
            if let value = remove(slot: slot) { released.append(value) }
            return nil
        }
        hits &+= 1
        recordHit(slot)
        return nodes.withUnsafeBufferPointer { $0[slot].value }
    }

    /// The value for `key` without changing the recency order or the counters, expired or not; `nil` when absent.
    package func peekValue(for key: Key) -> Value? {
        guard let slot = slots[key] else { return nil }
        return nodes.withUnsafeBufferPointer { $0[slot].value }
    }

    /// Takes the values that lookups removed because they had expired (see ``value(for:now:)``).
    package mutating func takeReleased() -> [Value] {
        defer { released = [] }
        return released
    }

    /// Stores `value` for `key` as the most recently used entry, replacing any previous one, then evicts from the
    /// least recently used end until within the limits.
    ///
    /// A value dearer than `entryCostLimit` or `costLimit` (or any value when `countLimit` is zero) is not
    /// stored, and any previous entry for `key` is removed, so a stale value never outlives a declined store.
    /// Returns every value let go (the replaced one, evicted ones) for release outside the lock.
    @discardableResult
    package mutating func setValue(_ value: Value, for key: Key, cost: Int, deadline: Instant? = nil) -> [Value] {
        applyPendingHits()
        var dropped: [Value] = []
        let cost = max(0, cost)
        if cost > entryCostLimit || cost > costLimit || countLimit <= 0
            || (freeList < 0 && nodes.count >= Self.slotLimit && slots[key] == nil)
        {
            if let old = removeValue(for: key) { dropped.append(old) }
            return dropped
        }
        if let slot = slots[key] {
            totalCost += cost - nodes[slot].cost
            deadlineCount += (deadline == nil ? 0 : 1) - (nodes[slot].deadline == nil ? 0 : 1)
            if let old = nodes[slot].value { dropped.append(old) }
            nodes[slot].value = value
            nodes[slot].cost = cost
            nodes[slot].deadline = deadline
            moveToFront(slot)
        } else {
            let node = Node(key: key, value: value, cost: cost, deadline: deadline)
            let slot: Int
            if freeList >= 0 {
                slot = freeList
                freeList = Int(links[slot].next)
                nodes[slot] = node
            } else {
                slot = nodes.count
                nodes.append(node)
                links.append(Link(previous: -1, next: -1))
            }
            slots[key] = slot
            linkAtFront(slot)
            totalCost += cost
            if deadline != nil { deadlineCount += 1 }
        }
        evict(toCost: costLimit, toCount: countLimit, into: &dropped)
        return dropped
    }

    /// Removes the entry for `key` and returns its value (nil when there was none).
    @discardableResult
    package mutating func removeValue(for key: Key) -> Value? {
        guard let slot = slots[key] else { return nil }
        applyPendingHits()
        return remove(slot: slot)
    }

    /// Removes every entry and gives the arena's memory back; returns the values for release outside the lock.
    @discardableResult
    package mutating func removeAll() -> [Value] {
        let values = nodes.compactMap(\.value)
        nodes = []
        links = []
        slots = [:]
        head = -1
        tail = -1
        freeList = -1
        pendingCount = 0
        deadlineCount = 0
        totalCost = 0
        return values
    }

    /// Drops expired entries (when `now` is given and any entry has a deadline), then evicts least recently used
    /// entries until the total cost is at most `cost` and the count at most `count`. Returns the dropped values.
    @discardableResult
    package mutating func trim(toCost cost: Int = .max, toCount count: Int = .max, now: Instant? = nil) -> [Value] {
        applyPendingHits()
        var dropped: [Value] = []
        if let now { removeExpired(now: now, into: &dropped) }
        evict(toCost: max(0, cost), toCount: max(0, count), into: &dropped)
        return dropped
    }

    /// Removes every entry whose deadline is at or before `now`; returns their values.
    @discardableResult
    package mutating func removeExpired(now: Instant) -> [Value] {
        applyPendingHits()
        var dropped: [Value] = []
        removeExpired(now: now, into: &dropped)
        return dropped
    }

    // MARK: - Pending hits

    // Records a hit on `slot` for replay. A hit on the slot recorded last would not move anything, and is not
    // recorded again. (The head is not compared: a hit never reads the line the head lives on.) A slot beyond
    // what the buffer's 16-bit entries hold moves at once, after the pending ones.
    @inline(__always)
    private mutating func recordHit(_ slot: Int) {
        guard let entry = UInt16(exactly: slot) else {
            applyPendingHits()
            moveToFront(slot)
            return
        }
        let count = Int(pendingCount)
        if count > 0, pending[count - 1] == entry { return }
        pending[count] = entry
        pendingCount += 1
        if count + 1 == pending.count { applyPendingHits() }
    }

    // Moves the recorded hits to the front, oldest first, as if each had moved when it happened. Every method
    // that reads or changes the order or removes a slot calls this first, so a pending slot is always live.
    private mutating func applyPendingHits() {
        guard pendingCount > 0 else { return }
        for index in 0..<Int(pendingCount) { moveToFront(Int(pending[index])) }
        pendingCount = 0
    }

    // MARK: - List surgery (O(1))

    private mutating func removeExpired(now: Instant, into dropped: inout [Value]) {
        guard deadlineCount > 0 else { return }
        var slot = tail
        while slot >= 0 {
            let previous = Int(links[slot].previous)
            if let deadline = nodes[slot].deadline, deadline <= now, let value = remove(slot: slot) {
                expirations &+= 1
                dropped.append(value)
            }
            slot = previous
        }
    }

    private mutating func evict(toCost cost: Int, toCount count: Int, into dropped: inout [Value]) {
        while tail >= 0, totalCost > cost || slots.count > count {
            if let value = remove(slot: tail) { dropped.append(value) }
            evictions &+= 1
        }
    }

    private mutating func remove(slot: Int) -> Value? {
        unlink(slot)
        if let key = nodes[slot].key { slots.removeValue(forKey: key) }
        totalCost -= nodes[slot].cost
        if nodes[slot].deadline != nil { deadlineCount -= 1 }
        let value = nodes[slot].value
        nodes[slot] = Node(key: nil, value: nil, cost: 0, deadline: nil)
        links[slot] = Link(previous: -1, next: Int32(truncatingIfNeeded: freeList))
        freeList = slot
        return value
    }

    @inline(__always)
    private mutating func moveToFront(_ slot: Int) {
        guard slot != head else { return }
        // One uniqueness check for the whole relink instead of one per field written. `slot` is not the head,
        // so it has a previous link; the old head has none.
        let oldHead = head
        let newTail = links.withUnsafeMutableBufferPointer { links -> Int? in
            let previous = Int(links[slot].previous)
            let next = Int(links[slot].next)
            links[previous].next = Int32(truncatingIfNeeded: next)
            if next >= 0 { links[next].previous = Int32(truncatingIfNeeded: previous) }
            links[slot] = Link(previous: -1, next: Int32(truncatingIfNeeded: oldHead))
            links[oldHead].previous = Int32(truncatingIfNeeded: slot)
            return next < 0 ? previous : nil
        }
        head = slot
        if let newTail { tail = newTail }
    }

    private mutating func unlink(_ slot: Int) {
        let previous = Int(links[slot].previous)
        let next = Int(links[slot].next)
        if previous >= 0 { links[previous].next = Int32(truncatingIfNeeded: next) } else { head = next }
        if next >= 0 { links[next].previous = Int32(truncatingIfNeeded: previous) } else { tail = previous }
        links[slot] = Link(previous: -1, next: -1)
    }

    private mutating func linkAtFront(_ slot: Int) {
        links[slot] = Link(previous: -1, next: Int32(truncatingIfNeeded: head))
        if head >= 0 { links[head].previous = Int32(truncatingIfNeeded: slot) }
        head = slot
        if tail < 0 { tail = slot }
    }
}

// @unchecked: its private nodes hold only keys and values (Sendable here) and plain numbers.
extension LRUCache: @unchecked Sendable where Key: Sendable, Value: Sendable {}

// MARK: - Inspection for tests

extension LRUCache {
    /// Where the fields that decide which cache lines a hit writes sit in the struct, in bytes (for the test
    /// that keeps the grouping described at the top of the type).
    package static var hotFieldOffsets: (pendingCount: Int, hits: Int, links: Int, expirations: Int, nodes: Int) {
        (
            MemoryLayout<Self>.offset(of: \Self.pendingCount)!, MemoryLayout<Self>.offset(of: \Self.hits)!,
            MemoryLayout<Self>.offset(of: \Self.links)!, MemoryLayout<Self>.offset(of: \Self.expirations)!,
            MemoryLayout<Self>.offset(of: \Self.nodes)!
        )
    }

    /// The keys from most to least recently used (O(n); for tests and diagnostics).
    package var keysByRecency: [Key] {
        var copy = self
        copy.applyPendingHits()
        return copy.keysInListOrder
    }

    private var keysInListOrder: [Key] {
        var keys: [Key] = []
        var slot = head
        while slot >= 0 {
            if let key = nodes[slot].key { keys.append(key) }
            slot = Int(links[slot].next)
        }
        return keys
    }

    /// Every broken internal invariant, described; empty when the structure is sound (O(n); for tests).
    ///
    /// Checks: the list links both ways and visits each live slot once; the map points at exactly those slots;
    /// cost and deadline totals match the entries; the limits hold; free slots hold nothing.
    package func invariantViolations() -> [String] {
        var problems: [String] = []
        for index in 0..<Int(pendingCount) {
            let slot = Int(pending[index])
            if slot >= nodes.count || nodes[slot].key == nil {
                problems.append("pending hit \(index) names slot \(slot), which holds no entry")
            }
        }
        if !problems.isEmpty { return problems }
        var copy = self
        copy.applyPendingHits()
        return copy.listInvariantViolations()
    }

    private func listInvariantViolations() -> [String] {
        var problems: [String] = []
        var visited = Set<Int>()
        var slot = head
        var previous = -1
        var cost = 0
        var deadlines = 0
        while slot >= 0 {
            guard slot < nodes.count, visited.insert(slot).inserted else {
                problems.append("list revisits or leaves the arena at slot \(slot)")
                break
            }
            let node = nodes[slot]
            if Int(links[slot].previous) != previous {
                problems.append("slot \(slot) links back to \(links[slot].previous), not \(previous)")
            }
            if let key = node.key {
                if slots[key] != slot { problems.append("map does not point at slot \(slot)") }
            } else {
                problems.append("listed slot \(slot) has no key")
            }
            if node.value == nil { problems.append("listed slot \(slot) has no value") }
            cost += node.cost
            if node.deadline != nil { deadlines += 1 }
            previous = slot
            slot = Int(links[slot].next)
        }
        if previous != tail { problems.append("tail is \(tail), the list ends at \(previous)") }
        if visited.count != slots.count { problems.append("list has \(visited.count) entries, map \(slots.count)") }
        if cost != totalCost { problems.append("totalCost \(totalCost) ≠ sum of entries \(cost)") }
        if deadlines != deadlineCount { problems.append("deadlineCount \(deadlineCount) ≠ \(deadlines)") }
        if totalCost > costLimit { problems.append("totalCost \(totalCost) over costLimit \(costLimit)") }
        if slots.count > countLimit { problems.append("count \(slots.count) over countLimit \(countLimit)") }
        var free = 0
        slot = freeList
        while slot >= 0, free <= nodes.count {
            if nodes[slot].key != nil || nodes[slot].value != nil {
                problems.append("free slot \(slot) holds an entry")
            }
            free += 1
            slot = Int(links[slot].next)
        }
        if links.count != nodes.count { problems.append("\(links.count) links for \(nodes.count) slots") }
        if free + visited.count != nodes.count {
            problems.append("\(free) free + \(visited.count) live slots ≠ arena of \(nodes.count)")
        }
        return problems
    }
}
