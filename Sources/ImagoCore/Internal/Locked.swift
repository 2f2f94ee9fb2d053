import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A value guarded by one lock: the single way shared mutable state is kept in Imago.
///
/// `withLock` runs a short closure with exclusive access; never call out to user code, decoders or delegates
/// from inside it (copy what you need, release the lock, then call out). `Sendable` when its state is.
///
/// The lock is one atomic word. Taking a free lock is one compare-and-exchange and releasing it one exchange,
/// inlined at the call site. A thread that finds it held spins with exponential back-off (a bounded number of
/// reads of a line of its own between two polls of the word), and after a short spin budget sleeps in the
/// ``ParkingLot`` until a release wakes it. Not fair: a thread that releases and takes the lock again at once
/// usually keeps it.
///
/// Why not the standard library's `Synchronization.Mutex`, for any use:
/// - On Linux `Mutex` hands a contended lock over through a priority-inheritance futex in the kernel, which
///   ThreadSanitizer cannot see: every contended use then reports a false data race, and the TSan leg of CI
///   fails (a ten-line program shows it; see RELIABILITY.md, "Locks and ThreadSanitizer"). This lock's hand-overs
///   are atomic operations TSan follows.
/// - The memory cache's hit path: the word shares its cache line with the first bytes of the state, where a
///   state keeps the fields every call writes (``LRUCache`` does), so a change of owner between two threads moves
///   one line where it would move two. The memory-cache rows of BENCHMARKS.md measure it against `Mutex`.
// @unchecked Sendable (when the state is Sendable): the state is only ever touched while the word is held.
//
// The word and the state share one allocation, aligned to a cache line: the word first, the state right after it
// (at 8 bytes for most states). The state is reached through a pointer, never a stored `var`: an inout access to
// a class's stored property is checked for exclusivity at run time (swift_beginAccess/endAccess), which the lock
// already guarantees.
package final class Locked<State> {
    private let storage: UnsafeMutableRawPointer
    // 0: free; 1: held; 2: held, and a thread may be parked (the release must wake it).
    private var word: UnsafeMutablePointer<Atomic<UInt32>> {
        storage.assumingMemoryBound(to: Atomic<UInt32>.self)
    }
    private var state: UnsafeMutablePointer<State> {
        (storage + Self.stateOffset).assumingMemoryBound(to: State.self)
    }

    package init(_ state: State) {
        storage = UnsafeMutableRawPointer.allocate(
            byteCount: Self.stateOffset + MemoryLayout<State>.stride,
            alignment: max(Self.cacheLine, MemoryLayout<State>.alignment))
        storage.bindMemory(to: Atomic<UInt32>.self, capacity: 1).initialize(to: Atomic(0))
        (storage + Self.stateOffset).bindMemory(to: State.self, capacity: 1).initialize(to: state)
    }

    deinit {
        state.deinitialize(count: 1)
        word.deinitialize(count: 1)
        storage.deallocate()
    }

    /// The state's place in the lock's allocation, which is cache-line aligned: the word's 4 bytes rounded up to
    /// the state's alignment.
    package static var stateOffset: Int {
        let alignment = MemoryLayout<State>.alignment
        return (MemoryLayout<Atomic<UInt32>>.size + alignment - 1) / alignment * alignment
    }

    /// Runs `body` with the lock held and returns its result.
    @inline(__always)
    package func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        if !word.pointee.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged { lockContended() }
        defer { if word.pointee.exchange(0, ordering: .releasing) == 2 { ParkingLot.unpark(address: address) } }
        return try body(&state.pointee)
    }

    /// A copy of the current value.
    package var value: State { withLock { $0 } }

    private var address: UnsafeRawPointer { UnsafeRawPointer(storage) }

    @inline(never)
    private func lockContended() {
        // A thread that has parked once takes the lock as 2, not 1: other threads may still be parked on it, and
        // its release must wake them.
        var taken: UInt32 = 1
        while true {
            let pause = Atomic<Int>(0)  // a local line to read while backing off, never the lock's
            var delay = 1
            var deadline: UInt64 = 0
            while true {
                for _ in 0..<delay { _ = pause.load(ordering: .relaxed) }
                if word.pointee.load(ordering: .relaxed) == 0,
                    word.pointee.compareExchange(expected: 0, desired: taken, ordering: .acquiring).exchanged
                {
                    return
                }
                if delay < Self.maximumDelay {
                    delay *= 2
                    continue
                }
                // Bounded in time, not in reads: a debug build reads many times slower, and must not spin longer.
                let now = Self.monotonicNanoseconds()
                if deadline == 0 {
                    deadline = now + Self.spinNanoseconds
                } else if now >= deadline {
                    break
                }
            }
            taken = 2
            if ParkingLot.park(on: word.pointee, address: address) { return }
        }
    }

    // How long a thread spins before parking (far longer than any critical section here, far shorter than a
    // holder blocked in I/O), and the most back-off reads between two polls of the lock.
    private static var cacheLine: Int { 64 }
    private static var spinNanoseconds: UInt64 { 20_000 }
    private static var maximumDelay: Int { 256 }

    private static func monotonicNanoseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }
}

extension Locked: @unchecked Sendable where State: Sendable {}
