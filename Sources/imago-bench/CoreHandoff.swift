import Foundation
import Synchronization

/// How far apart the machine's two cores are right now: the time one cache line takes to go from one thread to
/// the other. On this 2-vCPU virtual machine it moves between ~45 ns (cores sharing a cache) and ~250 ns (cores
/// far apart) as the hypervisor places the vCPUs, and any contended lock pays it per line it moves.
enum CoreHandoff {
    /// Where a round ran: both measurements near, both far, or a placement change in between.
    enum Placement: String {
        case near, far, mixed
    }

    /// Below this, the two cores share a cache; at or above `farNanoseconds`, they do not.
    static let nearNanoseconds = 100.0
    static let farNanoseconds = 150.0

    /// Nanoseconds per hand-over of one cache line between two threads taking turns on one atomic.
    static func nanoseconds(handoffs: Int = 20_000) -> Double {
        final class Shared: Sendable { let turn = Atomic<Int>(0) }
        let shared = Shared()
        let elapsed = time {
            DispatchQueue.concurrentPerform(iterations: 2) { me in
                var next = me
                while next < handoffs {
                    while shared.turn.load(ordering: .acquiring) != next {}
                    shared.turn.store(next + 1, ordering: .releasing)
                    next += 2
                }
            }
        }
        return elapsed * 1e9 / Double(handoffs)
    }

    /// The placement of a round measured just before it (`before`) and just after it (`after`).
    static func placement(before: Double, after: Double) -> Placement {
        if max(before, after) < nearNanoseconds { return .near }
        if min(before, after) >= farNanoseconds { return .far }
        return .mixed
    }
}
