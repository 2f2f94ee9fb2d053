import ImagoCore

/// An async call started in a task of its own, so a test can check that it is still waiting, release what it waits
/// for and then await it.
///
/// ```swift
/// let flush = PendingCall { await pipeline.waitForPendingCacheWrites() }
/// try await Task.sleep(for: .milliseconds(100))
/// #expect(!flush.hasReturned)
/// gate.release()
/// await flush.value()
/// ```
public final class PendingCall: Sendable {
    private let returned: Locked<Bool>
    private let task: Task<Void, Never>

    /// Starts `call` at once.
    public init(_ call: @escaping @Sendable () async -> Void) {
        let returned = Locked(false)
        self.returned = returned
        task = Task {
            await call()
            returned.withLock { $0 = true }
        }
    }

    /// Whether the call has returned.
    public var hasReturned: Bool { returned.value }

    /// Waits until the call returns.
    public func value() async { await task.value }
}
