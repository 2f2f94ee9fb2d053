import Foundation

extension DataLoading {
    /// Loads `request` and returns its response, or throws a ``DataLoadingError``. Cancelling the calling task
    /// cancels the load (it then throws `DataLoadingError.cancelled`). Progress events are ignored.
    ///
    /// ```swift
    /// let response = try await loader.data(for: DataRequest(url: url, priority: .high))
    /// ```
    public func data(for request: DataRequest) async throws -> DataResponse {
        let handle = CancellableHandle()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<DataResponse, any Error>) in
                let task = load(request) { event in
                    switch event {
                    case .finished(let response): continuation.resume(returning: response)
                    case .failed(let error): continuation.resume(throwing: error)
                    case .progress, .partialData: break
                    }
                }
                handle.set(task)
            }
        } onCancel: {
            handle.cancel()
        }
    }
}

/// Holds a load task that may arrive after its cancellation was requested.
private final class CancellableHandle: Sendable {
    private let state = Locked<(task: (any DataLoadTask)?, isCancelled: Bool)>((nil, false))

    func set(_ task: any DataLoadTask) {
        let isCancelled = state.withLock { s -> Bool in
            s.task = task
            return s.isCancelled
        }
        if isCancelled { task.cancel() }
    }

    func cancel() {
        let task = state.withLock { s -> (any DataLoadTask)? in
            s.isCancelled = true
            return s.task
        }
        task?.cancel()
    }
}
