import Foundation
import Imago

/// A load from an ``ObjectStoreAuthorizing`` store: asks the store for its `Authorization` field, then loads
/// through `remote` with it. Cancelling before the field comes ends the load at once (`.failed(.cancelled)`); after,
/// it cancels the remote load. A priority set while waiting is passed on when the load starts.
final class AuthorizedLoadTask: DataLoadTask {
    private struct State {
        var inner: (any DataLoadTask)?
        var priority: RequestPriority
        var isCancelled = false
    }

    private let state: Locked<State>
    private let sink: EventSink

    init(
        _ request: DataRequest, store: any ObjectStoreAuthorizing, remote: any DataLoading,
        handler: @escaping @Sendable (DataLoadEvent) -> Void
    ) {
        let sink = EventSink(handler)
        self.sink = sink
        state = Locked(State(priority: request.priority))
        // Not kept to be cancelled: the field may come from an exchange other loads share, which runs on whatever
        // one caller does; `isCancelled` is what stops this load from starting.
        Task { [state] in
            let field: String?
            do throws(DataLoadingError) {
                field = try await store.authorization()
            } catch {
                sink.send(.failed(error))
                return
            }
            var authorized = request
            if let field { authorized.headers["Authorization"] = field }
            // Cancelled while the field was on its way (an exchange shared with other loads runs on): no load.
            guard let priority = state.withLock({ $0.isCancelled ? nil : $0.priority }) else { return }
            authorized.priority = priority
            let inner = remote.load(authorized) { sink.send($0) }
            let cancelled = state.withLock { state -> Bool in
                state.inner = inner
                return state.isCancelled
            }
            if cancelled { inner.cancel() }
        }
    }

    func cancel() {
        let inner = state.withLock { state -> (any DataLoadTask)? in
            state.isCancelled = true
            return state.inner
        }
        inner?.cancel()
        sink.send(.failed(.cancelled))
    }

    func setPriority(_ priority: RequestPriority) {
        let inner = state.withLock { state -> (any DataLoadTask)? in
            state.priority = priority
            return state.inner
        }
        inner?.setPriority(priority)
    }
}
