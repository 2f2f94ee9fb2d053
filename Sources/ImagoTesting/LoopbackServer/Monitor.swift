#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A value guarded by one mutex with a condition variable, so threads can block until the value changes.
///
/// Like `Locked`, but threads may `wait(until:)` a predicate; every `withLock` that changes what waiters look at
/// broadcasts. Never call out to user code while holding it.
// @unchecked Sendable: `state` is only ever touched between pthread_mutex_lock and pthread_mutex_unlock.
final class Monitor<State>: @unchecked Sendable {
    private var state: State
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    init(_ state: State) {
        self.state = state
        mutex = .allocate(capacity: 1)
        condition = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Runs `body` with the lock held, then wakes every waiter so it re-checks its predicate.
    @inline(__always)
    func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer {
            pthread_cond_broadcast(condition)
            pthread_mutex_unlock(mutex)
        }
        return try body(&state)
    }

    /// Blocks the calling thread until `predicate` holds, then runs `body` with the lock still held.
    func wait<R>(until predicate: (State) -> Bool, then body: (inout State) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer {
            pthread_cond_broadcast(condition)
            pthread_mutex_unlock(mutex)
        }
        while !predicate(state) {
            pthread_cond_wait(condition, mutex)
        }
        return try body(&state)
    }
}
