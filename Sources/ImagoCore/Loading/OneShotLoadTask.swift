import Foundation

/// The handle of a load done in one step off the caller's thread (a `data:` URL, a file, a refusal): cancelling it
/// delivers `.failed(.cancelled)` unless the result was delivered first.
package final class OneShotLoadTask: DataLoadTask {
    let sink: EventSink
    /// Where the work waits for a slot when it was given a queue, to cancel it or change its priority there.
    private let queued: (queue: WorkQueue, item: WorkQueue.Item)?

    /// Runs `work` off the caller's thread and delivers its result to `handler`, unless cancelled first: on
    /// `queue` at `priority` when given (work that may block: reading a file, on ``WorkQueue/blocking``), else on a
    /// global queue (work that only computes, in a moment).
    package init(
        handler: @escaping @Sendable (DataLoadEvent) -> Void, queue: WorkQueue? = nil,
        priority: RequestPriority = .normal,
        work: @escaping @Sendable () -> Result<DataResponse, DataLoadingError>
    ) {
        let sink = EventSink(handler)
        self.sink = sink
        let run: @Sendable () -> Void = {
            guard !sink.isTerminated else { return }
            switch work() {
            case .success(let response): sink.send(.finished(response))
            case .failure(let error): sink.send(.failed(error))
            }
        }
        if let queue {
            queued = (queue, queue.enqueue(priority: priority, run))
        } else {
            queued = nil
            DispatchQueue.global().async(execute: run)
        }
    }

    /// A task that fails with `error` (asynchronously, so the handler never runs inside `load`).
    package static func failing(
        _ error: DataLoadingError, handler: @escaping @Sendable (DataLoadEvent) -> Void
    ) -> OneShotLoadTask {
        OneShotLoadTask(handler: handler) { .failure(error) }
    }

    /// Delivers `.failed(.cancelled)` unless a result came first; work still waiting for its queue's slot is
    /// dropped.
    package func cancel() {
        sink.cancel()
        if let queued { queued.queue.cancel(queued.item) }
    }

    /// Moves work still waiting on its queue to `priority`; no effect on a global queue's.
    package func setPriority(_ priority: RequestPriority) {
        if let queued { queued.queue.setPriority(queued.item, priority) }
    }
}
