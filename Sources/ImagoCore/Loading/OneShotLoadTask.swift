import Foundation

/// The handle of a load done in one step off the caller's thread (a `data:` URL, a file, a refusal): cancelling it
/// delivers `.failed(.cancelled)` unless the result was delivered first.
package final class OneShotLoadTask: DataLoadTask {
    let sink: EventSink

    /// Runs `work` on a global queue and delivers its result to `handler`, unless cancelled first.
    package init(
        handler: @escaping @Sendable (DataLoadEvent) -> Void,
        work: @escaping @Sendable () -> Result<DataResponse, DataLoadingError>
    ) {
        let sink = EventSink(handler)
        self.sink = sink
        DispatchQueue.global().async {
            guard !sink.isTerminated else { return }
            switch work() {
            case .success(let response): sink.send(.finished(response))
            case .failure(let error): sink.send(.failed(error))
            }
        }
    }

    /// A task that fails with `error` (asynchronously, so the handler never runs inside `load`).
    package static func failing(
        _ error: DataLoadingError, handler: @escaping @Sendable (DataLoadEvent) -> Void
    ) -> OneShotLoadTask {
        OneShotLoadTask(handler: handler) { .failure(error) }
    }

    /// Delivers `.failed(.cancelled)` unless a result came first.
    package func cancel() { sink.cancel() }

    /// No effect: the work is not queued.
    package func setPriority(_ priority: RequestPriority) {}
}
