import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where threads that gave up spinning on a ``Locked`` sleep until it is released.
///
/// A fixed set of mutex and condition pairs shared by every lock in the process, chosen by the lock's address, so
/// a lock costs no kernel object of its own. Several locks may share a pair: a release wakes every thread parked
/// on that pair, and each checks its own lock again (a spurious wake-up costs a failed exchange and another wait).
package enum ParkingLot {
    // 64 pairs: parking is the rare path (a holder descheduled, or blocked in I/O such as the disk cache's flock),
    // so collisions between unrelated locks are rarer still.
    private static let stripeCount = 64
    // nonisolated(unsafe): the pointer never changes; the pairs behind it are only used through pthread calls.
    private nonisolated(unsafe) static let stripes: UnsafeMutablePointer<Stripe> = {
        let stripes = UnsafeMutablePointer<Stripe>.allocate(capacity: stripeCount)
        for index in 0..<stripeCount {
            (stripes + index).initialize(to: Stripe(mutex: pthread_mutex_t(), condition: pthread_cond_t()))
            pthread_mutex_init(&stripes[index].mutex, nil)
            pthread_cond_init(&stripes[index].condition, nil)
        }
        return stripes  // never freed: lives as long as the process
    }()

    private struct Stripe {
        var mutex: pthread_mutex_t
        var condition: pthread_cond_t
    }

    /// Threads that have gone to sleep on a lock since launch (for tests and diagnostics).
    package static let parkCount = Atomic<Int>(0)

    /// Marks the lock at `address` as having a parked thread, then sleeps until a release wakes it. Returns true
    /// when the lock turned out to be free and is now held (as 2); false after a wake-up, when the caller should
    /// spin again before parking again (spinning rather than sleeping straight away keeps a lock that is taken
    /// and released at a high rate from paying a wake-up on every release). `word` is the lock's state: 0 free,
    /// 1 held, 2 held and a thread may be parked.
    static func park(on word: borrowing Atomic<UInt32>, address: UnsafeRawPointer) -> Bool {
        let stripe = self.stripe(for: address)
        pthread_mutex_lock(&stripe.pointee.mutex)
        // Exchanging under the stripe's mutex closes the race with `unpark`: a release that sees 2 takes this
        // mutex before broadcasting, so it cannot fall between this check and the wait.
        let taken = word.exchange(2, ordering: .acquiring) == 0
        if !taken {
            parkCount.add(1, ordering: .relaxed)
            pthread_cond_wait(&stripe.pointee.condition, &stripe.pointee.mutex)
        }
        pthread_mutex_unlock(&stripe.pointee.mutex)
        return taken
    }

    /// Wakes the threads parked on the lock at `address` (and any sharing its stripe).
    static func unpark(address: UnsafeRawPointer) {
        let stripe = self.stripe(for: address)
        pthread_mutex_lock(&stripe.pointee.mutex)
        pthread_cond_broadcast(&stripe.pointee.condition)
        pthread_mutex_unlock(&stripe.pointee.mutex)
    }

    private static func stripe(for address: UnsafeRawPointer) -> UnsafeMutablePointer<Stripe> {
        // Locks are cache-line aligned: drop those bits, then mix so neighbouring allocations spread.
        let bits = UInt(bitPattern: address) >> 6
        return stripes + Int((bits ^ (bits >> 6) ^ (bits >> 12)) % UInt(stripeCount))
    }
}
