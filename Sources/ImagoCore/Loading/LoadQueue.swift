import Foundation

/// The order in which queued work of the same priority starts.
public enum QueueOrder: Sendable, Hashable, CustomStringConvertible {
    /// First in, first out: the oldest request starts first (the default).
    case fifo
    /// Last in, first out: the newest request starts first (suits scrolling lists, where the latest cell
    /// scrolled into view matters most).
    case lifo

    /// `fifo` or `lifo`.
    public var description: String { self == .fifo ? "fifo" : "lifo" }
}

/// A bounded, priority-ordered work queue: at most `maximumConcurrentCount` items run at once; queued items start
/// highest ``RequestPriority`` first, then in ``QueueOrder`` within a priority.
///
/// An item is identified by a caller-chosen `UInt64`. When a slot is free the queue calls the item's `start`
/// closure (outside its lock, on the thread that freed the slot or enqueued); the item then holds the slot until
/// someone calls ``finish(_:)`` with its id. ``finish(_:)`` is idempotent and also removes a still-queued item, so
/// a canceller can call it without knowing whether the item has started.
///
/// The project's one priority queue: the loaders' ``LoadCoordinator`` holds a slot per transfer (from its start
/// until its last callback, on other threads), and ``WorkQueue`` takes a slot for each closure it runs on Dispatch
/// (decode, process, encode, disk), giving it back when the closure returns.
///
/// Thread-safe; no closure runs while the queue's lock is held.
package final class LoadQueue: Sendable {
    /// One queued item.
    private struct Item {
        var priority: RequestPriority
        /// Which entry in the per-priority lists is current (older entries are stale and skipped).
        var generation: UInt64
        var start: @Sendable () -> Void
        var onCancel: (@Sendable () -> Void)?
    }

    private struct Entry {
        var id: UInt64
        var generation: UInt64
    }

    /// A list per priority with lazy deletion: removing an item only deletes it from `queued`; its entry is skipped
    /// when it reaches an end of the list. Keeps enqueue, removal and re-prioritisation O(1).
    private struct Lane {
        var entries: [Entry] = []
        var head = 0

        mutating func append(_ e: Entry) { entries.append(e) }

        mutating func compactIfNeeded() {
            if head > 64 && head * 2 > entries.count {
                entries.removeFirst(head)
                head = 0
            }
            if head == entries.count {
                entries.removeAll(keepingCapacity: true)
                head = 0
            }
        }
    }

    private struct State {
        var maximum: Int
        var order: QueueOrder
        var isSuspended = false
        var queued: [UInt64: Item] = [:]
        var lanes = [Lane](repeating: Lane(), count: RequestPriority.allCases.count)
        var running: [UInt64: (@Sendable () -> Void)?] = [:]
        var nextGeneration: UInt64 = 0
        var maximumObservedRunning = 0

        /// Removes and returns the next item to start, if any.
        mutating func popNext() -> (UInt64, Item)? {
            for level in stride(from: lanes.count - 1, through: 0, by: -1) {
                while lanes[level].head < lanes[level].entries.count {
                    let entry: Entry
                    if order == .fifo {
                        entry = lanes[level].entries[lanes[level].head]
                        lanes[level].head += 1
                    } else {
                        entry = lanes[level].entries.removeLast()
                    }
                    lanes[level].compactIfNeeded()
                    if let item = queued[entry.id], item.generation == entry.generation {
                        queued[entry.id] = nil
                        return (entry.id, item)
                    }
                }
            }
            return nil
        }

        /// Moves queued items to running while slots are free; returns their start closures.
        mutating func takeStartable() -> [@Sendable () -> Void] {
            var starts: [@Sendable () -> Void] = []
            while !isSuspended && running.count < maximum, let (id, item) = popNext() {
                running[id] = item.onCancel
                starts.append(item.start)
            }
            maximumObservedRunning = max(maximumObservedRunning, running.count)
            return starts
        }

        mutating func insert(_ id: UInt64, _ item: Item) {
            var item = item
            nextGeneration += 1
            item.generation = nextGeneration
            queued[id] = item
            lanes[item.priority.rawValue].append(Entry(id: id, generation: nextGeneration))
        }
    }

    private let state: Locked<State>

    /// A queue running at most `maximumConcurrentCount` items at once (at least 1), in `order` within a priority.
    package init(maximumConcurrentCount: Int, order: QueueOrder = .fifo) {
        state = Locked(State(maximum: max(1, maximumConcurrentCount), order: order))
    }

    /// Adds an item; `start` is called once a slot is free (possibly before this returns). `onCancel` is called by
    /// ``cancelAll()`` only. Enqueuing an id that is already queued or running replaces nothing and is ignored.
    package func enqueue(
        id: UInt64, priority: RequestPriority, onCancel: (@Sendable () -> Void)? = nil,
        start: @escaping @Sendable () -> Void
    ) {
        let starts = state.withLock { s -> [@Sendable () -> Void] in
            guard s.queued[id] == nil, s.running[id] == nil else { return [] }
            s.insert(id, Item(priority: priority, generation: 0, start: start, onCancel: onCancel))
            return s.takeStartable()
        }
        for start in starts { start() }
    }

    /// Changes the priority of a queued item (no effect once it runs or when it is unknown).
    package func setPriority(_ priority: RequestPriority, for id: UInt64) {
        state.withLock { s in
            guard let item = s.queued[id], item.priority != priority else { return }
            var moved = item
            moved.priority = priority
            s.insert(id, moved)
        }
    }

    /// Removes the item: frees its slot if it runs (starting the next queued item), or drops it if it still waits.
    /// Returns `true` when the item was still waiting. Idempotent.
    @discardableResult
    package func finish(_ id: UInt64) -> Bool {
        let (wasQueued, starts) = state.withLock { s -> (Bool, [@Sendable () -> Void]) in
            if s.queued.removeValue(forKey: id) != nil { return (true, []) }
            guard s.running.removeValue(forKey: id) != nil else { return (false, []) }
            return (false, s.takeStartable())
        }
        for start in starts { start() }
        return wasQueued
    }

    /// Stops starting queued items (running ones continue) until ``resume()``.
    package func suspend() { state.withLock { $0.isSuspended = true } }

    /// Starts queued items again, as many as there are free slots.
    package func resume() {
        let starts = state.withLock { s -> [@Sendable () -> Void] in
            s.isSuspended = false
            return s.takeStartable()
        }
        for start in starts { start() }
    }

    /// Whether the queue is suspended.
    package var isSuspended: Bool { state.withLock { $0.isSuspended } }

    /// Drops every queued item and forgets every running one, calling each item's `onCancel` (outside the lock).
    package func cancelAll() {
        let cancels = state.withLock { s -> [@Sendable () -> Void] in
            let all = s.queued.values.compactMap(\.onCancel) + s.running.values.compactMap { $0 }
            s.queued.removeAll()
            s.running.removeAll()
            s.lanes = [Lane](repeating: Lane(), count: RequestPriority.allCases.count)
            return all
        }
        for cancel in cancels { cancel() }
    }

    /// The number of items waiting.
    package var queuedCount: Int { state.withLock { $0.queued.count } }

    /// The number of items holding a slot.
    package var runningCount: Int { state.withLock { $0.running.count } }

    /// The most items that ever held a slot at the same time.
    package var maximumObservedRunningCount: Int { state.withLock { $0.maximumObservedRunning } }
}
