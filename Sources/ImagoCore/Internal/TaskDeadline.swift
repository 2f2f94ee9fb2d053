/// Waits for a task no longer than a deadline, leaving it running: a request that gives up on a render shared by
/// others (`imago serve --request-timeout`: the render's output is still cached for the retry), a server that
/// stops and will not wait on an exporter stuck on a collector that does not answer.
package enum TaskDeadline {
    /// `task`'s value, or `nil` when `timeout` passes first. The task is not cancelled either way.
    package static func value<Value: Sendable>(of task: Task<Value, Never>, within timeout: Duration) async -> Value? {
        let state = Locked(State<Value>())
        return await withCheckedContinuation { (continuation: CheckedContinuation<Value?, Never>) in
            state.withLock { $0.continuation = continuation }
            let timer = Task {
                try? await Task.sleep(for: timeout)
                state.withLock { $0.finish(nil) }?.resume(returning: nil)
            }
            Task {
                let value = await task.value
                timer.cancel()  // a sleeping timer ends at once
                state.withLock { $0.finish(value) }?.resume(returning: value)
            }
        }
    }

    /// Who resumes the continuation: the first to finish.
    private struct State<Value: Sendable> {
        var continuation: CheckedContinuation<Value?, Never>?

        /// The continuation to resume, the first time only.
        mutating func finish(_ value: Value?) -> CheckedContinuation<Value?, Never>? {
            defer { continuation = nil }
            return continuation
        }
    }
}
