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
//
// The state lives behind a pointer rather than in a stored `var`: an inout access to a class's stored property is
// checked for exclusivity at run time (swift_beginAccess/endAccess, a thread-local lookup each), which the mutex
// already guarantees; on a memory-cache hit that check cost about a tenth of the lookup.
package final class Locked<State>: @unchecked Sendable {
    private let state: UnsafeMutablePointer<State>
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    package init(_ state: State) {
        self.state = .allocate(capacity: 1)
        self.state.initialize(to: state)
        mutex = .allocate(capacity: 1)
        #if canImport(Glibc)
            // Adaptive: a contended lock spins briefly before sleeping in the kernel. Every critical section here
            // is short by rule, so the holder is usually done within the spin; a plain mutex would put the
            // second thread to sleep and wake it (two syscalls) on every collision.
            var attributes = pthread_mutexattr_t()
            pthread_mutexattr_init(&attributes)
            pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP))
            pthread_mutex_init(mutex, &attributes)
            pthread_mutexattr_destroy(&attributes)
        #else
            pthread_mutex_init(mutex, nil)
        #endif
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        state.deinitialize(count: 1)
        state.deallocate()
    }

    /// Runs `body` with the lock held and returns its result.
    @inline(__always)
    package func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state.pointee)
    }

    /// A copy of the current value.
    package var value: State { withLock { $0 } }
}
