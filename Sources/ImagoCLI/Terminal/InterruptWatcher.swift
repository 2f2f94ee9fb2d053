import Dispatch
import ImagoCore

#if canImport(Glibc)
    import Glibc
#endif

/// Turns SIGINT (Ctrl-C) into a flag and a callback while a command runs, instead of killing the process, so the
/// command can stop cleanly (restore the cursor, flush caches, print a partial summary). Restores the default
/// handler when stopped.
final class InterruptWatcher: Sendable {
    private let source: Locked<DispatchSourceSignal?>
    private let flag = Locked(false)
    private let handlers = Locked<[@Sendable () -> Void]>([])

    init() {
        source = Locked(nil)
    }

    /// Starts watching; `onInterrupt` runs (on a private queue) at the first Ctrl-C.
    func start(onInterrupt: (@Sendable () -> Void)? = nil) {
        if let onInterrupt { handlers.withLock { $0.append(onInterrupt) } }
        signal(SIGINT, SIG_IGN)
        let signalSource = DispatchSource.makeSignalSource(signal: SIGINT, queue: DispatchQueue(label: "imago.sigint"))
        signalSource.setEventHandler { [self] in trigger() }
        signalSource.resume()
        source.withLock { $0 = signalSource }
    }

    /// Acts as if Ctrl-C had been pressed (tests, and programmatic cancellation).
    func trigger() {
        let first = flag.withLock { was -> Bool in
            defer { was = true }
            return !was
        }
        guard first else { return }
        for handler in handlers.withLock({ $0 }) { handler() }
    }

    /// Whether Ctrl-C was pressed.
    var isInterrupted: Bool { flag.withLock { $0 } }

    /// Stops watching and restores the default SIGINT behaviour.
    func stop() {
        source.withLock {
            $0?.cancel()
            $0 = nil
        }
        signal(SIGINT, SIG_DFL)
    }
}
