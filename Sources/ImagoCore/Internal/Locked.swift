import Synchronization

/// A value guarded by one lock: the way shared mutable state is kept in Imago.
///
/// `withLock` runs a short closure with exclusive access; never call out to user code, decoders or delegates
/// from inside it (copy what you need, release the lock, then call out).
///
/// Backed by the standard library's `Synchronization.Mutex`. A reference type, so that the closures and objects
/// that share a lock can hold it; `Sendable` when its state is. The memory cache's hit path uses
/// ``CacheLineLocked`` instead, where a benchmark row shows the difference (see that type).
///
/// ```swift
/// let counter = Locked(0)
/// counter.withLock { $0 += 1 }
/// ```
package final class Locked<State> {
    private let mutex: Mutex<State>

    /// A lock guarding `state`.
    package init(_ state: consuming State) {
        mutex = Mutex(Unchecked(value: state).take())
    }

    /// Runs `body` with the lock held and returns its result.
    @inline(__always)
    package func withLock<R, E: Error>(_ body: (inout State) throws(E) -> R) throws(E) -> R {
        // `Mutex` asks for a `sending` state and result, which a state that is not `Sendable` cannot give (the
        // decoder an animation's frame source keeps, the work graph's nodes). The lock itself keeps the state
        // exclusive, as it does for `Mutex`, and such a `Locked` is not `Sendable`; so both are handed over
        // unchecked.
        try mutex.withLock { (state: inout sending State) throws(E) -> Unchecked<R> in
            Unchecked(value: try body(&state))
        }.value
    }

    /// A copy of the current value.
    package var value: State { withLock { $0 } }

    private struct Unchecked<Value>: @unchecked Sendable {
        var value: Value
        consuming func take() -> sending Value { value }
    }
}

extension Locked: Sendable where State: Sendable {}
