import Foundation

extension FailureCache {
    /// A least-recently-used map from key to failure with O(1) lookup, update and eviction: a dictionary of slot
    /// indices into an array of nodes linked in use order (no per-entry allocation, slots reused).
    struct Store {
        private struct Node {
            var key: Key
            var value: Failure
            var previous: Int
            var next: Int
        }

        private let limit: Int
        private var index: [Key: Int] = [:]
        private var nodes: [Node] = []
        private var free: [Int] = []
        /// Most recently used.
        private var head = -1
        /// Least recently used.
        private var tail = -1

        init(limit: Int) { self.limit = limit }

        var count: Int { index.count }

        /// The value for `key`, marking it most recently used.
        mutating func get(_ key: Key) -> Failure? {
            guard let slot = index[key] else { return nil }
            moveToFront(slot)
            return nodes[slot].value
        }

        /// The value for `key` without touching the use order.
        func peek(_ key: Key) -> Failure? {
            index[key].map { nodes[$0].value }
        }

        /// Stores `value`, evicting the least recently used entry past the limit.
        mutating func set(_ key: Key, _ value: Failure) {
            if let slot = index[key] {
                nodes[slot].value = value
                moveToFront(slot)
                return
            }
            if index.count >= limit, tail >= 0 { _ = remove(nodes[tail].key) }
            let node = Node(key: key, value: value, previous: -1, next: head)
            let slot: Int
            if let reused = free.popLast() {
                nodes[reused] = node
                slot = reused
            } else {
                nodes.append(node)
                slot = nodes.count - 1
            }
            if head >= 0 { nodes[head].previous = slot }
            head = slot
            if tail < 0 { tail = slot }
            index[key] = slot
        }

        /// Removes `key`; returns whether it was present.
        mutating func remove(_ key: Key) -> Bool {
            guard let slot = index.removeValue(forKey: key) else { return false }
            unlink(slot)
            free.append(slot)
            return true
        }

        mutating func removeAll() {
            index.removeAll()
            nodes.removeAll()
            free.removeAll()
            head = -1
            tail = -1
        }

        private mutating func unlink(_ slot: Int) {
            let (p, n) = (nodes[slot].previous, nodes[slot].next)
            if p >= 0 { nodes[p].next = n } else { head = n }
            if n >= 0 { nodes[n].previous = p } else { tail = p }
            nodes[slot].previous = -1
            nodes[slot].next = -1
        }

        private mutating func moveToFront(_ slot: Int) {
            guard slot != head else { return }
            unlink(slot)
            nodes[slot].next = head
            if head >= 0 { nodes[head].previous = slot }
            head = slot
            if tail < 0 { tail = slot }
        }
    }
}
