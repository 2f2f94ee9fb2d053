import Foundation

/// Delivers one subscriber's ``DataLoadEvent``s to its handler in order, never two at once, never under a lock,
/// and with exactly one terminal event (`.finished` or `.failed`) after which nothing more is delivered.
///
/// Several threads may send at once (the network delegate, a canceller, a retry timer): whoever finds the sink
/// idle drains the pending events one by one (a ``DeliveryQueue``), releasing the lock around each handler call. A handler that cancels
/// from inside itself simply enqueues the `.failed(.cancelled)` that the loop delivers next.
package final class EventSink: Sendable {
    private struct State {
        var pending = DeliveryQueue<DataLoadEvent>()
        var isTerminated = false
    }

    private let handler: @Sendable (DataLoadEvent) -> Void
    private let state = Locked(State())

    /// A sink calling `handler`.
    package init(_ handler: @escaping @Sendable (DataLoadEvent) -> Void) {
        self.handler = handler
    }

    /// Whether the terminal event has been accepted (it may still be on its way to the handler).
    package var isTerminated: Bool { state.withLock { $0.isTerminated } }

    /// Queues `event` and delivers it unless a terminal event came first.
    package func send(_ event: DataLoadEvent) {
        let shouldDrain = state.withLock { s -> Bool in
            guard !s.isTerminated else { return false }
            switch event {
            case .finished, .failed: s.isTerminated = true
            case .progress, .partialData: break
            }
            s.pending.post(event)
            return s.pending.claimDrain()
        }
        if shouldDrain { drain() }
    }

    /// Ends the subscription with `.failed(.cancelled)`, dropping undelivered progress. Returns `false` when a
    /// terminal event had already been accepted (then nothing changes).
    @discardableResult
    package func cancel() -> Bool {
        let (accepted, shouldDrain) = state.withLock { s -> (Bool, Bool) in
            guard !s.isTerminated else { return (false, false) }
            s.isTerminated = true
            s.pending.removeAll()
            s.pending.post(.failed(.cancelled))
            return (true, s.pending.claimDrain())
        }
        if shouldDrain { drain() }
        return accepted
    }

    private func drain() {
        state.drain({ $0.pending.next() }, into: handler)
    }
}
