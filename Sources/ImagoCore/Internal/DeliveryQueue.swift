/// Deliveries posted while a lock is held and made after it is released, in the order posted, by one thread at a
/// time: the one "deliver after unlocking" mechanism (``ImageTask``'s event streams, ``EventSink``'s handler).
///
/// Lives inside a ``Locked`` state. Whoever posts while nobody drains becomes the drainer (``claimDrain()``
/// returns true) and calls ``Locked/drain(_:into:)`` once the lock is released; a thread that posts while another
/// drains returns at once, and the drainer delivers its items too. The drainer takes one item at a time, so an
/// item removed by ``removeAll()`` during a delivery (a handler that cancels) is never delivered.
package struct DeliveryQueue<Item> {
    private var items: [Item] = []
    private var head = 0
    private var isDraining = false

    /// An empty queue with no drainer.
    package init() {}

    /// Whether nothing waits to be delivered.
    package var isEmpty: Bool { head == items.count }

    /// Queues `item` behind the others.
    package mutating func post(_ item: Item) {
        items.append(item)
    }

    /// Drops every item not yet delivered.
    package mutating func removeAll() {
        items.removeAll()
        head = 0
    }

    /// Whether the caller becomes the drainer: nobody else is draining and something waits.
    package mutating func claimDrain() -> Bool {
        guard !isDraining, !isEmpty else { return false }
        isDraining = true
        return true
    }

    /// The next item for the drainer; `nil` when none is left, which ends the drain.
    package mutating func next() -> Item? {
        guard !isEmpty else {
            items.removeAll(keepingCapacity: true)
            head = 0
            isDraining = false
            return nil
        }
        defer { head += 1 }
        return items[head]
    }
}

extension DeliveryQueue: Sendable where Item: Sendable {}

extension Locked {
    /// Drains a ``DeliveryQueue`` kept in the state: takes its next item under the lock (`next`, usually
    /// `{ $0.queue.next() }`) and calls `deliver` with it after releasing the lock, until none is left. Call it
    /// only after ``DeliveryQueue/claimDrain()`` returned true.
    package func drain<Item>(_ next: (inout State) -> Item?, into deliver: (Item) -> Void) {
        while let item = withLock(next) { deliver(item) }
    }
}
