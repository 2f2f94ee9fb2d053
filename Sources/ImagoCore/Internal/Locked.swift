#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A value guarded by one mutex: the single way shared mutable state is kept in Imago.
///
/// `withLock` runs a short closure with exclusive access; never call out to user code, decoders or delegates
/// from inside it (copy what you need, release the lock, then call out).
// @unchecked Sendable: `state` is only ever touched between pthread_mutex_lock and pthread_mutex_unlock.
package final class Locked<State>: @unchecked Sendable {
    private var state: State
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    package init(_ state: State) {
        self.state = state
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the lock held and returns its result.
    @inline(__always)
    package func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }

    /// A copy of the current value.
    package var value: State { withLock { $0 } }
}
