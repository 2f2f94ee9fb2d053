/// The in-memory index of a ``DiskCache``: for each entry its file size, times and seal, in LRU order, with the
/// total size. O(1) insert, touch, remove and least-recently-used lookup: a dictionary from digest to a slot in
/// one array of nodes linked in both directions (no per-node allocation, so 100,000 entries load fast).
package struct DiskCacheIndex: Sendable {
    /// One entry as the index knows it.
    package struct Record: Sendable, Hashable {
        package var digest: SHA256Digest
        /// The size of the entry file in bytes (header included).
        package var size: UInt64
        /// When the bytes were stored (seconds since the reference date).
        package var storedAt: Double
        /// When the entry was last read or stored.
        package var lastAccess: Double
        /// The seal of the file version whose payload checksum passed (or that a process wrote) during the boot
        /// named in the seal, 0 when none (see `DiskCache+Verified.swift`).
        package var seal: UInt64

        package init(digest: SHA256Digest, size: UInt64, storedAt: Double, lastAccess: Double, seal: UInt64 = 0) {
            self.digest = digest
            self.size = size
            self.storedAt = storedAt
            self.lastAccess = lastAccess
            self.seal = seal
        }
    }

    private struct Node: Sendable {
        var record: Record
        var older: Int32
        var newer: Int32
    }

    private var nodes: [Node] = []
    private var freeSlots: [Int32] = []
    private var slots: [SHA256Digest: Int32] = [:]
    private var oldest: Int32 = -1
    private var newest: Int32 = -1
    /// The sum of the sizes of all records.
    package private(set) var totalBytes: UInt64 = 0

    package init() {}

    /// The number of entries.
    package var count: Int { slots.count }

    /// The record for `digest`, if present.
    package func record(for digest: SHA256Digest) -> Record? {
        slots[digest].map { nodes[Int($0)].record }
    }

    /// The least recently used record.
    package var leastRecentlyUsed: Record? { oldest < 0 ? nil : nodes[Int(oldest)].record }

    /// Inserts or replaces `record` and makes it the most recently used.
    package mutating func put(_ record: Record) {
        if let slot = slots[record.digest] {
            totalBytes = totalBytes - nodes[Int(slot)].record.size + record.size
            nodes[Int(slot)].record = record
            moveToNewest(slot)
            return
        }
        let node = Node(record: record, older: newest, newer: -1)
        let slot: Int32
        if let free = freeSlots.popLast() {
            slot = free
            nodes[Int(slot)] = node
        } else {
            slot = Int32(nodes.count)
            nodes.append(node)
        }
        if newest >= 0 { nodes[Int(newest)].newer = slot }
        newest = slot
        if oldest < 0 { oldest = slot }
        slots[record.digest] = slot
        totalBytes += record.size
    }

    /// Records a read at `time`: the entry becomes the most recently used. Returns whether it was present.
    @discardableResult
    package mutating func touch(_ digest: SHA256Digest, at time: Double) -> Bool {
        guard let slot = slots[digest] else { return false }
        if time > nodes[Int(slot)].record.lastAccess { nodes[Int(slot)].record.lastAccess = time }
        moveToNewest(slot)
        return true
    }

    /// Sets the seal of `digest`'s record (its LRU position unchanged). Returns whether it was present.
    @discardableResult
    package mutating func seal(_ digest: SHA256Digest, _ seal: UInt64) -> Bool {
        guard let slot = slots[digest] else { return false }
        nodes[Int(slot)].record.seal = seal
        return true
    }

    /// Removes the entry for `digest`; returns its record.
    @discardableResult
    package mutating func remove(_ digest: SHA256Digest) -> Record? {
        guard let slot = slots.removeValue(forKey: digest) else { return nil }
        unlink(slot)
        let record = nodes[Int(slot)].record
        totalBytes -= record.size
        freeSlots.append(slot)
        return record
    }

    /// Removes everything.
    package mutating func removeAll() { self = DiskCacheIndex() }

    /// Every record, least recently used first.
    package func recordsInLRUOrder() -> [Record] {
        var out: [Record] = []
        out.reserveCapacity(count)
        var slot = oldest
        while slot >= 0 {
            out.append(nodes[Int(slot)].record)
            slot = nodes[Int(slot)].newer
        }
        return out
    }

    /// Reserves room for `n` entries (before loading a snapshot).
    package mutating func reserveCapacity(_ n: Int) {
        nodes.reserveCapacity(n)
        slots.reserveCapacity(n)
    }

    private mutating func unlink(_ slot: Int32) {
        let node = nodes[Int(slot)]
        if node.older >= 0 { nodes[Int(node.older)].newer = node.newer } else { oldest = node.newer }
        if node.newer >= 0 { nodes[Int(node.newer)].older = node.older } else { newest = node.older }
        nodes[Int(slot)].older = -1
        nodes[Int(slot)].newer = -1
    }

    private mutating func moveToNewest(_ slot: Int32) {
        guard newest != slot else { return }
        unlink(slot)
        nodes[Int(slot)].older = newest
        if newest >= 0 { nodes[Int(newest)].newer = slot }
        newest = slot
        if oldest < 0 { oldest = slot }
    }
}
