import Foundation

/// A list of event observers, called outside any lock in the order they were added.
package final class DataLoaderObservers: Sendable {
    private struct Observer {
        let id: UInt64
        /// Whether it receives ``DataLoaderEvent/measured(url:metrics:)``.
        let includesMetrics: Bool
        let call: @Sendable (DataLoaderEvent) -> Void
    }

    private let state = Locked<(next: UInt64, observers: [Observer])>((0, []))

    package init() {}

    /// Adds `observer` (given `.measured` events only when `includingMetrics`); returns its token.
    package func add(
        includingMetrics: Bool = false, _ observer: @escaping @Sendable (DataLoaderEvent) -> Void
    ) -> DataLoaderObserverToken {
        state.withLock { s in
            s.next += 1
            s.observers.append(Observer(id: s.next, includesMetrics: includingMetrics, call: observer))
            return DataLoaderObserverToken(id: s.next)
        }
    }

    /// Removes the observer added with `token` (no effect if already removed).
    package func remove(_ token: DataLoaderObserverToken) {
        state.withLock { s in s.observers.removeAll { $0.id == token.id } }
    }

    /// Whether anyone listens (so events need not be built).
    package var isEmpty: Bool { state.withLock { $0.observers.isEmpty } }

    /// Calls every observer with each event, in order.
    package func emit(_ events: [DataLoaderEvent]) {
        guard !events.isEmpty else { return }
        let observers = state.withLock { $0.observers }
        for event in events {
            let isMetrics: Bool
            if case .measured = event { isMetrics = true } else { isMetrics = false }
            for observer in observers where observer.includesMetrics || !isMetrics { observer.call(event) }
        }
    }
}
