import Foundation

/// Counts a loader's transfers in flight (started and not yet finished or failed), for a network-activity
/// indicator. It subscribes through the loader's observer API; the loader does not know it exists.
///
/// ```swift
/// let activity = NetworkActivityObserver { count in print("\(count) transfers in flight") }
/// activity.observe(loader)
/// ```
public final class NetworkActivityObserver: Sendable {
    private let count = Locked(0)
    private let onChange: (@Sendable (Int) -> Void)?

    /// An observer calling `onChange` (default none) with the new count after each change, outside any lock.
    public init(onChange: (@Sendable (Int) -> Void)? = nil) {
        self.onChange = onChange
    }

    /// Subscribes to `loader`'s events; returns the token to stop observing.
    @discardableResult
    public func observe(_ loader: any ObservableDataLoading) -> DataLoaderObserverToken {
        loader.addObserver { [self] event in handle(event) }
    }

    /// The number of transfers in flight.
    public var inFlightCount: Int { count.value }

    /// Updates the count from one event (exposed so any event source can drive it).
    public func handle(_ event: DataLoaderEvent) {
        let delta: Int
        switch event {
        case .started: delta = 1
        case .finished, .failed: delta = -1
        case .coalesced, .retried, .measured: return
        }
        let value = count.withLock { c -> Int in
            c += delta
            return c
        }
        onChange?(value)
    }
}
