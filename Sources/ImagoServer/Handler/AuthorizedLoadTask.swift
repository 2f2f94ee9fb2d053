import Foundation
import Imago

/// A load from an ``ObjectStoreAuthorizing`` store: asks the store for the request as it is sent now (its token,
/// its address), then loads through `remote`. When the store refuses it with HTTP 401 and says to try again
/// (``ObjectStoreAuthorizing/refused(_:)``), it is asked once more and the load made again. Cancelling before a
/// load starts ends it at once (`.failed(.cancelled)`); after, it cancels the remote load. A priority set while
/// waiting is passed on when the load starts.
final class AuthorizedLoadTask: DataLoadTask {
    private struct State {
        var inner: (any DataLoadTask)?
        var priority: RequestPriority
        var isCancelled = false
    }

    private let state: Locked<State>
    private let sink: EventSink
    private let request: DataRequest
    private let store: any ObjectStoreAuthorizing
    private let remote: any DataLoading

    init(
        _ request: DataRequest, store: any ObjectStoreAuthorizing, remote: any DataLoading,
        handler: @escaping @Sendable (DataLoadEvent) -> Void
    ) {
        sink = EventSink(handler)
        state = Locked(State(priority: request.priority))
        self.request = request
        self.store = store
        self.remote = remote
        start(retrying: true)
    }

    /// Asks the store for the request, then loads it; with `retrying`, a 401 the store lets be tried again starts
    /// another attempt instead of failing. Not kept to be cancelled: the store's token may come from an exchange
    /// other loads share, which runs on whatever one caller does; `isCancelled` is what stops a load from starting.
    private func start(retrying: Bool) {
        Task { [self] in
            let authorized: DataRequest
            do throws(DataLoadingError) {
                authorized = try await store.authorized(request)
            } catch {
                sink.send(.failed(error))
                return
            }
            // Cancelled while the token was on its way (an exchange shared with other loads runs on): no load.
            guard let priority = state.withLock({ $0.isCancelled ? nil : $0.priority }) else { return }
            var sent = authorized
            sent.priority = priority
            let inner = remote.load(sent) { [self, sent] event in
                if retrying, case .failed(.statusCode(401, _)) = event, store.refused(sent) {
                    start(retrying: false)
                } else {
                    sink.send(event)
                }
            }
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
