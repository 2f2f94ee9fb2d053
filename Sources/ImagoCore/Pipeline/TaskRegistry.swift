/// The pipeline's tasks in flight (started, not yet finished or cancelled), for ``ImagePipeline/invalidate()``
/// and ``ImagePipeline/tasksInFlightCount``; once closed, it admits no task.
///
/// Sharded by task id: every task is added when it starts and removed when it ends, so with a thousand tasks
/// finishing at once one lock would be taken by each of them in turn; consecutive ids fall in different shards.
final class TaskRegistry: Sendable {
    private struct Shard {
        var tasks: [Int: ImageTask] = [:]
        var isClosed = false
    }

    private static let shardCount = 8
    private let shards: [Locked<Shard>] = (0..<TaskRegistry.shardCount).map { _ in Locked(Shard()) }

    private func shard(_ id: Int) -> Locked<Shard> { shards[id & (Self.shardCount - 1)] }

    /// Adds `task`; `false` when the registry is closed (the pipeline was invalidated).
    func insert(_ task: ImageTask) -> Bool {
        shard(task.id).withLock { shard in
            guard !shard.isClosed else { return false }
            shard.tasks[task.id] = task
            return true
        }
    }

    /// Removes the task with `id` (it ended).
    func remove(_ id: Int) {
        shard(id).withLock { _ = $0.tasks.removeValue(forKey: id) }
    }

    /// Closes every shard and returns the tasks that were in flight.
    func close() -> [ImageTask] {
        shards.flatMap { shard in
            shard.withLock { shard -> [ImageTask] in
                shard.isClosed = true
                defer { shard.tasks = [:] }
                return Array(shard.tasks.values)
            }
        }
    }

    /// Whether ``close()`` was called.
    var isClosed: Bool { shards[0].withLock { $0.isClosed } }

    /// How many tasks are in flight.
    var count: Int { shards.reduce(0) { total, shard in total + shard.withLock { $0.tasks.count } } }
}
