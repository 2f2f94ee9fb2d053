import Foundation

/// A list of event observers, called outside any lock in the order they were added.
package final class DataLoaderObservers: Sendable {
    private let state = Locked<(next: UInt64, observers: [(UInt64, @Sendable (DataLoaderEvent) -> Void)])>(
        (0, []))

    package init() {}

    /// Adds `observer`; returns its token.
    package func add(_ observer: @escaping @Sendable (DataLoaderEvent) -> Void) -> DataLoaderObserverToken {
        state.withLock { s in
            s.next += 1
            s.observers.append((s.next, observer))
            return DataLoaderObserverToken(id: s.next)
        }
    }

    /// Removes the observer added with `token` (no effect if already removed).
    package func remove(_ token: DataLoaderObserverToken) {
        state.withLock { s in s.observers.removeAll { $0.0 == token.id } }
    }

    /// Whether anyone listens (so events need not be built).
    package var isEmpty: Bool { state.withLock { $0.observers.isEmpty } }

    /// Calls every observer with each event, in order.
    package func emit(_ events: [DataLoaderEvent]) {
        guard !events.isEmpty else { return }
        let observers = state.withLock { $0.observers }
        for event in events {
            for (_, observer) in observers { observer(event) }
        }
    }
}
