import ImagoCore

/// Wraps the injected loader to count completed origin fetches and their bytes for the metrics.
struct CountingDataLoader: DataLoading {
    let base: any DataLoading
    let onFetched: @Sendable (Int) -> Void

    func load(_ request: DataRequest, handler: @escaping @Sendable (DataLoadEvent) -> Void) -> any DataLoadTask {
        base.load(request) { [onFetched] event in
            if case .finished(let response) = event { onFetched(response.data.count) }
            handler(event)
        }
    }
}
