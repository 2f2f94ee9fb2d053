import Dispatch
import Foundation
import ImagoCore

#if canImport(Glibc)
    import Glibc
#endif

/// Tells a long-running command that the user wants it to stop: fired once by SIGINT (``SignalInterrupts``) or,
/// in tests, by calling ``fire()``. Thread-safe; handlers run on the firing thread, never under the lock.
package final class InterruptTrigger: Sendable {
    private struct State {
        var isFired = false
        var handlers: [@Sendable () -> Void] = []
    }
    private let state = Locked(State())

    /// A trigger that has not fired.
    package init() {}

    /// Whether it has fired.
    package var isFired: Bool { state.withLock { $0.isFired } }

    /// Fires: runs every handler once. Later calls do nothing.
    package func fire() {
        let handlers = state.withLock { s -> [@Sendable () -> Void] in
            guard !s.isFired else { return [] }
            s.isFired = true
            defer { s.handlers = [] }
            return s.handlers
        }
        for handler in handlers { handler() }
    }

    /// Runs `handler` when the trigger fires (at once if it already has).
    package func onFire(_ handler: @escaping @Sendable () -> Void) {
        let fired = state.withLock { s -> Bool in
            if !s.isFired { s.handlers.append(handler) }
            return s.isFired
        }
        if fired { handler() }
    }
}

/// Routes SIGINT to the triggers of the commands running in this process.
///
/// While at least one trigger is installed, SIGINT's default action (terminating the process) is replaced: the
/// signal is ignored (`signal(SIGINT, SIG_IGN)`) and a `DispatchSource` signal source fires every installed
/// trigger instead. When the last one is removed, the previous disposition is restored.
package enum SignalInterrupts {
    // @unchecked Sendable: the dispatch signal source (not Sendable on Linux) is only touched under the lock.
    private struct State: @unchecked Sendable {
        var next = 0
        var triggers: [Int: InterruptTrigger] = [:]
        var source: (any DispatchSourceSignal)?
        var previous: sighandler_t?
    }
    private static let state = Locked(State())

    /// Installs `trigger` to be fired by SIGINT; pass the returned token to ``remove(_:)``.
    package static func install(_ trigger: InterruptTrigger) -> Int {
        state.withLock { s in
            s.next += 1
            s.triggers[s.next] = trigger
            if s.source == nil {
                s.previous = signal(SIGINT, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
                source.setEventHandler {
                    let triggers = state.withLock { Array($0.triggers.values) }
                    for trigger in triggers { trigger.fire() }
                }
                source.resume()
                s.source = source
            }
            return s.next
        }
    }

    /// Uninstalls the trigger of `token`; the last removal restores SIGINT's previous disposition.
    package static func remove(_ token: Int) {
        state.withLock { s in
            s.triggers[token] = nil
            guard s.triggers.isEmpty, let source = s.source else { return }
            source.cancel()
            s.source = nil
            signal(SIGINT, s.previous ?? SIG_DFL)
            s.previous = nil
        }
    }
}
