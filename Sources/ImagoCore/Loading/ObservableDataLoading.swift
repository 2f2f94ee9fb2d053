import Foundation

/// A ``DataLoading`` whose transfers can be observed as ``DataLoaderEvent``s (``HTTPDataLoader`` and the libcurl
/// loader of `ImagoCurl`), for metrics, logs and ``NetworkActivityObserver``.
public protocol ObservableDataLoading: DataLoading {
    /// Adds an observer of ``DataLoaderEvent``s, called outside any lock; returns the token to remove it.
    @discardableResult
    func addObserver(_ observer: @escaping @Sendable (DataLoaderEvent) -> Void) -> DataLoaderObserverToken

    /// Removes the observer added with `token`.
    func removeObserver(_ token: DataLoaderObserverToken)
}

extension HTTPDataLoader: ObservableDataLoading {}

extension ObservableDataLoading {
    /// Adds an observer; with `includingMetrics`, it also receives ``DataLoaderEvent/measured(url:metrics:)`` from
    /// loaders that measure their transfers. This default ignores `includingMetrics` (no metrics to give).
    @discardableResult
    public func addObserver(
        includingMetrics: Bool, _ observer: @escaping @Sendable (DataLoaderEvent) -> Void
    ) -> DataLoaderObserverToken {
        addObserver(observer)
    }
}
