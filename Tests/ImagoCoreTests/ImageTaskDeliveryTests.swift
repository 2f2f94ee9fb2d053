import Foundation
import Testing

@testable import ImagoCore

@Suite struct ImageTaskDeliveryTests {
    /// Progress yielded to a stream while the consuming Swift task is being cancelled, whose cancellation handler
    /// calls `cancel()`: with the yield made under the task's lock, the yield waits for the consumer's status
    /// lock (held by the canceller) while the canceller waits for the task's lock, and both hang.
    @Test func cancellingAConsumerWhileProgressFlowsNeverDeadlocks() async throws {
        let rounds = 300
        let done = DispatchSemaphore(value: 0)
        Thread {
            let group = DispatchGroup()
            for round in 0..<rounds {
                let task = ImageTask(
                    id: round, request: ImageRequest(url: URL(string: "http://127.0.0.1/\(round).jpg")!),
                    handlers: .init())
                let consumer = Task {
                    await withTaskCancellationHandler {
                        var events = 0
                        for await _ in task.events { events += 1 }
                        return events
                    } onCancel: {
                        task.cancel()
                    }
                }
                DispatchQueue.global().async(group: group) {
                    for step in 0..<200 { task.deliverProgress(.init(completed: Int64(step), total: 200)) }
                }
                usleep(UInt32(round % 7) * 20)
                consumer.cancel()
            }
            group.wait()
            done.signal()
        }.start()
        // Then every round ends: no thread is left waiting on the other's lock
        #expect(done.wait(timeout: .now() + 60) == .success)
    }

    /// A task's own handlers (no callback queue) run after its lock is released, so one may read the task or
    /// cancel it; run under the lock, the first call back into the task would wait on the lock forever.
    @Test func handlersWithoutAQueueRunOutsideTheTaskLock() {
        let done = DispatchSemaphore(value: 0)
        let seen = Locked<[String]>([])
        Thread {
            let box = Locked<ImageTask?>(nil)
            var handlers = ImageTask.Handlers()
            handlers.progress = { progress in
                // Reading the task's state takes its lock
                let current = box.value?.progress.completed ?? -1
                seen.withLock { $0.append("progress \(progress.completed) read \(current)") }
                if progress.completed == 2 { box.value?.cancel() }
            }
            let task = ImageTask(
                id: 1, request: ImageRequest(url: URL(string: "http://127.0.0.1/a.jpg")!), handlers: handlers)
            box.withLock { $0 = task }
            for step in 1...3 { task.deliverProgress(.init(completed: Int64(step), total: 3)) }
            done.signal()
        }.start()
        // Then the handler ran for each step until it cancelled the task, and nothing hung
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(seen.value == ["progress 1 read 1", "progress 2 read 2"])
    }
}
